"""The adapters against the real upstream packages (`e2b`, `daytona`, `computesdk`, installed
by the `test` extra): every mirrored method has the upstream parameters (names, kinds, defaults), every result
type the upstream fields (names, defaults), every enum the upstream members, so that a release
of either SDK that changes one of them fails here."""

from __future__ import annotations

import dataclasses
import enum
import inspect
from typing import Any

import pytest

try:
    import computesdk as computesdk_upstream
    import daytona as daytona_upstream
    import e2b as e2b_upstream
except ImportError as e:  # a missing package fails, never skips
    raise ImportError(f"{e}: install the test extra (pip install -e '.[test]'), which brings e2b, daytona and "
                      "computesdk") from e


from kshell.compat import daytona as k_daytona
from kshell.compat import e2b as k_e2b

MISSING = "<required>"


def shape(cls: type, name: str) -> Any:
    """What a caller sees of `cls.name`: a property, or (name, kind, default) per parameter."""
    raw = inspect.getattr_static(cls, name)
    if isinstance(raw, property):
        return "property"
    if hasattr(raw, "method"):  # E2B's class_method_variant (and ours): the instance form
        fn = raw.method
    elif isinstance(raw, (classmethod, staticmethod)):
        fn = getattr(cls, name)
    else:
        fn = raw
    return [(p.name, p.kind.name, MISSING if p.default is p.empty else p.default)
            for p in inspect.signature(fn).parameters.values()]


def fields(cls: type) -> list[tuple[str, Any]]:
    """Field names and defaults of a dataclass or a pydantic model (the generated
    `additional_properties` bag of Daytona's API models left out)."""
    if dataclasses.is_dataclass(cls):
        out = []
        for f in dataclasses.fields(cls):
            default = (f.default if f.default is not dataclasses.MISSING else
                       f.default_factory() if f.default_factory is not dataclasses.MISSING else MISSING)
            out.append((f.name, default))
        return out
    from pydantic_core import PydanticUndefined

    return [(name, MISSING if info.default is PydanticUndefined else info.default)
            for name, info in cls.model_fields.items() if name != "additional_properties"]


def members(cls: type[enum.Enum]) -> list[tuple[str, Any]]:
    return [(m.name, m.value) for m in cls]



E2B_GIT_CALLS = ["clone", "init", "remote_add", "remote_get", "status", "branches", "create_branch",
                 "checkout_branch", "delete_branch", "add", "commit", "reset", "restore", "push", "pull", "set_config",
                 "get_config", "configure_user", "dangerously_authenticate"]


def _e2b_methods() -> list[tuple[type, type, str]]:
    from e2b.sandbox_sync.commands.command import Commands
    from e2b.sandbox_sync.commands.command_handle import CommandHandle
    from e2b.sandbox_sync.commands.pty import Pty
    from e2b.sandbox_sync.filesystem.filesystem import Filesystem
    from e2b.sandbox_sync.filesystem.watch_handle import WatchHandle
    from e2b.sandbox_sync.git import Git

    from kshell.compat import e2b_git

    table = [
        (k_e2b.Sandbox, e2b_upstream.Sandbox,
         ["create", "connect", "_cls_connect_sandbox", "kill", "_cls_kill", "is_running", "get_info",
          "_cls_get_info", "set_timeout", "_cls_set_timeout", "list", "fork", "_cls_fork_sandbox", "pause",
          "beta_pause", "sandbox_id", "commands", "files", "pty", "git", "get_host", "upload_url", "download_url",
          "get_metrics", "create_snapshot", "update_network", "get_mcp_url", "get_mcp_token"]),
        (k_e2b.SandboxPaginator, e2b_upstream.SandboxPaginator, ["next_items"]),
        (k_e2b.Commands, Commands, ["run", "list", "kill", "send_stdin", "stream_input", "close_stdin", "connect"]),
        (k_e2b.CommandHandle, CommandHandle, ["pid", "wait", "kill", "send_stdin", "close_stdin", "disconnect"]),
        (k_e2b.Filesystem, Filesystem, ["read", "write", "write_files", "list", "exists", "get_info", "remove",
                                        "rename", "make_dir", "watch_dir"]),
        (k_e2b.WatchHandle, WatchHandle, ["get_new_events", "stop"]),
        (k_e2b.Pty, Pty, ["create", "connect", "send_stdin", "stream_input", "resize", "kill"]),
        (e2b_git.Git, Git, E2B_GIT_CALLS),
    ]
    return [(ours, theirs, name) for ours, theirs, names in table for name in names]


