"""Runs: a unit of agent work K can audit. A run has stable ids (session, task, run, sorting by
time), an immutable prompt and resolved configuration, a fixed directory in the agent's K tree,
append-only events and a transcript, deliverables in a known place, manifests of its sandbox and
of its artifacts, and guards K itself holds (the agent's writes limited to the run's workspace/
and deliverables/). The agent loop (kshell.agent) does the work; a run survives a crash (failed
with its reason after recovery, or resumed). See docs/runs.md.

    ctx = create_run_context("kgent.yaml", "Write a report", "runs/demo-001", state=computer.state)
    result = await run(computer, ctx)
"""

from kshell.runs.config import ConfigError, fingerprint, load_config, resolve_config
from kshell.runs.context import (
                                 STATES,
                                 RunContext,
                                 RunError,
                                 create_run_context,
                                 find_run,
                                 list_runs,
                                 open_run,
                                 resolve_sandbox_path,
                                 update_run_state,
)

__all__ = ["STATES", "ConfigError", "RunContext", "RunError", "create_run_context", "find_run", "fingerprint",
           "list_runs", "load_config", "open_run", "resolve_config", "resolve_sandbox_path", "update_run_state"]
