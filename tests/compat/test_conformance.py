"""What every flavour must do alike, run on the native SDK and on each adapter (drivers.py):
repeated waits, callbacks that fire with nobody waiting, a callback that raises, a start that
fails, the sandbox's end while a wait is in flight, and two handles to one sandbox agreeing on
its processes (K's process table is the one registry)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from drivers import FLAVOURS

from kfs.runtime import procs

HANG = 120.0  # only a hang fails: never a speed claim


@pytest.fixture(params=list(FLAVOURS))
def flavour(request: pytest.FixtureRequest) -> Any:
    if request.param == "e2b-remote":  # the adapter over a served appliance
        return FLAVOURS[request.param](request.getfixturevalue("appliance"))
    return FLAVOURS[request.param]()


@pytest.fixture
def sandbox(flavour: Any) -> Iterator[Any]:
    made = flavour.create()
    yield made
    flavour.destroy(made)


def signalled() -> tuple[threading.Event, Any]:
    """An event set by the first stdout chunk, and the callback that sets it."""
    event = threading.Event()
    return event, lambda chunk: event.set()


def live(flavour: Any, sandbox: Any) -> set[int]:
    return set(flavour.pids(sandbox))


def test_repeated_waits_give_the_same_result(flavour: Any, sandbox: Any) -> None:
    handle = flavour.start(sandbox, "echo out; exit 3")
    first = flavour.wait(handle)
    assert first == ("out\n", 3)
    assert flavour.wait(handle) == first == flavour.wait(handle)
    assert flavour.pid(handle) not in live(flavour, sandbox)  # an ended process is gone from the list
    row = procs.get(flavour.state(sandbox), flavour.pid(handle))
    assert row is not None and row["status"] == 3  # the pid is K's process row


def test_callbacks_fire_with_nobody_waiting_and_kill_ends_the_process(flavour: Any, sandbox: Any) -> None:
    started, on_stdout = signalled()
    handle = flavour.start(sandbox, "echo ready; sleep 600", on_stdout=on_stdout)
    assert started.wait(HANG)  # delivered while nobody waits
    pid = flavour.pid(handle)
    assert pid in live(flavour, sandbox)
    assert flavour.kill(sandbox, pid) is True
    out, status = flavour.wait(handle)
    assert out == "ready\n" and pid not in live(flavour, sandbox)
    assert flavour.kill(sandbox, pid) is False  # gone: nothing to kill


def test_a_callback_that_raises_fails_its_handle_and_ends_the_process(flavour: Any, sandbox: Any) -> None:
    def refuse(chunk: str) -> None:
        raise RuntimeError(f"callback says no to {chunk!r}")

    handle = flavour.start(sandbox, "echo x; sleep 600", on_stdout=refuse)
    with pytest.raises(Exception) as caught:
        flavour.wait(handle)
    assert flavour.failure(caught.value) == "callback"
    assert flavour.pid(handle) not in live(flavour, sandbox)


def test_a_start_that_fails_leaves_no_session_or_process(flavour: Any, sandbox: Any) -> None:
    state = flavour.state(sandbox)
    from kfs.agents.sessions import list_sessions

    before = {record.name for record, _ in list_sessions(state)}
    with pytest.raises(Exception) as caught:
        flavour.start_failing(sandbox)
    assert flavour.failure(caught.value) == "invalid"
    assert {record.name for record, _ in list_sessions(state)} == before
    assert live(flavour, sandbox) == set()
    assert flavour.wait(flavour.start(sandbox, "echo still here")) == ("still here\n", 0)


def test_destroying_the_sandbox_ends_a_wait_in_flight(flavour: Any) -> None:
    sandbox = flavour.create()
    started, on_stdout = signalled()
    handle = flavour.start(sandbox, "echo up; sleep 600", on_stdout=on_stdout)
    assert started.wait(HANG)
    outcome: list[BaseException | tuple[str, int]] = []

    def waiter() -> None:
        try:
            outcome.append(flavour.wait(handle))
        except BaseException as e:  # noqa: BLE001 - what the waiter got is the assertion
            outcome.append(e)

    thread = threading.Thread(target=waiter)
    thread.start()
    flavour.destroy(sandbox)
    thread.join(HANG)
    assert not thread.is_alive()
    assert isinstance(outcome[0], BaseException) and flavour.failure(outcome[0]) == "gone", outcome


def test_two_handles_to_one_sandbox_share_its_processes(flavour: Any, sandbox: Any) -> None:
    other = flavour.second(sandbox)
    started, on_stdout = signalled()
    handle = flavour.start(sandbox, "echo up; sleep 600", on_stdout=on_stdout)
    assert started.wait(HANG)
    pid = flavour.pid(handle)
    assert pid in live(flavour, other)
    assert flavour.kill(other, pid) is True
    flavour.wait(handle)
    assert pid not in live(flavour, other) and pid not in live(flavour, sandbox)
    assert flavour.kill(other, pid) is False


@pytest.fixture(scope="module")
def appliance(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from appliance import served

    yield from served(tmp_path_factory.mktemp("appliance"))
