"""The suite's own rules, read from its source (issue 36): no assertion on elapsed time outside a
hang guard, and no sleep that orders events. A test that sleeps and then looks hopes that
something happened meanwhile; on a loaded machine it did not, and the test fails (or passes
without having seen the thing). A test waits for the event itself: a poll on what it can observe
(a process row, a file, output seen) that fails only past a bound no working system reaches.

What the checks accept without a word: a sleep inside a `while` loop that has a bound (a poll:
the loop looks again until its condition holds, and fails past a hang bound: it names a clock,
a deadline, HANG or a timeout; tests/hang.py's poll and apoll are such loops), an
`asyncio.sleep(0)` (one turn of the event loop, a deterministic step, not time passing), an
assertion on elapsed time whose bound is a hang bound (`HANG`, a `timeout`, a `deadline`).
Everything else is named below with its reason. (A helper that returns an elapsed time, as the
coherence tests' `seen_within`, is not followed: their bound is the kernel's cache time.)"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).resolve().parent

# (file under tests/, enclosing function): why its sleep is not a synchronisation
SLEEPS_ALLOWED = {
    ("agent/crash_child.py", "main"): "the child waits to be killed: the sleep is the program under test",
    ("agent/provider.py", "_answer"): "a scripted model that streams its reply slowly: the delay is the behaviour",
    ("crash/test_crash.py", "_run_and_kill"): "a SIGKILL at a random moment: the moment is the fuzzed input",
    ("fuse/test_daemon_crash.py", "test_sigkill_of_the_daemon_mid_storm_loses_nothing_fsynced"):
        "a SIGKILL at a random moment of a write storm: the moment is the fuzzed input",
    ("fuse/test_loop.py", "feeder"):
        "a write that comes after the wait began (a sleep never returns early): the delay is the input",
    ("fuse/test_loop.py", "feed_after"):
        "a write that comes after the wait began (a sleep never returns early): the delay is the input",
    ("kshell/test_job_control.py", "test_a_stopped_job_makes_no_progress_until_continued"):
        "reads again and again that nothing moves while parked: samples an invariant, orders nothing",
    ("ssh/test_job_bounds.py", "test_an_agents_cpu_across_its_sessions_is_bounded_and_another_agent_is_answered"):
        "the window a CPU bound is measured over (a bound from above: a loaded machine only uses less)",
    ("ssh/test_process_recovery.py", "test_sigkill_rounds_leave_every_process_accounted_for"):
        "a SIGKILL at a random moment after the jobs started: the moment is the fuzzed input",
    ("sdk/test_parity.py", "decide_when_asked"):
        "an operator thread that allows what is asked until the test stops it: a service, not a wait",
    ("tools/test_net.py", "do_GET"): "a server that answers late, past curl's --max-time: the delay is the input",
    ("vfs/child_processes.py", "hold_read_txn"): "the child holds its transaction until killed: the program under test",
    ("vfs/child_processes.py", "hold_unlinked_file"): "the child holds its file until killed: the program under test",
}

# (file under tests/, enclosing function): why its assertion on elapsed time holds on any machine
TIMING_ALLOWED = {
    ("fuse/test_coherence.py", "visible_within"):
        "a third of the kernel's 30 s cache time: seen within it, the change was pushed, not expired",
}

CLOCKS = {"monotonic", "perf_counter", "time", "time_ns", "monotonic_ns", "perf_counter_ns"}
ELAPSED_NAMES = {"elapsed", "took", "duration", "seconds_taken", "wall"}
HANG_WORDS = ("hang", "timeout", "deadline")


def sources(root: Path = TESTS) -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(root.rglob("*.py")):
        if path.resolve() == Path(__file__).resolve():
            continue
        yield path.relative_to(root).as_posix(), ast.parse(path.read_text(), str(path))


def walk(node: ast.AST, function: str = "<module>", loops: tuple[ast.AST, ...] = ()
         ) -> Iterator[tuple[ast.AST, str, tuple[ast.AST, ...]]]:
    """Every node with the name of the function it is in and the loops around it there."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            name = child.name if not isinstance(child, ast.Lambda) else function
            yield child, function, loops
            yield from walk(child, name, ())
        elif isinstance(child, ast.While | ast.For | ast.AsyncFor):
            yield child, function, loops
            yield from walk(child, function, (*loops, child))
        else:
            yield child, function, loops
            yield from walk(child, function, loops)


