"""strings (GNU binutils 2.40: the whole file, -n, -t d/o/x, -o, -f, -w, -s), to find the
text in a binary that an agent inspects.

A string is a run of at least N printable ASCII bytes (tab included; -w adds every blank);
each is printed with its offset in the file when -t asks, and the file's name with -f.
"""

from __future__ import annotations

import errno
import re
from typing import TYPE_CHECKING

from kshell.core.options import NONE, REQUIRED, Fail, Usage, parse, tool
from kshell.tools.text.textio import Output, read_all

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_LONG = {"all": ("a", NONE), "data": ("d", NONE), "print-file-name": ("f", NONE), "bytes": ("n", REQUIRED),
         "radix": ("t", REQUIRED), "include-all-whitespace": ("w", NONE), "encoding": ("e", REQUIRED),
         "output-separator": ("s", REQUIRED), "help": ("h", NONE), "version": ("v", NONE)}
_USAGE = """\
Usage: strings [option(s)] [file(s)]
 Display printable strings in [file(s)] (stdin by default)
 The options are:
  -a - --all                Scan the entire file, not just the data section [default]
  -d --data                 Only scan the data sections in the file
  -f --print-file-name      Print the name of the file before each string
  -n <number>               Locate & print any sequence of at least <number>
    --bytes=<number>         displayable characters.  (The default is 4).
  -t --radix={o,d,x}        Print the location of the string in base 8, 10 or 16
  -w --include-all-whitespace Include all whitespace as valid string characters
  -o                        An alias for --radix=o
  -T --target=<BFDNAME>     Specify the binary file format
  -e --encoding={s,S,b,l,B,L} Select character size and endianness:
                            s = 7-bit, S = 8-bit, {b,l} = 16-bit, {B,L} = 32-bit
  --unicode={default|show|invalid|hex|escape|highlight}
  -U {d|s|i|x|e|h}          Specify how to treat UTF-8 encoded unicode characters
  -s --output-separator=<string> String used to separate strings in output.
  @<file>                   Read options from <file>
  -h --help                 Display this information
  -v -V --version           Print the program's version number
strings: supported targets: elf64-x86-64 elf32-i386 elf32-iamcu elf32-x86-64 pei-i386 pe-x86-64 \
pei-x86-64 elf64-little elf64-big elf32-little elf32-big pe-bigobj-x86-64 pe-i386 pdb srec symbolsrec \
verilog tekhex binary ihex plugin
"""
_RADIX = {"d": "%7d ", "o": "%7o ", "x": "%7x "}


@tool("strings")
def strings(sh: ToolContext, argv: list[str]) -> int:
    try:
        opts, files = parse(argv, "adfn:t:woe:s:hvV0::1::2::3::4::5::6::7::8::9::", _LONG)
    except Usage as e:  # getopt's complaint, then the usage text
        sh.write_err(f"strings: {e.message}\n{_USAGE}")
        return 1
    minimum, radix, names, whitespace, sep = 4, None, False, False, b"\n"
    for key, value in opts:
        if key == "n" or key.isdigit():
            text = value if key == "n" else key + (value or "")
            if not text.isdigit():
                raise Fail(f"invalid integer argument {text}")
            minimum = int(text)
            if minimum < 1:
                raise Fail(f"invalid minimum string length {minimum}")
        elif key == "t":
            if value[:1] not in _RADIX:
                sh.write_err(_USAGE)
                return 1
            radix = _RADIX[value[0]]
        elif key == "o":
            radix = _RADIX["o"]
        elif key == "f":
            names = True
        elif key == "w":
            whitespace = True
        elif key == "s":
            sep = value.encode("utf-8", "surrogateescape")
        elif key == "h":
            sh.out(_USAGE.encode())
            return 0
        elif key in ("v", "V"):
            sh.out(b"GNU strings (GNU Binutils) 2.40\n")
            return 0
    printable = rb"[\x20-\x7e\t\n\v\f\r]" if whitespace else rb"[\x20-\x7e\t]"
    run = re.compile(printable + b"{%d,}" % minimum)
    out = Output(sh)
    status = 0
    for name in files or ["-"]:
        try:
            if name != "-" and sh.fs.stat(name).is_dir:
                out.flush()
                sh.write_err(f"strings: Warning: '{name}' is a directory\n")
                status = 1
                continue
            data = read_all(sh, name)
        except OSError as e:
            out.flush()
            reason = "No such file" if e.errno == errno.ENOENT else e.strerror
            sh.write_err(f"strings: '{name}': {reason}\n")
            status = 1
            continue
        prefix = (name if files else "{standard input}").encode("utf-8", "surrogateescape") + b": " if names else b""
        for m in run.finditer(data):
            offset = (radix % m.start()).encode() if radix else b""
            out.write(prefix + offset + m.group(0) + sep)
    out.flush()
    return status
