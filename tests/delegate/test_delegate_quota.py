"""A delegated program (a real python3 under bubblewrap, writing through the FUSE mount) stops at
its agent's disk quota with "Disk quota exceeded", in /tmp as in the home; df inside the sandbox
shows the agent's quota; the other agent still writes and runs `echo ok`."""

from __future__ import annotations

from delegation import run
from kserver import Bench

from kfs.kstate import quota

MIB = 1 << 20
QUOTA = 2 * MIB
# 3 MiB at most, 64 KiB at a time, flushed: bounded, whatever the quota does
FILL = ("python3 -c 'import sys\nf = open(sys.argv[1], \"wb\")\n"
        "for _ in range(48): f.write(b\"x\" * 65536); f.flush()' {}; echo status=$?")


def test_a_delegated_program_stops_at_the_agents_quota(make_mounted) -> None:  # noqa: ANN001
    b: Bench = make_mounted()
    alice = b.server.find_agent("alice")
    assert alice is not None
    b.state.write(lambda txn: quota.set_limit(txn, alice.uid, QUOTA))
    status, out, err = run(b, FILL.format("/tmp/fill") + "; " + FILL.format("fill2") + "; /usr/bin/df -k /tmp | tail -1")
    assert status == 0, err
    assert out.count("status=1") == 2, (out, err)
    assert err.count("Disk quota exceeded") == 2, err
    with b.state.read() as txn:
        used = quota.usage(txn, alice.uid)
    assert 0 < used <= QUOTA  # the bound holds
    assert out.splitlines()[-1].split()[1] == "2048"  # the host's df, through the mount: the agent's quota
    assert run(b, "echo ok", user="bob")[1] == "ok\n"
    assert run(b, FILL.format("room").replace("range(48)", "range(16)"), user="bob")[1] == "status=0\n"


DRIVES = """[drives.scratch]
path = "/mnt/scratch"
kind = "memory"
max_bytes = "4M"

[drives.data]
path = "/mnt/data"
kind = "host"
source = "{source}"
"""


def test_a_delegated_program_fills_no_drive_past_the_agents_bound(make_mounted, tmp_path) -> None:  # noqa: ANN001
    """A host drive (the host's disk: the agent's quota) and a memory drive (the host's memory:
    the agent's share, half the drive by default) stop a delegated program, which writes them
    through the FUSE mount, as they stop the shell; bob still writes on both."""
    from kfs.runtime import image

    b: Bench = make_mounted()
    alice = b.server.find_agent("alice")
    assert alice is not None
    b.state.write(lambda txn: quota.set_limit(txn, alice.uid, QUOTA))
    source = b.root / "hostdata"  # under a directory agents may pass through, as bwrap needs
    source.mkdir()
    source.chmod(0o777)
    (tmp_path / "komputer.toml").write_text(DRIVES.format(source=source))
    image.apply(b.state, image.load(tmp_path), by="test")
    status, out, err = run(b, FILL.format("/mnt/data/fill") + "; " + FILL.format("/mnt/scratch/fill")
                           + "; wc -c < /mnt/scratch/fill")
    assert status == 0, err
    assert out.splitlines()[:2] == ["status=1", "status=1"], (out, err)
    assert err.count("Disk quota exceeded") == 2, err
    on_host = (source / "fill").stat().st_size
    assert 0 < on_host <= QUOTA  # the host's disk
    assert 0 < int(out.splitlines()[2]) <= 2 * MIB  # the host's memory
    with b.state.read() as txn:
        assert quota.usage(txn, alice.uid, quota.HOST) == on_host
        assert quota.total_use(txn, alice.uid) <= QUOTA
    room = FILL.replace("range(48)", "range(16)")
    assert run(b, room.format("/mnt/data/room") + "; " + room.format("/mnt/scratch/room") + "; echo ok",
               user="bob")[1] == "status=0\nstatus=0\nok\n"
