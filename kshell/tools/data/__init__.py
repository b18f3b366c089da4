"""Data tools: jq (libjq), diff, patch, tar, gzip/gunzip/zcat, one module per tool or family."""

from __future__ import annotations

from kshell.builtins import Builtin
from kshell.tools.data import diff, gzip, jq, patch, tar

TOOLS: dict[str, Builtin] = {
    "jq": jq.jq,
    "diff": diff.diff,
    "patch": patch.patch,
    "tar": tar.tar,
    "gzip": gzip.gzip,
    "gunzip": gzip.gunzip,
    "zcat": gzip.zcat,
}
