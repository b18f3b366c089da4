"""dd against GNU dd: records in/out, conversions, skip/seek, flags and errors (status=noxfer where
the transfer line's clock would differ; its shape is checked on K alone)."""

from __future__ import annotations

import re

import pytest
from differential import Case, File, assert_same, run_k

TEXT = "hello world\nsecond line here\n" * 20
F = {"f": TEXT, "small": "abcdefghij", "old": "0123456789abcdef\n", "odd": File(b"abcde")}

CASES = [
    Case("copy_default", "dd if=f of=g status=noxfer; cmp f g && echo same", F),
    Case("stdout", "dd if=small status=noxfer", F),
    Case("bs_partial", "dd if=f of=g bs=100 status=noxfer; wc -c < g", F),
    Case("ibs_obs_regroup", "dd if=f of=g ibs=7 obs=50 status=noxfer; cmp f g && echo same", F),
    Case("count", "dd if=f bs=5 count=3 status=noxfer", F),
    Case("count_bytes", "dd if=f bs=4 count=10 iflag=count_bytes status=noxfer", F),
    Case("skip", "dd if=f bs=6 skip=2 count=2 status=noxfer", F),
    Case("skip_bytes", "dd if=small bs=4 skip=3 iflag=skip_bytes status=noxfer", F),
    Case("skip_past_end", "dd if=small bs=4 skip=5 status=noxfer; echo $?", F),
    Case("skip_past_end_quiet", "dd if=small bs=4 skip=5 status=none; echo $?", F),
    Case("skip_within_last_block", "dd if=small bs=4 skip=3 status=noxfer; echo $?", F),
    Case("seek_truncates", "dd if=small of=old bs=2 seek=2 status=noxfer; od -c old", F),
    Case("seek_notrunc", "dd if=small of=old bs=2 seek=2 count=1 conv=notrunc status=noxfer; cat old", F),
    Case("seek_bytes", "dd if=small of=old bs=4 seek=3 oflag=seek_bytes conv=notrunc status=noxfer; cat old", F),
    Case("seek_grows_file", "dd if=small of=new bs=3 seek=2 status=noxfer; od -c new", F),
    Case("truncate_without_seek", "dd if=small of=old count=0 status=noxfer; wc -c < old", F),
    Case("ucase", "dd if=f bs=8 count=2 conv=ucase status=noxfer", F),
    Case("lcase", "echo HeLLo | dd conv=lcase status=noxfer", F),
    Case("swab", "dd if=odd conv=swab status=noxfer | od -c", F),
    Case("sync_pad", "dd if=small bs=4 conv=sync status=noxfer | od -c", F),
    Case("status_none", "dd if=f of=g status=none; echo $?", F),
    Case("append", "dd if=small of=old oflag=append conv=notrunc status=noxfer; cat old", F),
    Case("excl_exists", "dd if=small of=old conv=excl status=noxfer; echo $?", F),
    Case("nocreat_missing", "dd if=small of=nope conv=nocreat status=noxfer; echo $?", F),
    Case("missing_input", "dd if=nope status=noxfer; echo $?", F),
    Case("directory_input", "dd if=. status=noxfer; echo $?", F),
    Case("bad_operand", "dd foo=1; echo $?", F),
    Case("bad_number", "dd bs=x; echo $?", F),
    Case("zero_bs", "dd bs=0; echo $?", F),
    Case("bad_conv", "dd conv=zz; echo $?", F),
    Case("bad_iflag", "dd iflag=zz; echo $?", F),
    Case("bad_oflag", "dd oflag=zz; echo $?", F),
    Case("bad_status", "dd status=zz; echo $?", F),
    Case("lcase_ucase", "dd conv=lcase,ucase; echo $?", F),
    Case("multiplied_size", "dd if=f bs=2x3 count=2 status=noxfer", F),
    Case("suffix_size", "dd if=f of=g bs=1K status=noxfer; cmp f g && echo same", F),
    Case("seek_on_pipe", "dd if=small bs=4 seek=2 status=noxfer | cat; echo ${PIPESTATUS[0]}", F),
    Case("seek_on_redirect", "dd if=small bs=2 seek=1 status=noxfer > out; od -c out", F),
    Case("stdin_file", "dd bs=3 count=2 status=noxfer < small", F),
    Case("dev_zero_big_blocks", "dd if=/dev/zero of=/dev/null bs=1M count=2 status=noxfer", F),
    Case("dev_zero_count", "dd if=/dev/zero bs=1k count=4 status=noxfer | wc -c", F),
    Case("pipe_fullblock", "head -c 5000 /dev/zero | dd bs=1000 iflag=fullblock status=noxfer | wc -c", F),
    Case("shares_the_redirected_offset", "{ dd bs=3 count=1 status=none; echo; cat; } < small", F),
    Case("fsync", "dd if=small of=g conv=fsync status=noxfer; cat g", F),
]


@pytest.mark.parametrize("case", CASES, ids=Case.id)
def test_dd_matches_gnu(case: Case) -> None:
    assert_same(case)


def test_dd_transfer_line_has_gnu_shape() -> None:
    r = run_k("dd if=f of=g bs=1000", {"f": "x" * 1536})
    lines = r.stderr.decode().splitlines()
    assert lines[:2] == ["1+1 records in", "1+1 records out"]
    assert re.fullmatch(r"1536 bytes \(1\.5 kB, 1\.5 KiB\) copied, [0-9.e-]+ s, [0-9.]+ [kMG]?B/s", lines[2])


def test_dd_transfer_line_small_and_thousand() -> None:
    small = run_k("dd if=f of=/dev/null", {"f": "x" * 12}).stderr.decode().splitlines()[2]
    assert re.fullmatch(r"12 bytes copied, \S+ s, \S+ \S*B/s", small)
    thousand = run_k("dd if=f of=/dev/null", {"f": "x" * 1000}).stderr.decode().splitlines()[2]
    assert thousand.startswith("1000 bytes (1.0 kB) copied, ")


def test_dd_refuses_record_conversions_by_name() -> None:
    r = run_k("dd conv=block cbs=10 < /dev/null; echo $?")
    assert r.stdout == b"1\n"
    assert b"conv=block" in r.stderr and b"not supported" in r.stderr
