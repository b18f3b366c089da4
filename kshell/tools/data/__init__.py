"""Data tools: jq (libjq), diff, patch, tar, gzip/gunzip/zcat, od/xxd/hexdump, one module per tool or family."""

from __future__ import annotations

from kshell.builtins import Builtin
from kshell.tools.data import diff, dump, gzip, jq, patch, tar

TOOLS: dict[str, Builtin] = {
    "jq": jq.jq,
    "diff": diff.diff,
    "patch": patch.patch,
    "tar": tar.tar,
    "gzip": gzip.gzip,
    "gunzip": gzip.gunzip,
    "zcat": gzip.zcat,
    "od": dump.od,
    "xxd": dump.xxd,
    "hexdump": dump.hexdump,
    "hd": dump.hd,
}
