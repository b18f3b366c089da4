"""Text-processing tools (cat, head, tail, grep, sort, ...), one module per tool or family."""

from __future__ import annotations

from kshell.builtins import Builtin
from kshell.tools.text import cat, cut, digest, grep, headtail, seq, small, sort, tee, tr, uniq, wc, xargs
from kshell.tools.text.cmp import cmp
from kshell.tools.text.layout import column, expand, fold, nl
from kshell.tools.text.merge import comm, join, paste
from kshell.tools.text.split import split

TOOLS: dict[str, Builtin] = {
    "cat": cat.cat,
    "head": headtail.head,
    "tail": headtail.tail,
    "grep": grep.grep,
    "egrep": grep.egrep,
    "fgrep": grep.fgrep,
    "wc": wc.wc,
    "sort": sort.sort,
    "uniq": uniq.uniq,
    "cut": cut.cut,
    "tr": tr.tr,
    "tee": tee.tee,
    "xargs": xargs.xargs,
    "base64": digest.base64,
    "md5sum": digest.md5sum,
    "sha1sum": digest.sha1sum,
    "sha224sum": digest.sha224sum,
    "sha256sum": digest.sha256sum,
    "sha384sum": digest.sha384sum,
    "sha512sum": digest.sha512sum,
    "seq": seq.seq,
    "yes": small.yes,
    "sleep": small.sleep,
    "timeout": small.timeout,
    "tac": small.tac,
    "rev": small.rev,
    "nl": nl,
    "fold": fold,
    "expand": expand,
    "column": column,
    "paste": paste,
    "comm": comm,
    "join": join,
    "split": split,
    "cmp": cmp,
}