@pytest.mark.parametrize(("ours", "theirs", "name"), _e2b_methods(),
                         ids=lambda v: v if isinstance(v, str) else v.__name__)
def test_e2b_method_matches_upstream(ours: type, theirs: type, name: str) -> None:
    assert shape(ours, name) == shape(theirs, name)


@pytest.mark.parametrize("name", ["CommandResult", "CommandExitException", "EntryInfo", "WriteInfo",
                                  "FilesystemEvent", "ProcessInfo", "SandboxInfo", "PtySize", "GitStatus",
                                  "GitFileStatus", "GitBranches"])
def test_e2b_result_fields_match_upstream(name: str) -> None:
    assert fields(getattr(k_e2b, name)) == fields(getattr(e2b_upstream, name))


@pytest.mark.parametrize("name", ["FileType", "FilesystemEventType"])
def test_e2b_enums_match_upstream(name: str) -> None:
    assert members(getattr(k_e2b, name)) == members(getattr(e2b_upstream, name))


def test_e2b_sandbox_state_and_error_tree_match_upstream() -> None:
    from e2b.sandbox.sandbox_api import SandboxState

    assert members(k_e2b.SandboxState) == members(SandboxState)
    for name in ["TimeoutException", "NotFoundException", "SandboxNotFoundException", "InvalidArgumentException",
                 "CommandExitException"]:
        ours, theirs = getattr(k_e2b, name), getattr(e2b_upstream, name)
        assert [c.__name__ for c in ours.__mro__ if c.__name__ in {t.__name__ for t in theirs.__mro__}] == [
            c.__name__ for c in theirs.__mro__ if c.__name__ in {o.__name__ for o in ours.__mro__}]


GIT_CALLS = ["clone", "init", "add", "commit", "status", "branches", "create_branch", "checkout_branch",
             "delete_branch", "pull", "push", "configure_user", "set_config", "get_config", "remote_add", "remote_get",
             "reset", "restore", "remotes", "dangerously_authenticate"]


def _daytona_methods() -> list[tuple[type, type, str]]:
    from daytona._sync.filesystem import FileSystem
    from daytona._sync.git import Git
    from daytona._sync.process import Process
    from daytona.handle.pty_handle import PtyHandle

    table = [
        (k_daytona.Daytona, daytona_upstream.Daytona, ["__init__", "create", "get", "list", "start", "stop", "delete"]),
        (k_daytona.Sandbox, daytona_upstream.Sandbox,
         ["delete", "start", "stop", "fork", "get_user_home_dir", "get_work_dir", "get_user_root_dir", "set_labels",
          "refresh_data", "create_ssh_access", "get_preview_link", "create_lsp_server", "update_network_settings",
          "upload_url", "download_url", "archive", "pause"]),
        (k_daytona.Process, Process,
         ["exec", "code_run", "create_session", "get_session", "list_sessions", "delete_session",
          "execute_session_command", "get_session_command", "get_session_command_logs",
          "get_session_command_logs_async", "send_session_command_input", "create_pty_session",
          "connect_pty_session", "get_entrypoint_logs", "list_pty_sessions", "get_pty_session_info",
          "kill_pty_session", "resize_pty_session"]),
        (k_daytona.Git, Git, GIT_CALLS),
        (k_daytona.PtyHandle, PtyHandle,
         ["session_id", "exit_code", "error", "is_connected", "wait_for_connection", "send_input", "resize", "kill",
          "wait", "disconnect", "__iter__"]),
        (k_daytona.FileSystem, FileSystem,
         ["create_folder", "delete_file", "download_file", "download_files", "upload_file", "upload_files",
          "list_files", "get_file_info", "move_files", "find_files", "search_files", "replace_in_files",
          "set_file_permissions"]),
    ]
    return [(ours, theirs, name) for ours, theirs, names in table for name in names]


