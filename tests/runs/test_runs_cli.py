"""`komputer run` and `komputer runs` as programs, the model the loopback test provider
(tests/agent/provider.py, OpenAI Chat Completions): progress lines, list, show, cancel; a
`komputer run` SIGKILLed in the middle of a step is `failed` with its reason after recovery, and
`runs resume` finishes it, its transcript and events going on; an invalid config makes nothing."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from kfs.kstate import KState
from kfs.runtime import procs
from kshell.runs import list_runs, open_run
from tests.agent import transcripts as t
from tests.agent.provider import Provider
from tests.agent.test_recovery import wait_for
from tests.runs.runs_support import ROOT, events, run, text

# the tree under test first; what the caller's path had after it
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def config(tmp_path: Path, provider: Provider, **extra: str) -> Path:
    path = tmp_path / "kgent.yaml"
    lines = ["profile: reporter", "agent: alice", "deliverables: [report.md]", "programs: none", "model:",
             "  protocol: openai-compatible", "  model: llama", f"  base_url: {provider.url}",
             *(f"{k}: {v}" for k, v in extra.items())]
    path.write_text("\n".join(lines) + "\n")
    return path


async def komputer(state: Path, *args: str) -> tuple[int, str, str]:
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kshell.cli", "--state", str(state), *args, stdin=subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=ENV)
    out, err = await child.communicate()
    return child.returncode or 0, out.decode(), err.decode()


WRITE = ("w1", "write_file", {"path": "../deliverables/report.md", "content": "# Report\n"})


def test_run_streams_plain_progress_lines_then_list_and_show(tmp_path: Path) -> None:
    async def main() -> None:
        async with Provider() as provider:
            provider.replies += [{"events": t.chat(text="Writing.", calls=[WRITE])}, {"events": t.chat(text="Done.")}]
            state = tmp_path / "state"
            status, out, err = await komputer(state, "run", "--config", str(config(tmp_path, provider)),
                                              "--prompt", "Write the report.", "--sandbox", "runs/demo-001",
                                              "--run-id", "r-1", "--task-id", "t-1", "--session-id", "s-1")
            assert status == 0, err
            assert out == "run r-1: completed\n  /home/alice/runs/demo-001\n"
            assert err.splitlines() == ["run r-1 in /home/alice/runs/demo-001", "run r-1: step 1: asking the model",
                                        "run r-1: step 1: running write_file", "run r-1: step 1: write_file ok",
                                        "run r-1: step 2: asking the model", "run r-1: step 2: answered"]
            assert provider.requests[0].json["messages"][0]["role"] == "system"
            status, out, _ = await komputer(state, "runs")
            assert status == 0 and out.splitlines()[1].split()[:3] == ["r-1", "completed", "alice"]
            status, out, _ = await komputer(state, "runs", "show", "r-1")
            record = json.loads(out)
            assert (record["session_id"], record["task_id"], record["profile_id"]) == ("s-1", "t-1", "reporter")
            status, _, err = await komputer(state, "runs", "show", "r-9")
            assert status == 1 and err == "komputer runs show: no run r-9 (komputer runs list shows them)\n"
            status, _, err = await komputer(state, "runs", "cancel", "r-1")
            assert status == 1 and err == "komputer runs cancel: run r-1 is completed: it cannot become cancelled\n"

    run(main)


def test_an_invalid_config_is_refused_with_nothing_created(tmp_path: Path) -> None:
    async def main() -> None:
        bad = tmp_path / "kgent.yaml"
        bad.write_text("profile: p\nmodel:\n  protocol: openai-compatible\n  model: m\n  base_url: http://127.0.0.1:9\n"
                       "deliverables: report.md\n")
        state = tmp_path / "state"
        status, out, err = await komputer(state, "run", "--config", str(bad), "--prompt", "p", "--sandbox", "runs/x")
        assert status == 2 and out == ""
        assert err == f"komputer run: {bad}:6: deliverables: expected a list of paths under deliverables/\n"
        assert not state.exists()  # not even the state

    run(main)


def test_a_run_killed_mid_step_fails_after_recovery_then_resume_finishes_it(tmp_path: Path) -> None:
    state_dir = tmp_path / "state"

    async def main() -> None:
        async with Provider() as provider:
            provider.replies += [{"events": t.chat(text="Waiting first.", calls=[
                ("slow", "shell", {"command": "sleep 100"})])}]
            path = config(tmp_path, provider)
            child = subprocess.Popen(
                [sys.executable, "-m", "kshell.cli", "--state", str(state_dir), "run", "--config", str(path),
                 "--prompt", "Write the report.", "--sandbox", "runs/crash", "--run-id", "r-crash"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)

            def ready(state: KState) -> bool:  # waiting for its tool, the tool's process running
                runs = list_runs(state) if state else []
                return bool(runs) and runs[0]["status"] == "waiting_for_tool" and any(
                    "sleep 100" in r["cmd"] for r in procs.rows(state, agent="alice", live=True))

            try:
                await asyncio.to_thread(wait_for, state_dir, child, ready)
            finally:
                child.send_signal(signal.SIGKILL)
                child.wait()
            status, out, _ = await komputer(state_dir, "runs", "list")
            assert out.splitlines()[1].split()[:2] == ["r-crash", "failed"]
            with KState(state_dir) as state:
                ctx = open_run(state, "r-crash")
                assert ctx.record["failure_reason"].startswith(f"its worker (pid {child.pid}) ended while the run was "
                                                               "waiting_for_tool")
            provider.replies += [{"events": t.chat(text="The wait was cut; writing now.", calls=[WRITE])},
                                 {"events": t.chat(text="Done after the crash.")}]
            status, out, err = await komputer(state_dir, "runs", "resume", "r-crash")
            assert status == 0, err
            assert out == "run r-crash: completed\n  /home/alice/runs/crash\n"
            assert "run r-crash: resuming (attempt 2)" in err
            # the model was told the killed call's result is uncertain, and the conversation went on
            resumed = provider.requests[1].json["messages"]
            assert resumed[-1]["role"] == "tool" and resumed[-1]["content"].startswith("Uncertain: K stopped")
            with KState(state_dir) as state:
                ctx = open_run(state, "r-crash")
                assert ctx.record["attempt"] == 2 and ctx.record["status"] == "completed"
                states = [e["status"] for e in events(ctx) if e["type"] == "run.state"]
                assert states == ["running", "waiting_for_tool", "failed", "running", "waiting_for_tool", "running",
                                  "completed"]
                transcript = text(ctx, "transcript.md")
                assert transcript.index("Waiting first.") < transcript.index("writing now") < \
                    transcript.index("Done after the crash.")
                assert ctx.fs().read_file(ctx.path("deliverables/report.md")) == b"# Report\n"
                assert ctx.fs().exists(ctx.path("archive/attempt-1/sandbox-manifest.json"))
                log = text(ctx, "logs/worker.log")
                assert log.index("step 1: running shell") < log.index("resuming (attempt 2)") < log.index("answered")

    run(main)


def test_on_a_terminal_the_progress_is_one_line_rewritten(tmp_path: Path) -> None:
    import pty

    async def main() -> None:
        async with Provider() as provider:
            provider.replies += [{"events": t.chat(text="Writing.", calls=[WRITE])}, {"events": t.chat(text="Done.")}]
            master, slave = pty.openpty()
            try:
                child = subprocess.Popen(
                    [sys.executable, "-m", "kshell.cli", "--state", str(tmp_path / "state"), "run", "--config",
                     str(config(tmp_path, provider)), "--prompt", "p", "--sandbox", "runs/tty", "--run-id", "r-tty"],
                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave, env=ENV)
                out, _ = await asyncio.to_thread(child.communicate)
                os.close(slave)
                slave = -1
                seen = b""
                while True:
                    try:
                        piece = os.read(master, 65536)
                    except OSError:  # EIO: the terminal's other side is closed and drained
                        break
                    if not piece:
                        break
                    seen += piece
            finally:
                os.close(master)
                if slave >= 0:
                    os.close(slave)
            assert child.returncode == 0 and out.decode() == "run r-tty: completed\n  /home/alice/runs/tty\n"
            text_seen = seen.decode()
            assert "run r-tty: step" not in text_seen  # no plain lines on a terminal
            lines = text_seen.split("\r\x1b[K")
            assert any(line.startswith(("| step 1: asking the model", "/ step 1: asking the model")) for line in lines)
            assert any("step 2: answered (" in line for line in lines) and text_seen.count("\n") <= 2

    run(main)
