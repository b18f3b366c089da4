"""flock: util-linux's options, messages and statuses against the real flock on uncontended
locks; contention between K jobs (exclusive, shared, -n, -E, -w, the descriptor form) on K alone,
synchronised by files the holder creates (no sleeps)."""

from __future__ import annotations

from pathlib import Path

import pytest
from differential import Case, Dir, assert_same, run_k

F = {"f": "", "d/": Dir()}

CASES = [
    Case("command", "flock f echo hi; echo $?", F),
    Case("creates_the_file", "flock new true; ls new", F),
    Case("dash_c", "flock -x f -c 'echo hi; exit 3'; echo $?", F),
    Case("shared", "flock -s f flock -s -n f echo shared-ok", F),
    Case("nonblock_free", "flock -n f true; echo $?", F),
    Case("directory", "flock d echo locked-dir; echo $?", F),
    Case("no_arguments", "flock; echo $?", F),
    Case("file_without_command", "flock f; echo $?", F),
    Case("cannot_open", "flock nosuchdir/x true; echo $?", F),
    Case("missing_command", "flock f nosuchcmd; echo $?", F),
    Case("bad_timeout", "flock -w x f true; echo $?", F),
    Case("closed_descriptor", "flock 7; echo $?", F),
    Case("bad_option", "flock -z; echo $?", F),
    Case("status_passes", "flock f false; echo $?", F),
    Case("descriptor_lock_unlock", "exec 9>lk; flock 9; echo $?; flock -u 9; echo $?", F),
]


@pytest.mark.parametrize("case", CASES, ids=Case.id)
def test_flock_matches_util_linux(case: Case) -> None:
    assert_same(case)


HOLD = "flock {opt} f sh -c 'touch held; sleep 300' & until [ -e held ]; do :; done; "


def test_an_exclusive_lock_excludes_other_jobs() -> None:
    r = run_k(HOLD.format(opt="") + "flock -n f true; echo $?; flock -E 9 -n f true; echo $?; "
              "flock -w 0.01 f true; echo $?; flock -s -n f true; echo $?; kill %1; wait; flock -n f echo free")
    assert r.stdout == b"1\n9\n1\n1\nfree\n"


def test_shared_locks_share_and_exclude_a_writer() -> None:
    r = run_k(HOLD.format(opt="-s") + "flock -s -n f echo shared-ok; flock -n f true; echo $?; kill %1; wait")
    assert r.stdout == b"shared-ok\n1\n"


def test_a_descriptor_lock_holds_until_unlocked() -> None:
    r = run_k("exec 9>lk; flock 9; flock -n lk true; echo $?; flock -u 9; flock -n lk true; echo $?")
    assert r.stdout == b"1\n0\n"


def test_a_blocked_flock_waits_for_the_holder() -> None:
    r = run_k("flock f sh -c 'touch held; until [ -e go ]; do :; done; echo first' & until [ -e held ]; do :; done; "
              "touch go; flock f echo second; wait")
    assert r.stdout == b"first\nsecond\n"


def test_two_sessions_on_one_state_contend(tmp_path: Path) -> None:
    import threading

    from kfs.kstate import KState
    from kfs.vfs import VFS, PathFS
    from kshell import Shell

    state = KState(tmp_path / "state", create=True)
    try:
        vfs = VFS(state, by="test")
        PathFS(vfs, cwd="/").mkdir("/w")

        def shell() -> Shell:
            return Shell(PathFS(vfs, cwd="/w", home="/w"), name="bash", env={"HOME": "/w", "LC_ALL": "C"})

        holder = threading.Thread(target=shell().run,
                                  args=("flock f sh -c 'touch held; until [ -e go ]; do :; done'",))
        holder.start()
        other = shell()
        assert other.run("until [ -e held ]; do :; done; flock -n f true; echo $?; touch go").stdout == b"1\n"
        holder.join()
        assert other.run("flock -n f echo free").stdout == b"free\n"
    finally:
        state.close()