@pytest.mark.parametrize(("ours", "theirs", "name"), _daytona_methods(),
                         ids=lambda v: v if isinstance(v, str) else v.__name__)
def test_daytona_method_matches_upstream(ours: type, theirs: type, name: str) -> None:
    assert shape(ours, name) == shape(theirs, name)


def _daytona_models() -> list[tuple[type, type]]:
    import daytona._sync.filesystem as fs
    import daytona._sync.process as process

    names = ["DaytonaConfig", "CreateSandboxBaseParams", "CreateSandboxFromSnapshotParams", "CreateSandboxFromImageParams", "ExecuteResponse",
             "ExecutionArtifacts", "CodeRunParams", "SessionExecuteRequest", "SessionExecuteResponse", "FileUpload",
             "FileDownloadRequest", "FileDownloadResponse"]
    pairs = [(getattr(k_daytona, n), getattr(daytona_upstream, n)) for n in names]
    pairs += [(getattr(k_daytona, n), getattr(fs, n)) for n in ["FileInfo", "Match", "ReplaceResult",
                                                                 "SearchFilesResponse"]]
    pairs += [(getattr(k_daytona, n), getattr(process, n)) for n in ["Session", "Command"]]
    from daytona.common import pty
    from daytona_toolbox_api_client import PtySessionInfo

    pairs += [(k_daytona.PtySize, pty.PtySize), (k_daytona.PtyResult, pty.PtyResult),
              (k_daytona.PtySessionInfo, PtySessionInfo)]
    from daytona_toolbox_api_client import (
        FileStatus,
        GitRemote,
        GitStatus,
        ListBranchResponse,
        ListRemotesResponse,
    )

    pairs += [(k_daytona.GitStatus, GitStatus), (k_daytona.FileStatus, FileStatus),
              (k_daytona.ListBranchResponse, ListBranchResponse), (k_daytona.GitRemote, GitRemote),
              (k_daytona.ListRemotesResponse, ListRemotesResponse)]
    return pairs


@pytest.mark.parametrize(("ours", "theirs"), _daytona_models(), ids=lambda v: v.__name__)
def test_daytona_model_fields_match_upstream(ours: type, theirs: type) -> None:
    assert fields(ours) == fields(theirs)


def test_daytona_sandbox_properties_are_upstream_fields_and_errors_keep_their_tree() -> None:
    for name in ["id", "name", "user", "env", "labels", "state"]:
        assert name in daytona_upstream.Sandbox.model_fields
    for name in ["process", "fs", "git"]:
        assert hasattr(daytona_upstream.Sandbox, name) or name in daytona_upstream.Sandbox.model_fields or name in (
            getattr(daytona_upstream.Sandbox, "__private_attributes__", {}))
    assert issubclass(k_daytona.DaytonaNotFoundError, k_daytona.DaytonaError)
    assert issubclass(daytona_upstream.DaytonaNotFoundError, daytona_upstream.DaytonaError)
    assert shape(k_daytona.DaytonaError, "__init__") == shape(daytona_upstream.DaytonaError, "__init__")
    assert {s.value for s in k_daytona.SandboxState} <= {s.value for s in daytona_upstream.SandboxState}


def _computesdk_methods() -> list[tuple[type, type, str]]:
    from computesdk.compute import SandboxResource

    from kshell.compat import computesdk as k_computesdk

    table = [
        (k_computesdk.Compute, computesdk_upstream.Compute, ["__init__", "sandbox", "close"]),
        (k_computesdk.SandboxResource, SandboxResource, ["create", "get_by_id", "find", "find_or_create"]),
        (k_computesdk.Sandbox, computesdk_upstream.Sandbox,
         ["sandbox_id", "provider", "filesystem", "name", "namespace", "metadata", "run_command", "run_code",
          "get_info", "get_url", "destroy", "extend", "health", "create_terminal", "create_watcher", "start_server",
          "create_session_token", "create_magic_link", "create_child_sandbox"]),
        (k_computesdk.FileSystem, computesdk_upstream.FileSystem,
         ["read_file", "write_file", "readdir", "mkdir", "exists", "remove", "batch_write"]),
    ]
    return [(ours, theirs, name) for ours, theirs, names in table for name in names]


