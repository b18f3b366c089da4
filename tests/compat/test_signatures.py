"""The adapters against the real upstream packages (`e2b`, `daytona`, installed by the `test`
extra): every mirrored method has the upstream parameters (names, kinds, defaults), every result
type the upstream fields (names, defaults), every enum the upstream members, so that a release
of either SDK that changes one of them fails here."""

from __future__ import annotations

import dataclasses
import enum
import inspect
from typing import Any

import pytest

try:

    import e2b as e2b_upstream
except ImportError as e:  # a missing package fails, never skips
    raise ImportError(f"{e}: install the test extra (pip install -e '.[test]'), which brings e2b and daytona") from e


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





def _e2b_methods() -> list[tuple[type, type, str]]:
    from e2b.sandbox_sync.commands.command import Commands
    from e2b.sandbox_sync.commands.command_handle import CommandHandle
    from e2b.sandbox_sync.filesystem.filesystem import Filesystem
    from e2b.sandbox_sync.filesystem.watch_handle import WatchHandle

    table = [
        (k_e2b.Sandbox, e2b_upstream.Sandbox,
         ["create", "connect", "_cls_connect_sandbox", "kill", "_cls_kill", "is_running", "get_info",
          "_cls_get_info", "set_timeout", "_cls_set_timeout", "list", "fork", "_cls_fork_sandbox", "pause",
          "beta_pause", "sandbox_id", "commands", "files", "pty", "git"]),
        (k_e2b.Commands, Commands, ["run", "list", "kill", "send_stdin", "stream_input", "close_stdin", "connect"]),
        (k_e2b.CommandHandle, CommandHandle, ["pid", "wait", "kill", "send_stdin", "close_stdin", "disconnect"]),
        (k_e2b.Filesystem, Filesystem, ["read", "write", "write_files", "list", "exists", "get_info", "remove",
                                        "rename", "make_dir", "watch_dir"]),
        (k_e2b.WatchHandle, WatchHandle, ["get_new_events", "stop"]),
    ]
    return [(ours, theirs, name) for ours, theirs, names in table for name in names]


@pytest.mark.parametrize(("ours", "theirs", "name"), _e2b_methods(),
                         ids=lambda v: v if isinstance(v, str) else v.__name__)
def test_e2b_method_matches_upstream(ours: type, theirs: type, name: str) -> None:
    assert shape(ours, name) == shape(theirs, name)


@pytest.mark.parametrize("name", ["CommandResult", "CommandExitException", "EntryInfo", "WriteInfo",
                                  "FilesystemEvent", "ProcessInfo", "SandboxInfo"])
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
