"""A run end to end with the scripted model (kshell.agent.models.ScriptedModel): the agent
researches in its workspace with delegated python3, writes its deliverable, tries to change its
own prompt and is refused by K, and finishes; run.json, events.jsonl, transcript.md and the
manifests agree. And the end's checks: a missing deliverable or a deletion (delete off) makes
the run review_required; a cancel stops a running run."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

from kshell.agent.messages import Message
from kshell.agent.models import ScriptedModel
from kshell.runs import create_run_context, open_run, update_run_state
from kshell.runs.runner import cancel_run, run
from tests.runs.runs_support import boot, events, text
from tests.runs.runs_support import run as run_async

REPORT = "# Sums\n\n1 + 2 = 3\n"
CONFIG = {"profile": "analyst", "agent": "alice", "deliverables": ["report.md"], "system": "Work carefully."}


def script(messages: list[Message]) -> dict[str, Any] | str:
    """Compute in the workspace, write the deliverable, poke at the prompt, finish."""
    results = [b for m in messages if m.role == "tool" for b in m.content]
    if not results:
        assert messages[0].role == "system" and "Work carefully." in messages[0].text
        return {"text": "Computing first.", "calls": [{"name": "shell", "arguments": {
            "command": "python3 -c 'open(\"sum.txt\", \"w\").write(str(1 + 2))' && cat sum.txt"}}]}
    if len(results) == 1:
        assert results[0]["output"] == "3", results
        return {"text": "Writing the report.", "calls": [
            {"name": "write_file", "arguments": {"path": "../deliverables/report.md", "content": REPORT}},
            {"id": "prompt", "name": "write_file", "arguments": {"path": "../prompt.md", "content": "Do nothing."}}]}
    prompt = next(r for r in results if r["call_id"] == "prompt")  # the two writes ran in parallel
    assert prompt["status"] == "error" and "Read-only file system" in prompt["output"], prompt
    return "The report is in deliverables/report.md."


def test_a_scripted_run_produces_its_deliverable(tmp_path: Path) -> None:
    async def main() -> None:
        async with boot(tmp_path) as computer:
            ctx = create_run_context(CONFIG, "Add 1 and 2; report.", "runs/sums", state=computer.state)
            seen: list[str] = []
            record = await run(computer, ctx, ScriptedModel(script), progress=seen.append)
            assert record["status"] == "completed" and record["failure_reason"] is None, record["failure_reason"]
            assert record["started_at"] and record["completed_at"] and record["worker"] is None
            assert seen[0] == "step 1: asking the model" and seen[-1] == "step 3: answered"
            assert [line.split(" ", 1)[1] for line in text(ctx, "logs/worker.log").splitlines()] == seen
            fs = ctx.fs()
            assert fs.read_file(ctx.path("deliverables/report.md")).decode() == REPORT
            assert text(ctx, "prompt.md") == "Add 1 and 2; report.\n"
            artifacts = json.loads(text(ctx, "artifact-manifest.json"))["files"]
            assert artifacts == [{"path": "report.md", "size": len(REPORT), "media_type": "text/markdown",
                                  "sha256": hashlib.sha256(REPORT.encode()).hexdigest()}]
            sandbox = [f["path"] for f in json.loads(text(ctx, "sandbox-manifest.json"))["files"]]
            assert sandbox == ["deliverables/report.md", "workspace/sum.txt"]
            log = events(ctx)
            states = [e["status"] for e in log if e["type"] == "run.state"]
            assert states == ["running", "waiting_for_tool", "running", "waiting_for_tool", "running", "completed"]
            assert [e["name"] for e in log if e["type"] == "tool.call"] == ["shell", "write_file", "write_file"]
            files = {(e["op"], e["path"]) for e in log if e["type"] == "file"}
            assert ("vfs.create", "workspace/sum.txt") in files  # python3's, through the agent's mount
            assert ("vfs.write", "deliverables/report.md") in files
            assert not any(p == "prompt.md" for _, p in files)
            by = {e["by"].split(" ")[0] for e in log if e["type"] == "file"}
            assert {"fuse", "sdk"} <= by, by  # the program's writes and the file tools' alike
            transcript = text(ctx, "transcript.md")
            assert transcript.index("## user") < transcript.index("Computing first.") < \
                transcript.index("## tool `shell` (ok)") < transcript.index("Writing the report.") < \
                transcript.index("## tool `write_file` (error)") < transcript.index("The report is in")
            # the run's record survives the computer: read again from the state
            assert open_run(computer.state, ctx.run_id).record == record

    run_async(main)


def test_a_missing_deliverable_or_a_deletion_sends_the_run_to_review(tmp_path: Path) -> None:
    def lazy(messages: list[Message]) -> dict[str, Any] | str:
        if messages[-1].role == "user" and messages[-1].text == "Revise: write report.md now.":
            return {"calls": [{"name": "write_file", "arguments": {"path": "../deliverables/report.md",
                                                                   "content": "# Late\n"}}]}
        if messages[-1].role == "tool" and messages[-1].content[0]["name"] == "write_file":
            return "Written."
        if not any(m.role == "tool" for m in messages):
            return {"calls": [{"name": "shell", "arguments": {"command": "echo draft > draft.md && rm draft.md"}}]}
        return "I wrote nothing."

    async def main() -> None:
        async with boot(tmp_path) as computer:
            ctx = create_run_context({**CONFIG, "delete": True}, "Report.", "runs/lazy", state=computer.state)
            record = await run(computer, ctx, ScriptedModel(lazy))
            assert record["status"] == "review_required"
            assert record["review_reason"] == "missing deliverables: report.md"
            # a reviewer's verdict, then a resume with the revision's instructions
            update_run_state(ctx, "revision_required", "report.md is missing")
            record = await run(computer, ctx, ScriptedModel(lazy), message="Revise: write report.md now.")
            assert record["status"] == "completed" and record["attempt"] == 2
            assert "## user (attempt 2)\n\nRevise: write report.md now." in text(ctx, "transcript.md")
            deleting = create_run_context({**CONFIG, "deliverables": []}, "Tidy.", "runs/tidy", state=computer.state)
            record = await run(computer, deleting, ScriptedModel(lazy))
            assert record["status"] == "review_required"
            assert record["review_reason"] == "deleted with delete off: workspace/draft.md"
            allowed = create_run_context({**CONFIG, "deliverables": [], "delete": True}, "Tidy.", "runs/tidy2",
                                         state=computer.state)
            assert (await run(computer, allowed, ScriptedModel(lazy)))["status"] == "completed"

    run_async(main)


def test_cancel_stops_a_running_run(tmp_path: Path) -> None:
    def slow(messages: list[Message]) -> dict[str, Any] | str:
        return {"calls": [{"name": "shell", "arguments": {"command": "sleep 100"}}]}

    async def main() -> None:
        async with boot(tmp_path) as computer:
            ctx = create_run_context(CONFIG, "Wait.", "runs/slow", state=computer.state)
            waiting = asyncio.Event()
            task = asyncio.create_task(run(computer, ctx, ScriptedModel(slow),
                                           progress=lambda line: "running shell" in line and waiting.set()))
            await waiting.wait()
            assert cancel_run(computer.state, ctx.run_id) == "stop requested"
            record = await task
            assert record["status"] == "cancelled" and record["failure_reason"] is None
            pending = create_run_context(CONFIG, "Never run.", "runs/never", state=computer.state)
            assert cancel_run(computer.state, pending.run_id) == "cancelled"
            assert open_run(computer.state, pending.run_id).status == "cancelled"

    run_async(main)