@pytest.mark.parametrize(("ours", "theirs", "name"), _computesdk_methods(),
                         ids=lambda v: v if isinstance(v, str) else v.__name__)
def test_computesdk_method_matches_upstream(ours: type, theirs: type, name: str) -> None:
    assert shape(ours, name) == shape(theirs, name)
    ours_fn, theirs_fn = inspect.getattr_static(ours, name), inspect.getattr_static(theirs, name)
    assert inspect.iscoroutinefunction(ours_fn) == inspect.iscoroutinefunction(theirs_fn)  # async where upstream is


@pytest.mark.parametrize("name", ["CommandResult", "CodeResult", "FileEntry", "SandboxInfo", "RunCommandOptions",
                                  "CreateSandboxOptions"])
def test_computesdk_result_fields_match_upstream(name: str) -> None:
    from kshell.compat import computesdk as k_computesdk

    assert fields(getattr(k_computesdk, name)) == fields(getattr(computesdk_upstream, name))


def test_computesdk_enums_match_upstream() -> None:
    from kshell.compat import computesdk as k_computesdk

    for name in ["FileType", "SandboxStatus"]:
        assert members(getattr(k_computesdk, name)) == members(getattr(computesdk_upstream, name))


def kind(cls: type, name: str) -> str:
    """How a caller calls `cls.name`: awaited, iterated with `async for`, or plainly."""
    raw = inspect.getattr_static(cls, name)
    if isinstance(raw, property):
        return "property"
    fn = getattr(raw, "method", None) or getattr(raw, "fn", None) or raw  # a class_method_variant: its instance form
    fn = fn.__func__ if isinstance(fn, (classmethod, staticmethod)) else fn
    return "async-iterator" if inspect.isasyncgenfunction(fn) else "awaited" if inspect.iscoroutinefunction(
        fn) else "plain"


def _e2b_async_methods() -> list[tuple[type, type, str]]:
    from e2b.sandbox_async.commands.command import Commands
    from e2b.sandbox_async.commands.command_handle import AsyncCommandHandle
    from e2b.sandbox_async.commands.pty import Pty
    from e2b.sandbox_async.filesystem.filesystem import Filesystem
    from e2b.sandbox_async.filesystem.watch_handle import AsyncWatchHandle
    from e2b.sandbox_async.git import Git

    from kshell.compat import e2b_async as k_async

    table = [
        (k_async.AsyncSandbox, e2b_upstream.AsyncSandbox,
         ["create", "connect", "_cls_connect_sandbox", "kill", "_cls_kill", "is_running", "get_info",
          "_cls_get_info", "set_timeout", "_cls_set_timeout", "list", "fork", "_cls_fork_sandbox", "pause",
          "beta_pause", "sandbox_id", "commands", "files", "pty", "git", "get_host", "upload_url", "download_url",
          "get_metrics", "create_snapshot", "update_network", "get_mcp_url", "get_mcp_token", "__aenter__"]),
        (k_async.AsyncCommands, Commands,
         ["run", "list", "kill", "send_stdin", "stream_input", "close_stdin", "connect"]),
        (k_async.AsyncCommandHandle, AsyncCommandHandle,
         ["pid", "stdout", "stderr", "exit_code", "error", "wait", "kill", "send_stdin", "close_stdin",
          "disconnect"]),
        (k_async.AsyncCommandInputHandle, e2b_upstream.AsyncCommandInputHandle, ["send", "close"]),
        (k_async.AsyncFilesystem, Filesystem, ["read", "write", "write_files", "list", "exists", "get_info",
                                               "remove", "rename", "make_dir", "watch_dir"]),
        (k_async.AsyncWatchHandle, AsyncWatchHandle, ["stop"]),
        (k_async.AsyncSandboxPaginator, e2b_upstream.AsyncSandboxPaginator, ["has_next", "next_items"]),
        (k_async.AsyncPty, Pty, ["create", "connect", "send_stdin", "stream_input", "resize", "kill"]),
        (k_async.AsyncGit, Git, E2B_GIT_CALLS),
    ]
    return [(ours, theirs, name) for ours, theirs, names in table for name in names]


