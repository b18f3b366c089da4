"""Per-agent disk quotas (kfs.kstate.quota): every stored byte is charged to its owner in the
write's own transaction, given back when the data goes, refused with EDQUOT past the limit with
nothing half-done; a fork's bytes are its owner agent's; statfs shows an agent its quota."""

from __future__ import annotations

import errno
import os

import pytest

from kfs import forks
from kfs.fsck import check
from kfs.kstate import KState, quota
from kfs.kstate.schema import U64
from kfs.vfs import ROOT, VFS, Cred, PathFS

MIB = 1 << 20
ALICE, BOB = 100_001, 100_002


def agent_fs(vfs: VFS, uid: int) -> PathFS:
    """`uid`'s view, with a home of its own under /home."""
    PathFS(vfs, cred=ROOT).mkdir(f"/home/{uid}", parents=True)
    PathFS(vfs, cred=ROOT).chown(f"/home/{uid}", uid, uid)
    return PathFS(vfs, cred=Cred(uid, uid), cwd=f"/home/{uid}", home=f"/home/{uid}")


def used(state: KState, uid: int) -> int:
    with state.read() as txn:
        return quota.usage(txn, uid)


def limit(state: KState, uid: int, size: int | None) -> None:
    state.write(lambda txn: quota.set_limit(txn, uid, size))


@pytest.fixture
def alice(vfs: VFS) -> PathFS:
    return agent_fs(vfs, ALICE)


def test_a_write_is_charged_to_the_files_owner(state: KState, alice: PathFS) -> None:
    alice.write_file("f", b"x" * 100_000)
    assert used(state, ALICE) == 100_000
    assert used(state, 0) == 0


def test_unlink_gives_the_bytes_back(state: KState, alice: PathFS) -> None:
    alice.write_file("f", b"x" * MIB)
    alice.unlink("f")
    assert used(state, ALICE) == 0


def test_truncate_gives_back_what_it_drops(state: KState, alice: PathFS) -> None:
    alice.write_file("f", b"x" * MIB)
    alice.truncate("f", 1000)
    assert used(state, ALICE) == 1000
    alice.truncate("f", 10 * MIB)  # a hole stores nothing
    assert used(state, ALICE) == 1000


def test_an_overwrite_is_charged_its_new_size_only(state: KState, alice: PathFS) -> None:
    alice.write_file("f", b"x" * MIB)
    alice.write_file("f", b"y" * 1000)
    assert used(state, ALICE) == 1000
    with alice.open("f", os.O_WRONLY) as h:
        h.pwrite(b"z" * 500, 0)  # inside what is stored: no change
    assert used(state, ALICE) == 1000


def test_rename_keeps_the_charge(state: KState, alice: PathFS) -> None:
    alice.write_file("f", b"x" * 5000)
    alice.mkdir("d")
    alice.rename("f", "d/g")
    assert used(state, ALICE) == 5000


def test_hard_links_are_counted_once(state: KState, alice: PathFS) -> None:
    alice.write_file("f", b"x" * 5000)
    alice.link("f", "g")
    assert used(state, ALICE) == 5000
    alice.unlink("f")
    assert used(state, ALICE) == 5000
    alice.unlink("g")
    assert used(state, ALICE) == 0


def test_an_unlinked_open_file_stays_charged_until_its_last_close(state: KState, alice: PathFS) -> None:
    alice.write_file("f", b"x" * 5000)
    handle = alice.open("f", os.O_RDONLY)
    alice.unlink("f")
    assert used(state, ALICE) == 5000
    handle.close()
    assert used(state, ALICE) == 0


def test_a_write_past_the_quota_is_edquot_and_leaves_nothing(state: KState, alice: PathFS) -> None:
    limit(state, ALICE, MIB)
    alice.write_file("old", b"o" * 1000)
    with pytest.raises(OSError) as e:
        alice.write_file("new", b"n" * (MIB + 1))
    assert e.value.errno == errno.EDQUOT and e.value.strerror == "Disk quota exceeded"
    assert not alice.exists("new")  # the file's creation went with the refused write
    with alice.open("old", os.O_WRONLY) as h, pytest.raises(OSError) as e:
        h.pwrite(b"p" * MIB, 500)
    assert e.value.errno == errno.EDQUOT
    assert alice.read_file("old") == b"o" * 1000
    assert used(state, ALICE) == 1000


def test_a_write_up_to_the_quota_passes(state: KState, alice: PathFS) -> None:
    limit(state, ALICE, MIB)
    alice.write_file("f", b"x" * MIB)
    assert used(state, ALICE) == MIB


def test_one_agent_at_its_quota_leaves_the_others_room(state: KState, vfs: VFS, alice: PathFS) -> None:
    limit(state, ALICE, MIB)
    alice.write_file("f", b"x" * MIB)
    with pytest.raises(OSError):
        alice.write_file("g", b"y")
    bob = agent_fs(vfs, BOB)
    bob.write_file("f", b"b" * MIB)
    assert bob.read_file("f") == b"b" * MIB