def is_sleep(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    return (isinstance(f, ast.Attribute) and f.attr == "sleep") or (isinstance(f, ast.Name) and f.id == "sleep")


def is_zero(node: ast.Call) -> bool:
    return bool(node.args) and isinstance(node.args[0], ast.Constant) and node.args[0].value == 0


def _is_clock(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in CLOCKS
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "time")


def _mentions_clock(node: ast.AST) -> bool:
    """A clock read or an elapsed-time name in the expression itself, not in the arguments of
    another call (`prune(before=time.time_ns() + ...) == 9` compares a count, not a time)."""
    if _is_clock(node) or (isinstance(node, ast.Name) and node.id in ELAPSED_NAMES):
        return True
    if isinstance(node, ast.Call):
        return False
    return any(_mentions_clock(child) for child in ast.iter_child_nodes(node))


def reads_clock(node: ast.AST) -> bool:
    """An ordering comparison (<, <=, >, >=) with a clock or an elapsed time on one side."""
    for n in ast.walk(node):
        if isinstance(n, ast.Compare) and any(isinstance(op, ast.Lt | ast.LtE | ast.Gt | ast.GtE) for op in n.ops) \
                and any(_mentions_clock(side) for side in (n.left, *n.comparators)):
            return True
    return False


def hang_bound(node: ast.AST) -> bool:
    """The assertion's bound is a hang bound: a name or attribute that says so."""
    for n in ast.walk(node):
        word = n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else ""
        if any(w in word.lower() for w in HANG_WORDS):
            return True
    return False


def bounded(loop: ast.While) -> bool:
    """The poll loop fails past a bound: it reads a clock or names a deadline, HANG or a timeout."""
    return hang_bound(loop) or any(_is_clock(n) for n in ast.walk(loop))


def ordering_sleeps(used: set[tuple[str, str]] | None = None, root: Path = TESTS) -> list[str]:
    """Sleeps outside a poll's loop, other than SLEEPS_ALLOWED's (`used`: the entries met)."""
    used = set() if used is None else used
    found = []
    for name, tree in sources(root):
        for node, function, loops in walk(tree):
            if not is_sleep(node) or is_zero(node):  # type: ignore[arg-type]
                continue
            if any(isinstance(loop, ast.While) and bounded(loop) for loop in loops):
                continue
            if (name, function) in SLEEPS_ALLOWED:
                used.add((name, function))
                continue
            found.append(f"tests/{name}:{node.lineno} in {function}: {ast.unparse(node)}")  # type: ignore[attr-defined]
    return found


def timing_assertions(used: set[tuple[str, str]] | None = None, root: Path = TESTS) -> list[str]:
    """Assertions on elapsed time without a hang bound, other than TIMING_ALLOWED's."""
    used = set() if used is None else used
    found = []
    for name, tree in sources(root):
        for node, function, loops in walk(tree):
            if not isinstance(node, ast.Assert) or not reads_clock(node.test):
                continue
            if hang_bound(node.test) or any(isinstance(loop, ast.While) and hang_bound(loop) for loop in loops):
                continue
            if (name, function) in TIMING_ALLOWED:
                used.add((name, function))
                continue
            found.append(f"tests/{name}:{node.lineno} in {function}: {ast.unparse(node.test)}")
    return found


def test_no_sleep_orders_events() -> None:
    """Every sleep in tests/ is a poll's pause, the program under test, or named with its reason
    (and every name on the list still has its sleep: a stale entry would excuse the next one)."""
    used: set[tuple[str, str]] = set()
    assert ordering_sleeps(used) == []
    assert set(SLEEPS_ALLOWED) - used == set()


def test_no_assertion_on_elapsed_time_outside_a_hang_guard() -> None:
    used: set[tuple[str, str]] = set()
    assert timing_assertions(used) == []
    assert set(TIMING_ALLOWED) - used == set()


def test_the_checks_see_what_they_forbid(tmp_path: Path) -> None:
    """A sleep before a look, an unbounded poll and a figure on elapsed time are found; a
    bounded poll with its hang guard, a yield to the event loop and a hang guard are not."""
    (tmp_path / "test_bad.py").write_text(
        "import asyncio, time\n"
        "def test_sleeps_then_looks():\n    start()\n    time.sleep(0.5)\n    assert seen()\n"
        "def test_polls_for_ever():\n    while not seen():\n        time.sleep(0.05)\n"
        "def test_a_figure():\n    t0 = time.monotonic()\n    run()\n    assert time.monotonic() - t0 < 1.0\n")
    (tmp_path / "test_good.py").write_text(
        "import asyncio, time\n"
        "def test_polls():\n    deadline = time.monotonic() + HANG\n"
        "    while not seen():\n        assert time.monotonic() < deadline\n        time.sleep(0.05)\n"
        "async def test_yields():\n    await asyncio.sleep(0)\n"
        "def test_guarded():\n    t0 = time.monotonic()\n    run()\n    assert time.monotonic() - t0 < HANG\n"
        "    assert prune(before=time.time_ns() + 10) == 9\n")
    assert ordering_sleeps(root=tmp_path) == ["tests/test_bad.py:4 in test_sleeps_then_looks: time.sleep(0.5)",
                                              "tests/test_bad.py:8 in test_polls_for_ever: time.sleep(0.05)"]
    assert timing_assertions(root=tmp_path) == ["tests/test_bad.py:12 in test_a_figure: time.monotonic() - t0 < 1.0"]
