"""The ten acceptance criteria of a run, one test each: ids; a deterministic directory; the four
sub-folders; prompt and resolved config copied; run.json written; state updated durably; paths
resolved through the guards; writes outside the sandbox refused (the K shell, delegated python3,
the loop's file tools); both manifests; no unrestricted file-system access."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from kfs.kstate import KState
from kshell.agent import ToolExecutionError, computer_tools
from kshell.runs import (
    ConfigError,
    RunError,
    create_run_context,
    fingerprint,
    load_config,
    open_run,
    resolve_config,
    resolve_sandbox_path,
    update_run_state,
)
from kshell.runs.context import FILES, FOLDERS
from kshell.runs.guards import apply_scope, write_manifests
from tests.runs.runs_support import boot, events, run, text

CONFIG = {"profile": "writer", "agent": "alice", "deliverables": ["report.md"], "system": "Be brief."}
LAYOUT = sorted([*FILES, *FOLDERS])


def make(state: KState, sandbox: str = "runs/demo-001", **ids: str) -> object:
    return create_run_context(CONFIG, "Write the report.\n", sandbox, state=state, **ids)


def test_ids_are_present_given_or_new_and_sort_by_time(state: KState) -> None:
    first = make(state, "runs/a")
    second = make(state, "runs/b")
    for ctx in (first, second):
        record = json.loads(text(ctx, "run.json"))
        assert record["run_id"].startswith("run-") and record["session_id"].startswith("ses-")
        assert record["task_id"].startswith("task-")
        assert json.loads(text(ctx, "session.json"))["session_id"] == record["session_id"]
        assert yaml.safe_load(text(ctx, "task.yaml"))["task_id"] == record["task_id"]
    assert sorted([second.run_id, first.run_id]) == [first.run_id, second.run_id]
    given = make(state, "runs/c", session_id="s-1", task_id="t-1", run_id="r-1")
    assert (given.session_id, given.task_id, given.run_id) == ("s-1", "t-1", "r-1")
    with pytest.raises(RunError, match="run r-1 exists already"):
        make(state, "runs/d", run_id="r-1")
    with pytest.raises(RunError, match="run id '../x'"):
        make(state, "runs/e", run_id="../x")


def test_the_directory_is_deterministic(state: KState) -> None:
    one, two = make(state, "runs/one"), make(state, "runs/two")
    fs = one.fs()
    assert sorted(fs.readdir(one.sandbox)) == LAYOUT == sorted(fs.readdir(two.sandbox))
    assert one.sandbox == f"{one.home}/runs/one"
    with pytest.raises(RunError, match="exists and is not an empty folder"):
        make(state, "runs/one")
    with pytest.raises(RunError, match="must be a folder under the agent's home"):
        make(state, "../bob/runs/x")


def test_the_four_sub_folders(state: KState) -> None:
    ctx = make(state)
    fs = ctx.fs()
    for name in ("workspace", "deliverables", "archive", "logs"):
        assert fs.stat(ctx.path(name)).is_dir
    assert fs.stat(ctx.workspace).uid == ctx.uid and fs.stat(ctx.deliverables).uid == ctx.uid
    assert fs.stat(ctx.path("archive")).uid == 0  # K's, as the records are


def test_prompt_and_resolved_config_are_copied_read_only(state: KState, tmp_path: Path) -> None:
    ctx = make(state)
    assert text(ctx, "prompt.md") == "Write the report.\n"
    copied = yaml.safe_load(text(ctx, "config.yaml"))
    assert copied == resolve_config(CONFIG) and copied["delete"] is False and copied["manifest"]["max_files"] > 0
    assert json.loads(text(ctx, "run.json"))["config_fingerprint"] == fingerprint(copied) == \
        "sha256:" + hashlib.sha256(json.dumps(copied, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    assert "Be brief." in text(ctx, "effective-system-prompt.md") and ctx.workspace in text(ctx, "effective-system-prompt.md")
    for name in ("prompt.md", "config.yaml", "effective-system-prompt.md"):
        assert ctx.fs().stat(ctx.path(name)).mode & 0o777 == 0o444
    # the fingerprint changes exactly when the resolved config does: defaults spelt out or keys
    # reordered change nothing; one setting does
    (tmp_path / "a.yaml").write_text("agent: alice\nprofile: writer\nsystem: Be brief.\ndeliverables: [report.md]\n")
    (tmp_path / "b.yaml").write_text("profile: writer\nagent: alice\ndelete: false\nsystem: Be brief.\n"
                                     "deliverables: [./report.md]\nmanifest: {max_files: 20000}\n")
    assert fingerprint(load_config(str(tmp_path / "a.yaml"))) == fingerprint(load_config(str(tmp_path / "b.yaml"))) \
        == fingerprint(copied)
    assert fingerprint(resolve_config({**CONFIG, "delete": True})) != fingerprint(copied)


def test_run_json_is_written_with_every_field(state: KState) -> None:
    ctx = make(state)
    record = json.loads(text(ctx, "run.json"))
    for field in ("session_id", "task_id", "run_id", "profile_id", "config_fingerprint", "status", "created_at",
                  "updated_at", "started_at", "completed_at", "failure_reason"):
        assert field in record
    assert record["status"] == "pending" and record["profile_id"] == "writer"
    assert record["started_at"] is None and record["completed_at"] is None and record["failure_reason"] is None
    assert [e["type"] for e in events(ctx)] == ["run.created"]


def test_state_is_updated_durably_as_it_changes(tmp_path: Path) -> None:
    path = tmp_path / "state"
    with KState(path, create=True) as state:
        ctx = make(state)
        run_id = ctx.run_id
        update_run_state(ctx, "running")
        update_run_state(ctx, "waiting_for_tool")
        with pytest.raises(RunError, match="is waiting_for_tool: it cannot become revision_required"):
            update_run_state(ctx, "revision_required")
        update_run_state(ctx, "failed", "the model's provider is down")
    with KState(path) as state:  # another opening of the state: what was written is there
        again = open_run(state, run_id)
        record = again.record
        assert record["status"] == "failed" and record["failure_reason"] == "the model's provider is down"
        assert record["started_at"] is not None and record["completed_at"] is not None
        changes = [(e["from"], e["status"]) for e in events(again) if e["type"] == "run.state"]
        assert changes == [("pending", "running"), ("running", "waiting_for_tool"), ("waiting_for_tool", "failed")]
        update_run_state(again, "running")  # a resume takes a failed run back
        assert open_run(state, run_id).record["failure_reason"] is None


def test_paths_are_resolved_through_the_guards(state: KState) -> None:
    ctx = make(state)
    fs = ctx.fs()
    assert resolve_sandbox_path(ctx, "src/main.py") == f"{ctx.workspace}/src/main.py"
    assert resolve_sandbox_path(ctx, "../deliverables/report.md") == f"{ctx.deliverables}/report.md"
    assert resolve_sandbox_path(ctx, f"{ctx.deliverables}/a/b") == f"{ctx.deliverables}/a/b"
    fs.symlink(ctx.home, ctx.path("workspace/home"))  # a link out of the sandbox
    fs.symlink("../deliverables", ctx.path("workspace/out"))
    assert resolve_sandbox_path(ctx, "out/x.md") == f"{ctx.deliverables}/x.md"
    for escape in ("../prompt.md", "../../x", "/etc/passwd", "~/.bashrc", "home/secret", "src/../../run.json"):
        with pytest.raises(PermissionError, match="outside the run's sandbox"):
            resolve_sandbox_path(ctx, escape)


def test_writes_outside_the_sandbox_are_refused_by_shell_python_and_file_tools(tmp_path: Path) -> None:
    async def main() -> None:
        async with boot(tmp_path) as computer:
            ctx = make(computer.state)
            apply_scope(ctx)
            before = {n: text(ctx, n) for n in ("prompt.md", "config.yaml", "run.json")}
            session = await computer.login("alice", mode="full")  # asks for full: the agent's limited mode wins
            await session.exec(f"cd {ctx.workspace}")
            shell = await session.exec("echo x > ../prompt.md; echo x > ../run.json; echo x > ~/escape; "
                                       "echo x > ../../demo-002; ln -s ../config.yaml l && echo x > l; "
                                       "echo ok > inside; echo ok > ../deliverables/out.md")
            assert shell.stderr.decode().count("Read-only file system") == 5, shell.stderr
            python = await session.exec("python3 -c \"import sys\nfor p in ['../prompt.md', '../run.json', "
                                        "'/home/alice/escape2', '../workspace/../config.yaml']:\n"
                                        "    try: open(p, 'w').write('x'); print('wrote', p)\n"
                                        "    except OSError as e: print(e.errno, p)\n"
                                        "open('py-inside', 'w').write('ok')\"")
            assert python.status == 0, python.stderr
            assert python.text.splitlines() == ["30 ../prompt.md", "30 ../run.json", "30 /home/alice/escape2",
                                                "30 ../workspace/../config.yaml"]
            tools = {t.name: t for t in computer_tools(session)}
            for path in ("../prompt.md", "../run.json", "~/escape3", f"{ctx.sandbox}/logs/x"):
                with pytest.raises(ToolExecutionError, match="Read-only file system"):
                    await tools["write_file"].run({"path": path, "content": "x"})
            with pytest.raises(ToolExecutionError, match="Read-only file system"):
                await tools["edit_file"].run({"path": "../config.yaml", "old_text": "writer", "new_text": "w"})
            assert await tools["write_file"].run({"path": "tool-inside", "content": "ok"}) == \
                "wrote 2 bytes to tool-inside"
            assert {n: text(ctx, n) for n in before} == before
            assert not ctx.fs().exists(f"{ctx.home}/escape") and not ctx.fs().exists(f"{ctx.home}/runs/demo-002")
            assert sorted(ctx.fs().readdir(ctx.workspace)) == ["inside", "l", "py-inside", "tool-inside"]
            assert ctx.fs().readdir(ctx.deliverables) == ["out.md"]
            await session.close()

    run(main)


def test_both_manifests_list_path_size_sha256_and_media_type_bounded(state: KState) -> None:
    ctx = make(state)
    fs = ctx.fs()
    fs.write_file(ctx.path("deliverables/report.md"), "# Report\n")
    fs.mkdir(ctx.path("deliverables/data"))
    fs.write_file(ctx.path("deliverables/data/table.csv"), "a,b\n1,2\n")
    fs.write_file(ctx.path("workspace/notes.json"), "{}")
    sandbox, artifacts = write_manifests(ctx)
    sha = lambda b: hashlib.sha256(b).hexdigest()  # noqa: E731
    assert artifacts["files"] == [
        {"path": "data/table.csv", "size": 8, "sha256": sha(b"a,b\n1,2\n"), "media_type": "text/csv"},
        {"path": "report.md", "size": 9, "sha256": sha(b"# Report\n"), "media_type": "text/markdown"}]
    assert [f["path"] for f in sandbox["files"]] == ["deliverables/data/table.csv", "deliverables/report.md",
                                                     "workspace/notes.json"]
    assert json.loads(text(ctx, "artifact-manifest.json"))["files"] == artifacts["files"]
    assert json.loads(text(ctx, "sandbox-manifest.json"))["files"] == sandbox["files"]
    # bounded: past max_files the scan stops and says so; past max_hash_bytes no hash is taken
    bounded = create_run_context({**CONFIG, "manifest": {"max_files": 2, "max_hash_bytes": 9}}, "p", "runs/b",
                                 state=state)
    for i in range(5):
        bounded.fs().write_file(bounded.path(f"deliverables/f{i}.md"), "0123456789"[: 5 + i])
    _, limited = write_manifests(bounded)
    assert limited["truncated"] is True and len(limited["files"]) == 2
    assert sum(f["sha256"] is not None for f in limited["files"]) == 1


def test_the_model_has_no_unrestricted_file_system_access(tmp_path: Path) -> None:
    """Every way the model reaches files goes through the agent's session view (kshell.view:
    the shell, agent.fs, SFTP, the agent's mount that delegated programs see), whose policy is
    limited to the run's two folders, whatever mode a front end asks for."""
    from kshell.view import SessionSpec, open_view

    async def main() -> None:
        async with boot(tmp_path) as computer:
            ctx = make(computer.state)
            assert apply_scope(ctx)["scope"] == [ctx.workspace, ctx.deliverables]
            for front in ("sdk", "sftp", "mount", "ssh exec"):
                view = open_view(computer.state, SessionSpec(agent="alice", front=front, mode="full"))
                assert view.policy is not None and view.policy.mode == "limited"
                assert view.policy.allowed == (ctx.workspace, ctx.deliverables)
            session = await computer.login("alice", mode="full")
            result = await session.exec("echo x > /tmp/t; echo x > /home/alice/t; mkdir ~/.ssh; "
                                        "python3 -c \"open('/tmp/t2', 'w')\"; echo x > /etc/k-run-test")
            assert result.stderr.decode().count("Read-only file system") >= 4, result.stderr
            assert "limited mode (writes only under " + f"{ctx.workspace}, {ctx.deliverables})" in result.stderr.decode()
            for path in ("/tmp/t", "/home/alice/t", "/home/alice/.ssh", "/etc/k-run-test"):
                assert not ctx.fs().exists(path)
            await session.close()

    run(main)