def test_agents_get_the_default_and_other_uids_none(state: KState) -> None:
    with state.read() as txn:
        assert quota.limit(txn, ALICE) == quota.DEFAULT_AGENT_DISK
        assert quota.limit(txn, 0) is None
        assert quota.limit(txn, 1000) is None
    state.write(lambda txn: quota.set_agent_default(txn, 2 * MIB))
    limit(state, BOB, 0)
    with state.read() as txn:
        assert quota.limit(txn, ALICE) == 2 * MIB
        assert quota.limit(txn, BOB) is None  # an own 0: no limit


def test_root_is_not_held_to_an_agents_quota(state: KState, vfs: VFS, alice: PathFS) -> None:
    limit(state, ALICE, 1000)
    alice.write_file("f", b"")
    PathFS(vfs, cred=ROOT).write_file(f"/home/{ALICE}/f", b"r" * 5000)
    assert used(state, ALICE) == 5000


def test_chown_moves_the_charge(state: KState, vfs: VFS) -> None:
    root = PathFS(vfs, cred=ROOT)
    root.write_file("/f", b"x" * 7000)
    root.chown("/f", ALICE, ALICE)
    assert (used(state, 0), used(state, ALICE)) == (0, 7000)


def test_an_agents_statfs_is_its_quota(state: KState, vfs: VFS, alice: PathFS) -> None:
    limit(state, ALICE, 8 * MIB)
    alice.write_file("f", b"x" * MIB)
    info = alice.statfs()
    assert info.blocks * info.block_size == 8 * MIB
    assert info.blocks_free * info.block_size == 7 * MIB
    assert PathFS(vfs, cred=ROOT).statfs().blocks * info.block_size == state.max_map_size


def test_a_forks_writes_are_charged_to_its_owner_and_refunded_when_it_goes(state: KState, vfs: VFS) -> None:
    PathFS(vfs, cred=ROOT).write_file("/base", b"b" * 100_000)
    number = forks.create(state, agent=None)
    state.write(lambda txn: _set_fork_uid(txn, number, BOB))
    mine = PathFS(VFS(forks.view(state, number), by="test"), cred=ROOT)
    mine.write_file("/new", b"n" * 200_000)
    assert used(state, BOB) == 200_000
    PathFS(vfs, cred=ROOT).write_file("/base", b"c" * 10)  # the parent's old chunks kept for the fork
    assert used(state, BOB) == 300_000
    mine.setxattr("/new", b"user.a", b"v" * 1000)
    mine.symlink("t" * 100, "/l")
    assert used(state, BOB) == 301_100
    assert check(state).clean  # fsck counts a fork's layer as its owner's
    assert files(state, BOB) >= 2  # its own files' records, and the parent's it keeps
    forks.discard(state, number)
    assert used(state, BOB) == 0 and files(state, BOB) == 0
    assert check(state).clean


def test_a_fork_past_its_owners_quota_is_edquot(state: KState, vfs: VFS) -> None:
    limit(state, BOB, MIB)
    number = forks.create(state)
    state.write(lambda txn: _set_fork_uid(txn, number, BOB))
    mine = PathFS(VFS(forks.view(state, number), by="test"), cred=ROOT)
    with pytest.raises(OSError) as e:
        mine.write_file("/f", b"x" * (2 * MIB))
    assert e.value.errno == errno.EDQUOT
    assert used(state, BOB) == 0


def test_fsck_checks_and_repairs_the_counters(state: KState, alice: PathFS) -> None:
    alice.write_file("f", b"x" * 3000)
    assert check(state).clean
    state.write(lambda txn: txn.put("meta", quota.usage_key(ALICE), U64.pack(1)))
    report = check(state)
    assert not report.clean and any("per-owner use" in p for p in report.problems)
    check(state, repair=True)
    assert used(state, ALICE) == 3000 and check(state).clean


def test_a_state_from_before_the_counters_is_counted_when_opened(state: KState, alice: PathFS) -> None:
    alice.write_file("f", b"x" * 3000)

    def forget(txn: object) -> None:
        for key in txn.scan_keys("meta", quota.USAGE):  # type: ignore[attr-defined]
            txn.delete("meta", key)  # type: ignore[attr-defined]
        txn.delete("meta", quota.COUNTED)  # type: ignore[attr-defined]

    state.write(forget)
    VFS(state, by="test")
    assert used(state, ALICE) == 3000


def _set_fork_uid(txn: object, number: int, uid: int) -> None:
    """The fork's owner (forks.create takes it from an agent record; these tests have none)."""
    import json

    key = U64.pack(number)
    record = json.loads(txn.get("forks", key))  # type: ignore[attr-defined]
    record["uid"] = uid
    txn.put("forks", key, json.dumps(record).encode())  # type: ignore[attr-defined]