@pytest.mark.parametrize(("ours", "theirs", "name"), _e2b_async_methods(),
                         ids=lambda v: v if isinstance(v, str) else v.__name__)
def test_e2b_async_method_matches_upstream(ours: type, theirs: type, name: str) -> None:
    if not isinstance(inspect.getattr_static(theirs, name), property):
        assert shape(ours, name) == shape(theirs, name)
    assert kind(ours, name) == kind(theirs, name)  # awaited where upstream's is, plain where it is not


def test_e2b_exports_the_async_client_under_upstream_names() -> None:
    for name in ["AsyncSandbox", "AsyncCommandHandle", "AsyncCommandInputHandle", "AsyncWatchHandle",
                 "AsyncSandboxPaginator"]:
        assert hasattr(e2b_upstream, name) and hasattr(k_e2b, name)


def _daytona_async_methods() -> list[tuple[type, type, str]]:
    from daytona._async.filesystem import AsyncFileSystem
    from daytona._async.git import AsyncGit
    from daytona._async.process import AsyncProcess
    from daytona.handle.async_pty_handle import AsyncPtyHandle

    from kshell.compat import daytona_async as k_async

    table = [
        (k_async.AsyncDaytona, daytona_upstream.AsyncDaytona,
         ["__init__", "create", "get", "list", "start", "stop", "delete", "close", "__aenter__", "__aexit__"]),
        (k_async.AsyncSandbox, daytona_upstream.AsyncSandbox,
         ["delete", "start", "stop", "fork", "get_user_home_dir", "get_work_dir", "get_user_root_dir", "set_labels",
          "refresh_data", "create_ssh_access", "get_preview_link", "create_lsp_server", "update_network_settings",
          "upload_url", "download_url", "archive", "pause"]),
        (k_async.AsyncProcess, AsyncProcess,
         ["exec", "code_run", "create_session", "get_session", "list_sessions", "delete_session",
          "execute_session_command", "get_session_command", "get_session_command_logs",
          "get_session_command_logs_async", "send_session_command_input", "create_pty_session",
          "connect_pty_session", "get_entrypoint_logs", "list_pty_sessions", "get_pty_session_info",
          "kill_pty_session", "resize_pty_session"]),
        (k_async.AsyncGit, AsyncGit, GIT_CALLS),
        (k_async.AsyncPtyHandle, AsyncPtyHandle,
         ["session_id", "exit_code", "error", "is_connected", "wait_for_connection", "send_input", "resize", "kill",
          "wait", "disconnect"]),
        (k_async.AsyncFileSystem, AsyncFileSystem,
         ["create_folder", "delete_file", "download_file", "download_files", "upload_file", "upload_files",
          "list_files", "get_file_info", "move_files", "find_files", "search_files", "replace_in_files",
          "set_file_permissions"]),
    ]
    return [(ours, theirs, name) for ours, theirs, names in table for name in names]


@pytest.mark.parametrize(("ours", "theirs", "name"), _daytona_async_methods(),
                         ids=lambda v: v if isinstance(v, str) else v.__name__)
def test_daytona_async_method_matches_upstream(ours: type, theirs: type, name: str) -> None:
    assert shape(ours, name) == shape(theirs, name)
    assert kind(ours, name) == kind(theirs, name)


def test_daytona_git_file_states_are_upstream_status_members() -> None:
    from daytona.common.git import GitCommitResponse
    from daytona_toolbox_api_client.models.status import Status

    assert set(members(k_daytona.GitFileStatus)) <= set(members(Status))
    assert shape(k_daytona.GitCommitResponse, "__init__") == shape(GitCommitResponse, "__init__")