def test_an_invalid_config_names_file_and_line_and_makes_nothing(tmp_path: Path, state: KState) -> None:
    cases = {
        "profile: p\nagent: alice\n  model: x\n": ":3: not valid YAML",
        "profile: p\nmodel:\n  protocol: carrier-pigeon\n  model: m\n": ":3: model.protocol: expected one of",
        "profile: p\n\ndeliverables: [../../etc/passwd]\n": ":3: deliverables: ../../etc/passwd: not a path",
        "profile: p\nstep_limit: 3\n": ":2: unknown setting 'step_limit'",
        "- a list\n": ": expected a mapping of settings",
    }
    for i, (body, message) in enumerate(cases.items()):
        path = tmp_path / f"k{i}.yaml"
        path.write_text(body)
        with pytest.raises(ConfigError) as e:
            create_run_context(str(path), "p", f"runs/bad{i}", state=state)
        assert str(e.value).startswith(str(path)) and message in str(e.value), str(e.value)
    with pytest.raises(ConfigError, match="No such file or directory"):
        create_run_context(str(tmp_path / "missing.yaml"), "p", "runs/x", state=state)
    from kfs.agents.records import find_agent
    from kshell.runs import list_runs

    assert list_runs(state) == [] and find_agent(state, "alice") is None  # not even the agent
