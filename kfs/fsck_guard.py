"""`komputer fsck` on a file that may be damaged below KState: never crash, say what is wrong.

The invariants of `kfs.fsck` are checked through LMDB, which trusts its file. So first the
file itself is judged without the engine, and then everything that touches LMDB runs in a
child process (kfs/child.py):

1. here: the meta pages (`lmdbfile.header_problem`), a few reads: the precise sentence for a
   truncated, empty or overwritten file, before anything maps it;
2. in the child: every reachable page (`lmdbfile.structure_problems`), then the state opened
   as usual and `kfs.fsck.check`: an LMDB error, a record that cannot be decoded, or the
   child dying of an abort or a fault all come back as `Damaged`.

A state that passes 1 and 2 gets exactly the report `kfs.fsck.check` gives.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import lmdb

from kfs.child import ChildDied, run_in_child
from kfs.fsck import Report, check
from kfs.kstate import KState
from kfs.kstate.env import StateError
from kfs.kstate.lmdbfile import header_problem, structure_problems, summarise

# What LMDB answers when the pages it follows are not what they should be.
LMDB_DAMAGE = (
    lmdb.CorruptedError,
    lmdb.PageNotFoundError,
    lmdb.InvalidError,
    lmdb.VersionMismatchError,
    lmdb.PanicError,
    lmdb.BadValsizeError,
)
# What decoding a garbled record raises (a short inode, a bad name, an impossible type).
RECORD_DAMAGE = (struct.error, ValueError, IndexError)


@dataclass(frozen=True)
class Damaged:
    """The LMDB file itself is damaged: `reason` says how, in one line. `--repair` cannot
    fix this (it works through LMDB, on a tree it can no longer trust)."""

    reason: str


def guarded_check(state_dir: Path, *, repair: bool = False) -> Report | Damaged:
    """`kfs.fsck.check` of the state at `state_dir`, or how its LMDB file is damaged.

    Raises what opening a healthy state raises (`StateError` for a missing or uninitialised
    state, `OSError`), so those keep their messages and exit status; and `StateError` when
    the checking process is killed from outside (SIGKILL, the OOM killer): no verdict.
    """
    data = state_dir / "data.mdb"
    if data.exists():
        problem = header_problem(data)
        if problem:
            return Damaged(problem)
    try:
        return run_in_child(lambda: _check_in_child(state_dir, repair))
    except ChildDied as e:
        if e.crashed:
            return Damaged(f"LMDB aborted while reading ({e.describe()})")
        raise StateError(f"{state_dir}: the checking process ended early ({e.describe()})") from None


def _check_in_child(state_dir: Path, repair: bool) -> Report | Damaged:
    try:
        if (state_dir / "data.mdb").exists():
            findings = structure_problems(state_dir)
            if findings:
                return Damaged(summarise(findings))
        with KState(state_dir) as state:
            return check(state, repair=repair)
    except LMDB_DAMAGE as e:
        return Damaged(f"LMDB reports damage: {e}")
    except lmdb.Error as e:  # not damage: a lock file we may not write, too many readers, ...
        raise StateError(str(e) if str(state_dir) in str(e) else f"{state_dir}: {e}") from None
    except RECORD_DAMAGE as e:
        kind = type(e).__name__ if type(e).__module__ == "builtins" else f"{type(e).__module__}.{type(e).__name__}"
        return Damaged(f"a record cannot be decoded ({kind}: {e})")
