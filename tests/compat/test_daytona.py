"""kshell.compat.daytona on real states: exec's combined output, code_run, sessions that keep
their shell state (K durable sessions), async session commands with input and logs, the file
calls (uploads from bytes and local files, downloads, find, search, replace, permissions),
stop and start of a durable sandbox, and the refusals of what K cannot do."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kshell.compat import core
from kshell.compat.daytona import (
    CreateSandboxFromSnapshotParams,
    Daytona,
    DaytonaError,
    DaytonaNotFoundError,
    FileDownloadRequest,
    FileUpload,
    SandboxState,
    SessionExecuteRequest,
    Unsupported,
)


@pytest.fixture
def client() -> Daytona:
    return Daytona()


@pytest.fixture
def sandbox(client: Daytona) -> Iterator[object]:
    made = client.create(CreateSandboxFromSnapshotParams(env_vars={"GREETING": "hi"}, labels={"team": "k"},
                                                         name="box"))
    yield made
    client.delete(made)


def test_exec_returns_combined_output_and_status_without_raising(sandbox) -> None:  # noqa: ANN001
    response = sandbox.process.exec("echo $GREETING; echo oops >&2; echo bye; exit 4")
    assert (response.exit_code, response.result) == (4, "hi\noops\nbye\n")
    assert response.artifacts.stdout == response.result
    assert sandbox.process.exec("pwd; cd /; X=1", cwd="/tmp").result == "/tmp\n"
    assert sandbox.process.exec("pwd; echo ${X-unset}").result == "/home/user\nunset\n"
    assert sandbox.process.exec("echo $A$B", env={"A": "1", "B": "2"}).result == "12\n"
    code = sandbox.process.code_run("print(6 * 7)")  # python3 is a program K delegates: none is set up here
    assert code.exit_code == 127 and "python3: command not found" in code.result


def test_sessions_keep_their_shell_state_and_async_commands_take_input(sandbox) -> None:  # noqa: ANN001
    process = sandbox.process
    process.create_session("work")
    with pytest.raises(DaytonaError, match="already exists"):
        process.create_session("work")
    first = process.execute_session_command("work", SessionExecuteRequest(command="mkdir -p w && cd w && V=5"))
    second = process.execute_session_command("work", SessionExecuteRequest(command="echo $V $PWD; echo e >&2"))
    assert (second.exit_code, second.stdout, second.stderr, second.output) == (0, "5 /home/user/w\n", "e\n",
                                                                              "5 /home/user/w\ne\n")
    assert int(first.cmd_id) < int(second.cmd_id)  # ids are K process rows
    started = process.execute_session_command("work", SessionExecuteRequest(command="read -r a; echo got $a; exit 3",
                                                                            run_async=True))
    assert started.exit_code is None
    process.send_session_command_input("work", started.cmd_id, "input\n")
    out: list[str] = []
    process.get_session_command_logs_async("work", started.cmd_id, out.append, out.append)
    assert "".join(out) == "got input\n"
    assert process.get_session_command("work", started.cmd_id).exit_code == 3
    assert process.get_session_command_logs("work", started.cmd_id).stdout == "got input\n"
    with pytest.raises(DaytonaNotFoundError):
        process.send_session_command_input("work", started.cmd_id, "late\n")  # it ended
    sessions = process.list_sessions()
    assert [s.session_id for s in sessions] == ["work"] and len(sessions[0].commands) == 3
    process.delete_session("work")
    with pytest.raises(DaytonaNotFoundError):
        process.get_session("work")


def test_file_calls(sandbox, tmp_path: Path) -> None:  # noqa: ANN001
    fs = sandbox.fs
    fs.create_folder("src", "750")
    assert fs.get_file_info("src").permissions == "750" and fs.get_file_info("src").is_dir
    local = tmp_path / "local.txt"
    local.write_text("alpha\nbeta gamma\n")
    fs.upload_file(str(local), "src/a.txt")  # a path: the local file's contents
    fs.upload_files([FileUpload(source=b"gamma ray\n", destination="src/b.md")])
    assert fs.download_file("src/a.txt") == b"alpha\nbeta gamma\n"
    fs.download_file("src/b.md", str(tmp_path / "got.md"))
    assert (tmp_path / "got.md").read_bytes() == b"gamma ray\n"
    answers = fs.download_files([FileDownloadRequest(source="src/a.txt"), FileDownloadRequest(source="src/none")])
    assert answers[0].result == b"alpha\nbeta gamma\n" and "No such file" in answers[1].error
    assert [(m.file, m.line, m.content) for m in fs.find_files("src", "gam+a")] == [
        ("/home/user/src/a.txt", 2, "beta gamma"), ("/home/user/src/b.md", 1, "gamma ray")]
    assert fs.search_files("src", "*.md").files == ["/home/user/src/b.md"]
    results = fs.replace_in_files(["src/a.txt", "src/none"], "beta", "BETA")
    assert [r.success for r in results] == [True, False]
    assert fs.download_file("src/a.txt") == b"alpha\nBETA gamma\n"
    assert [f.name for f in fs.list_files("src")] == ["a.txt", "b.md"]
    fs.set_file_permissions("src/a.txt", mode="600")
    assert fs.get_file_info("src/a.txt").mode == "-rw-------"
    with pytest.raises(Unsupported, match="cannot give its files to another user"):
        fs.set_file_permissions("src/a.txt", owner="root")
    fs.move_files("src/b.md", "src/c.md")
    with pytest.raises(DaytonaError, match="Directory not empty"):
        fs.delete_file("src")
    fs.delete_file("src", recursive=True)
    with pytest.raises(DaytonaNotFoundError):
        fs.get_file_info("src")


def test_client_lifecycle_get_list_stop_start(client: Daytona, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(core.ROOT_ENV, str(tmp_path / "sandboxes"))
    sandbox = client.create(CreateSandboxFromSnapshotParams(name="durable", labels={"k": "v"}))
    try:
        assert client.get("durable").id == sandbox.id == client.get(sandbox.id).id
        assert [s.id for s in client.list({"labels": {"k": "v"}})] == [sandbox.id]
        sandbox.fs.upload_file(b"kept", "kept.txt")
        sandbox.set_labels({"k": "w"})
        client.stop(sandbox)
        assert sandbox.state == SandboxState.STOPPED
        client.start(sandbox)
        assert sandbox.state == SandboxState.STARTED and sandbox.fs.download_file("kept.txt") == b"kept"
        assert sandbox.labels == {"k": "w"} and sandbox.name == "durable"  # kept beside the state
    finally:
        client.delete(sandbox)
    assert sandbox.state == SandboxState.DESTROYED and not (tmp_path / "sandboxes" / sandbox.id).exists()
    with pytest.raises(DaytonaNotFoundError):
        client.get(sandbox.id)


def test_what_k_cannot_do_is_refused_at_the_call_site(client: Daytona, sandbox) -> None:  # noqa: ANN001
    with pytest.raises(Unsupported, match="memory sandbox has no stopped state"):
        sandbox.stop()
    with pytest.raises(Unsupported, match="create_ssh_access"):
        sandbox.create_ssh_access()
    with pytest.raises(Unsupported, match="create_lsp_server"):
        sandbox.create_lsp_server("python", "/home/user")
    with pytest.raises(Unsupported, match="get_preview_link"):
        sandbox.get_preview_link(3000)
    with pytest.raises(Unsupported, match="upload_url"):
        sandbox.upload_url("/home/user/x")
    with pytest.raises(Unsupported, match="update_network_settings"):
        sandbox.update_network_settings(network_block_all=True)
    with pytest.raises(Unsupported, match=r"Git.clone\(insecure_skip_tls=True\)"):
        sandbox.git.clone("/home/user/x.git", "x", insecure_skip_tls=True)
    with pytest.raises(Unsupported, match="os_user='root'"):
        client.create(CreateSandboxFromSnapshotParams(os_user="root"))


def test_fork_is_a_sandbox_on_a_k_fork(sandbox) -> None:  # noqa: ANN001
    sandbox.fs.upload_file(b"base", "base.txt")
    child = sandbox.fork(name="child")
    assert child.name == "child" and child.id != sandbox.id
    child.process.create_session("s")  # a session in the fork
    child.process.execute_session_command("s", SessionExecuteRequest(command="cat base.txt > copy.txt"))
    assert child.fs.download_file("copy.txt") == b"base"
    with pytest.raises(DaytonaNotFoundError):
        sandbox.fs.download_file("copy.txt")
    child.delete()
    assert sandbox.process.exec("cat base.txt").result == "base"
