"""tee (-a -i -p): copy standard input to standard output and to files, as GNU coreutils."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from kshell.exec import devices
from kshell.exec.streams import FileWriter
from kshell.core.options import NONE, OPTIONAL, parse, tool
from kshell.tools.text.textio import message, open_chunks

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_LONG = {"append": ("a", NONE), "ignore-interrupts": ("i", NONE),
         "output-error": ("p", OPTIONAL), "help": ("help", NONE), "version": ("version", NONE)}


@tool("tee")
def tee(sh: ToolContext, argv: list[str]) -> int:
    opts, files = parse(argv, "aip", _LONG)
    append = False
    for key, _ in opts:
        if key == "a":
            append = True
        elif key == "help":
            sh.out(b"Usage: tee [OPTION]... [FILE]...\n")
            return 0
        elif key == "version":
            sh.out(b"tee (GNU coreutils) 9.1\n")
            return 0
    status = 0
    writers: list[tuple[str, object]] = []
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
    for name in files:
        try:
            handle = devices.open_file(sh, name, flags)
        except OSError as e:
            sh.write_err(f"tee: {name}: {message(e)}\n")
            status = 1
            continue
        writers.append((name, FileWriter(handle, name, append)))
    stdout = sh.fds.get(1)
    try:
        for chunk in open_chunks(sh, "-", 65536):
            if stdout is not None:
                stdout.write(chunk)
            for _, w in writers:
                w.write(chunk)
    finally:
        for name, w in writers:
            if isinstance(w, FileWriter):
                try:
                    w.close()
                except OSError as e:
                    sh.write_err(f"tee: {name}: {message(e)}\n")
                    status = 1
    return status
