"""Redirections: open VFS files (and FIFOs, /dev/null, /dev/std*, /dev/fd/N) and build the
descriptor table a command runs with. Errors carry bash's wording (`f: No such file or directory`)."""

from __future__ import annotations

import errno
import os
from typing import TYPE_CHECKING

from kshell.core.errors import CommandError
from kshell.exec import devices, fifos
from kshell.exec.streams import BytesSource, FileReader, FileWriter, Stream, open_flags
from kshell.exec.varops import ReadonlyError
from kshell.expand.words import expand_string, expand_word
from kshell.syntax.ast import HereDoc, Redirect
from kshell.syntax.printer import word_text

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

_OUT_OPS = frozenset((">", ">>", ">|", "&>", "&>>", ">&"))


def os_message(e: OSError) -> str:
    return e.strerror or os.strerror(e.errno or errno.EIO)


def open_path(sh: Interp, path: str, op: str, fds: dict[int, Stream], unbuffered: bool) -> Stream:
    if path.startswith("/dev/"):
        special = _device(path, fds)
        if special is not None:
            return special
    noclobber = "C" in sh.opts and op in (">", "&>", ">&")
    flags = open_flags(op, noclobber)
    try:
        if noclobber:
            try:
                inode = sh.fs.stat(path)
            except OSError:
                inode = None
            if inode is not None:
                if inode.is_reg:
                    raise CommandError(f"{path}: cannot overwrite existing file")
                flags &= ~os.O_EXCL
        try:
            handle = sh.fs.open(path, flags)
        except OSError as e:
            return fifos.open_special(sh, path, flags, e)
    except OSError as e:
        raise CommandError(f"{path}: {os_message(e)}") from None
    if flags & os.O_ACCMODE == os.O_RDONLY:
        return FileReader(handle, path)
    if flags & os.O_ACCMODE == os.O_RDWR:
        return FileReader(handle, path, writable=True)
    writer = FileWriter(handle, path, append=bool(flags & os.O_APPEND), unbuffered=unbuffered)
    return writer


def _device(path: str, fds: dict[int, Stream]) -> Stream | None:
    try:
        return devices.open_stream(path, fds)
    except OSError as e:
        raise CommandError(f"{path}: {os_message(e)}") from None


def apply(sh: Interp, redirects: tuple[Redirect, ...], fds: dict[int, Stream],
          opened: list[Stream], unbuffered: bool = False, in_shell: bool = False) -> dict[int, Stream]:
    """A new descriptor table: `fds` with `redirects` applied left to right. Streams opened
    here are appended to `opened` (the caller closes them), but for a `{var}>file`'s: as in
    bash, the descriptor it allocated stays open in the shell (`fds`, the caller's table) after
    the command, until a `{var}>&-` closes it. `in_shell`: the command runs in the shell itself
    (builtin, function, compound or no command), where bash never reopens the source of a move
    `N>&M-` to a descriptor N that was closed: M stays closed after the command."""
    persistent = fds
    fds = dict(fds)
    for r in redirects:
        op = r.op
        target = r.target
        rfd = r.fd
        if r.var is not None:
            if op in ("<&", ">&") and type(target) is not HereDoc and expand_string(sh, target) == "-":
                value = sh.get_param_or_none(r.var)
                if value is None or not value.isdigit():
                    raise CommandError(f"{r.var}: ambiguous redirect")
                fds.pop(int(value), None)
                persistent.pop(int(value), None)
                continue
            rfd = _free_fd(fds)
        if type(target) is HereDoc:
            fd = 0 if rfd is None else rfd
            fds[fd] = BytesSource(sh.heredoc_text(target))
            _assign_fd(sh, r, fd)
            continue
        if op == "<<<":
            fd = 0 if rfd is None else rfd
            text = expand_string(sh, target) + "\n"
            fds[fd] = BytesSource(text.encode("utf-8", "surrogateescape"))
            _assign_fd(sh, r, fd)
            continue
        if op in ("<&", ">&"):
            fd = (0 if op == "<&" else 1) if rfd is None else rfd
            word = expand_string(sh, target)
            if word == "-":
                fds.pop(fd, None)
                continue
            if word.endswith("-") and word[:-1].isdigit():
                src = int(word[:-1])
                if src not in fds:
                    raise CommandError(f"{src}: Bad file descriptor")
                if in_shell and fd not in fds and persistent.get(src) is fds[src]:
                    del persistent[src]
                    opened.append(fds[src])
                fds[fd] = fds.pop(src)
                continue
            if word.isdigit():
                src = int(word)
                if src not in fds:  # named as written (`$fd: Bad file descriptor`), as bash does

                    raise CommandError(f"{word_text(target)}: Bad file descriptor")
                fds[fd] = fds[src]
                _assign_fd(sh, r, fd)
                continue
            if op == "<&" or rfd not in (None, 1) or len(expand_word(sh, target)) != 1:  # `1>&file` is `>&file`

                raise CommandError(f"{word_text(target) if op == '>&' else word}: ambiguous redirect")
            stream = open_path(sh, word, "&>", fds, unbuffered)
            opened.append(stream)
            fds[1] = fds[2] = stream
            continue
        fields = expand_word(sh, target)
        if len(fields) != 1:
            raise CommandError(f"{word_text(target)}: ambiguous redirect")
        path = fields[0]
        if path == "":
            raise CommandError(": No such file or directory")
        stream = open_path(sh, path, op, fds, unbuffered or r.var is not None)  # a kept one: as exec's
        if stream not in fds.values():
            opened.append(stream)
        if op in ("&>", "&>>"):
            fds[1] = fds[2] = stream
            continue
        fd = rfd if rfd is not None else (1 if op in _OUT_OPS else 0)
        fds[fd] = stream
        _assign_fd(sh, r, fd)
        if r.var is not None:
            persistent[fd] = stream
            if stream in opened:
                opened.remove(stream)
    return fds


def _free_fd(fds: dict[int, Stream]) -> int:
    fd = 10
    while fd in fds:
        fd += 1
    return fd


def _assign_fd(sh: Interp, r: Redirect, fd: int) -> None:
    if r.var is None:
        return

    try:
        sh.assign_scalar(r.var, str(fd))
    except ReadonlyError:
        sh.error(f"{r.var}: readonly variable")
        raise CommandError(f"{r.var}: cannot assign fd to variable") from None
