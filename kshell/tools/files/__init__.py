"""File and directory tools: ls, find, cp, mv, rm, mkdir, mkfifo, stat, chmod, ... on the VFS."""

from __future__ import annotations

from kshell.builtins import Builtin
from kshell.tools.files.copy import cp, mv
from kshell.tools.files.filetype import file
from kshell.tools.files.find import find
from kshell.tools.files.install import install, mktemp
from kshell.tools.files.links import ln, readlink
from kshell.tools.files.ls import ls
from kshell.tools.files.mkdir import mkdir, mkfifo, rmdir
from kshell.tools.files.paths import basename, dirname, realpath
from kshell.tools.files.remove import rm
from kshell.tools.files.stat import chmod, stat
from kshell.tools.files.touch import touch
from kshell.tools.files.tree import tree
from kshell.tools.files.usage import df, du

TOOLS: dict[str, Builtin] = {
    "basename": basename,
    "chmod": chmod,
    "cp": cp,
    "df": df,
    "du": du,
    "file": file,
    "install": install,
    "mktemp": mktemp,
    "tree": tree,
    "mv": mv,
    "dirname": dirname,
    "find": find,
    "ln": ln,
    "ls": ls,
    "mkdir": mkdir,
    "mkfifo": mkfifo,
    "readlink": readlink,
    "realpath": realpath,
    "rm": rm,
    "rmdir": rmdir,
    "stat": stat,
    "touch": touch,
}