def test_extended_attributes_are_charged_and_given_back(state: KState, alice: PathFS) -> None:
    alice.write_file("f", b"")
    alice.setxattr("f", b"user.big", b"v" * 60_000)
    assert used(state, ALICE) == len(b"user.big") + 60_000
    alice.setxattr("f", b"user.big", b"w" * 10)
    assert used(state, ALICE) == len(b"user.big") + 10
    alice.removexattr("f", b"user.big")
    alice.setxattr("f", b"user.x", b"1")
    alice.unlink("f")
    assert used(state, ALICE) == 0


def test_a_setxattr_loop_stops_at_the_quota(state: KState, alice: PathFS) -> None:
    limit(state, ALICE, 200_000)
    alice.write_file("f", b"")
    with pytest.raises(OSError) as e:  # noqa: PT012 (one of a bounded loop fails)
        for i in range(10):
            alice.setxattr("f", b"user.%d" % i, b"v" * 60_000)
    assert e.value.errno == errno.EDQUOT
    assert used(state, ALICE) <= 200_000


def test_symlink_targets_are_charged_and_given_back(state: KState, alice: PathFS) -> None:
    alice.symlink("t" * 3000, "l")
    assert used(state, ALICE) == 3000
    alice.unlink("l")
    assert used(state, ALICE) == 0


def test_a_merge_charges_the_parents_owners_and_gives_the_fork_back(state: KState, vfs: VFS, alice: PathFS) -> None:
    alice.write_file("kept", b"k" * 1000)
    number = forks.create(state)
    state.write(lambda txn: _set_fork_uid(txn, number, BOB))
    mine = PathFS(VFS(forks.view(state, number), by="test"), cred=Cred(ALICE, ALICE), cwd=f"/home/{ALICE}")
    mine.write_file("made", b"m" * 5000)
    mine.setxattr("made", b"user.a", b"v" * 100)
    mine.write_file("kept", b"k" * 3000)
    mine.setxattr("kept", b"user.b", b"w" * 10)
    forks.merge(state, number)
    assert used(state, BOB) == 0  # the fork is gone with its layer
    assert used(state, ALICE) == 5000 + 6 + 100 + 3000 + 6 + 10  # alice's files in the state now
    assert check(state).clean


def files(state: KState, uid: int) -> int:
    with state.read() as txn:
        return quota.usage(txn, uid, quota.FILES)


def test_files_are_counted_to_their_owner_and_given_back(state: KState, alice: PathFS) -> None:
    before = files(state, ALICE)  # her home
    alice.write_file("f", b"")
    alice.mkdir("d")
    alice.symlink("f", "l")
    alice.link("f", "g")  # a second name, not a second file
    assert files(state, ALICE) == before + 3
    alice.unlink("f")
    alice.unlink("g")
    alice.rmdir("d")
    alice.unlink("l")
    assert files(state, ALICE) == before


def test_a_file_past_the_file_limit_is_edquot(state: KState, alice: PathFS) -> None:
    state.write(lambda txn: quota.set_limit(txn, ALICE, files(state, ALICE) + 2, quota.FILES))
    alice.write_file("a", b"")
    alice.mkdir("b")
    with pytest.raises(OSError) as e:
        alice.write_file("c", b"")
    assert e.value.errno == errno.EDQUOT
    assert not alice.exists("c")
    info = alice.statfs()  # df -i: her files and what the limit leaves
    assert (info.files, info.files_free) == (files(state, ALICE), 0)


def test_agents_get_the_default_file_limit(state: KState) -> None:
    with state.read() as txn:
        assert quota.limit(txn, ALICE, quota.FILES) == quota.DEFAULT_AGENT_FILES
        assert quota.limit(txn, 0, quota.FILES) is None


def test_a_merge_is_never_refused_for_a_quota_but_charges_the_owner(state: KState, alice: PathFS) -> None:
    limit(state, ALICE, 10_000)
    alice.write_file("kept", b"k" * 1000)
    number = forks.create(state)
    mine = PathFS(VFS(forks.view(state, number), by="test"), cred=ROOT)
    mine.write_file(f"/home/{ALICE}/kept", b"k" * 50_000)  # root's write in the fork: the fork's owner pays
    forks.merge(state, number)
    assert used(state, ALICE) == 50_000
    with pytest.raises(OSError) as e:
        alice.write_file("more", b"m")
    assert e.value.errno == errno.EDQUOT
    assert check(state).clean


def test_a_fork_of_an_agent_is_charged_to_that_agent(state: KState, vfs: VFS) -> None:
    from kfs.agents import add_agent

    carol = add_agent(vfs, "carol")
    number = forks.create(state, agent="carol")
    PathFS(VFS(forks.view(state, number), by="test"), cred=ROOT).write_file("/f", b"x" * 4000)
    assert used(state, carol.uid) == 4000
