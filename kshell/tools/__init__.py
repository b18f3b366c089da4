"""The agent's Unix toolbox: external commands (ls, grep, sed, ...) run in-process on the VFS.

`TABLE` says where each tool lives (a module of one of the families, and its function); the
shell looks a command up here after functions and builtins, before $PATH. A tool's module is
imported the first time the tool runs, not when the shell starts: `komputer sh -c true` and
every short `ssh host cmd` pay only for what they use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kshell.core.context import Command, ToolContext

TABLE: dict[str, str] = {
"awk": "awk:awk",
    "b2sum": "text.checksums:b2sum",
    "base32": "text.digest:base32",
    "base64": "text.digest:base64",
    "basename": "files.paths:basename",
    "bc": "system.bc:bc",
    "cat": "text.cat:cat",
    "chgrp": "files.owner:chgrp",
    "chmod": "files.stat:chmod",
    "chown": "files.owner:chown",
    "cksum": "text.checksums:cksum",
    "cmp": "text.cmp:cmp",
    "column": "text.layout:column",
    "comm": "text.merge:comm",
    "cp": "files.copy:cp",
    "csplit": "text.csplit:csplit",
    "curl": "net.curl:curl",
    "cut": "text.cut:cut",
    "date": "system.date:date",
    "dd": "files.dd:dd",
    "df": "files.usage:df",
    "diff": "data.diff:diff",
    "diff3": "files.diff3:diff3",
    "dirname": "files.paths:dirname",
    "du": "files.usage:du",
    "egrep": "text.grep:egrep",
    "env": "system.env:env",
    "envsubst": "text.envsubst:envsubst",
    "expand": "text.layout:expand",
    "expr": "text.expr:expr",
    "factor": "text.factor:factor",
    "fgrep": "text.grep:fgrep",
    "file": "files.filetype:file",
    "find": "files.find:find",
    "flock": "files.flock:flock",
    "fmt": "text.fmt:fmt",
    "fold": "text.layout:fold",
    "free": "system.memory:free",
    "gawk": "awk:awk",
    "getopt": "system.getopt:getopt",
    "grep": "text.grep:grep",
    "groups": "system.groups:groups",
    "gunzip": "data.gzip:gunzip",
    "gzip": "data.gzip:gzip",
    "hd": "data.dump:hd",
    "head": "text.headtail:head",
    "hexdump": "data.dump:hexdump",
    "hostname": "system.identity:hostname",
    "iconv": "files.iconv:iconv",
    "id": "system.identity:id_",
    "install": "files.install:install",
    "join": "text.merge:join",
    "jq": "data.jq:jq",
    "ln": "files.links:ln",
    "ls": "files.ls:ls",
    "md5sum": "text.digest:md5sum",
    "mkdir": "files.mkdir:mkdir",
    "mkfifo": "files.mkdir:mkfifo",
    "mktemp": "files.install:mktemp",
    "mv": "files.copy:mv",
    "nice": "system.nice:nice",
    "nl": "text.layout:nl",
    "nohup": "jobs:nohup",
    "nproc": "system.identity:nproc",
    "numfmt": "text.numfmt:numfmt",
    "od": "data.dump:od",
    "paste": "text.merge:paste",
    "patch": "data.patch:patch",
    "pgrep": "system.pgrep:pgrep",
    "pkill": "system.pgrep:pkill",
    "pr": "text.pr:pr",
    "printenv": "system.env:printenv",
    "ps": "jobs:ps",
    "quota": "system.quota:quota",
    "readlink": "files.links:readlink",
    "realpath": "files.paths:realpath",
    "rev": "text.small:rev",
    "rm": "files.remove:rm",
    "rmdir": "files.mkdir:rmdir",
    "sdiff": "files.sdiff:sdiff",
    "sed": "sed:sed",
    "seq": "text.seq:seq",
    "setsid": "jobs:setsid",
    "sha1sum": "text.digest:sha1sum",
    "sha224sum": "text.digest:sha224sum",
    "sha256sum": "text.digest:sha256sum",
    "sha384sum": "text.digest:sha384sum",
    "sha512sum": "text.digest:sha512sum",
    "shuf": "text.shuf:shuf",
    "sleep": "text.small:sleep",
    "sort": "text.sort:sort",
    "split": "text.split:split",
    "stat": "files.stat:stat",
    "strings": "text.strings:strings",
    "sum": "text.checksums:sum_",
    "tac": "text.small:tac",
    "tail": "text.headtail:tail",
    "tar": "data.tar:tar",
    "tee": "text.tee:tee",
    "timeout": "text.small:timeout",
    "touch": "files.touch:touch",
    "tr": "text.tr:tr",
    "tree": "files.tree:tree",
    "truncate": "text.truncate:truncate",
    "tsort": "text.factor:tsort",
    "uname": "system.identity:uname",
    "unexpand": "text.unexpand:unexpand",
    "uniq": "text.uniq:uniq",
    "uptime": "system.uptime:uptime",
    "wc": "text.wc:wc",
    "wget": "net.curl:wget",
    "which": "system.which:which",
    "whoami": "system.identity:whoami",
    "xargs": "text.xargs:xargs",
    "xxd": "data.dump:xxd",
    "yes": "text.small:yes",
    "zcat": "data.gzip:zcat",
}


def _lazy(module: str, attr: str) -> Command:
    """The tool `attr` of `kshell.tools.<module>`, imported on its first call."""
    found: list[Command] = []

    def tool(sh: ToolContext, argv: list[str]) -> int:
        if not found:
            found.append(getattr(importlib.import_module(f"kshell.tools.{module}"), attr))
        return found[0](sh, argv)

    tool.__name__ = tool.__qualname__ = attr
    return tool


def registry() -> dict[str, Command]:
    """Every tool, by name."""
    return {name: _lazy(*where.split(":")) for name, where in TABLE.items()}
