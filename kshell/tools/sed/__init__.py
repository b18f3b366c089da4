"""sed, as GNU sed 4.9: -n -e -f -E/-r -i[SUFFIX] -s -z -l N -u; the script language in
`script`, the execution in `run`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kshell.core.options import NONE, OPTIONAL, REQUIRED, Fail, Usage, parse
from kshell.tools.sed.run import Input, Quit, Runner, Sink
from kshell.tools.sed.script import Parser, SedError
from kshell.tools.text.textio import Output, message, read_all

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

USAGE = """Usage: sed [OPTION]... {script-only-if-no-other-script} [input-file]...

  -n, --quiet, --silent
                 suppress automatic printing of pattern space
      --debug
                 annotate program execution
  -e script, --expression=script
                 add the script to the commands to be executed
  -f script-file, --file=script-file
                 add the contents of script-file to the commands to be executed
  --follow-symlinks
                 follow symlinks when processing in place
  -i[SUFFIX], --in-place[=SUFFIX]
                 edit files in place (makes backup if SUFFIX supplied)
  -l N, --line-length=N
                 specify the desired line-wrap length for the `l' command
  --posix
                 disable all GNU extensions.
  -E, -r, --regexp-extended
                 use extended regular expressions in the script
                 (for portability use POSIX -E).
  -s, --separate
                 consider files as separate rather than as a single,
                 continuous long stream.
      --sandbox
                 operate in sandbox mode (disable e/r/w commands).
  -u, --unbuffered
                 load minimal amounts of data from the input files and flush
                 the output buffers more often
  -z, --null-data
                 separate lines by NUL characters
      --help     display this help and exit
      --version  output version information and exit

If no -e, --expression, -f, or --file option is given, then the first
non-option argument is taken as the sed script to interpret.  All
remaining arguments are names of input files; if no input files are
specified, then the standard input is read.

GNU sed home page: <https://www.gnu.org/software/sed/>.
General help using GNU software: <https://www.gnu.org/gethelp/>.
"""
HELP = USAGE + "E-mail bug reports to: <bug-sed@gnu.org>.\n"

_LONG = {
    "quiet": ("n", NONE), "silent": ("n", NONE), "expression": ("e", REQUIRED),
    "file": ("f", REQUIRED), "in-place": ("i", OPTIONAL), "line-length": ("l", REQUIRED),
    "regexp-extended": ("E", NONE), "separate": ("s", NONE), "null-data": ("z", NONE),
    "zero-terminated": ("z", NONE), "unbuffered": ("u", NONE), "posix": ("posix", NONE),
    "debug": ("debug", NONE), "sandbox": ("sandbox", NONE),
    "follow-symlinks": ("follow", NONE), "help": ("help", NONE), "version": ("version", NONE),
}


def sed(sh: ToolContext, argv: list[str]) -> int:
    try:
        return _sed(sh, argv)
    except Usage as e:
        sh.write_err(f"sed: {e.message}\n{USAGE}")
        return 1
    except SedError as e:
        sh.write_err(f"sed: {e.message}\n")
        return e.status
    except Fail as e:
        sh.write_err(f"sed: {e.message}\n")
        return e.status


def _sed(sh: ToolContext, argv: list[str]) -> int:
    opts, operands = parse(argv, "nrsEe:f:i::l:uz", _LONG)
    quiet = extended = separate = zero = False
    in_place: str | None = None
    width = 70
    pieces: list[tuple[str, str]] = []
    exprs = 0
    for key, value in opts:
        if key == "n":
            quiet = True
        elif key in ("E", "r"):
            extended = True
        elif key == "s":
            separate = True
        elif key == "z":
            zero = True
        elif key == "i":
            in_place = value or ""
            separate = True
        elif key == "l":
            if not value.isdigit():
                raise Fail(f"invalid line length: {value}", 1)
            width = int(value)
        elif key == "e":
            exprs += 1
            pieces.append((value, f"-e expression #{exprs}"))
        elif key == "f":
            try:
                data = read_all(sh, value)
            except OSError as e:
                raise Fail(f"couldn't open file {value}: {message(e)}", 1) from None
            text = data.decode("latin-1")
            if text.endswith("\n"):
                text = text[:-1]
            pieces.append((text, f"file {value}"))
        elif key == "help":
            sh.out(HELP)
            return 0
        elif key == "version":
            sh.out("sed (GNU sed) 4.9\n")
            return 0
    if not pieces:
        if not operands:
            sh.write_err(USAGE)
            return 1
        pieces.append((operands.pop(0), "-e expression #1"))
    if pieces[0][0].startswith("#n") and pieces[0][0][2:3] in ("", "\n"):
        quiet = True
    parser = Parser(extended)
    for text, where in pieces:
        parser.add(text, where)
    program = parser.finish()
    runner = Runner(sh, program, quiet, zero, width)
    files = operands or ["-"]
    if in_place is not None:
        if not operands:
            raise Fail("no input files", 1)
        return _in_place(sh, runner, files, in_place)
    out = Output(sh)
    sink = Sink(out.write)
    runner.open_wfiles(sink)
    try:
        if separate:
            for name in files:
                runner.process(Input(runner, [name]), sink)
        else:
            runner.process(Input(runner, files), sink)
    except Quit as q:
        runner.status = q.status
    finally:
        try:
            out.flush()
        finally:
            runner.close_wfiles()
    return runner.status


def _in_place(sh: ToolContext, runner: Runner, files: list[str], suffix: str) -> int:
    stdout = Output(sh)
    runner.open_wfiles(Sink(stdout.write))
    try:
        for name in files:
            try:
                inode = sh.fs.stat(name)
            except OSError as e:
                sh.write_err(f"sed: can't read {name}: {message(e)}\n")
                runner.status = 2
                continue
            if not inode.is_reg:
                sh.write_err(f"sed: couldn't edit {name}: not a regular file\n")
                runner.status = 4
                continue
            parts: list[bytes] = []
            quit_status = None
            try:
                runner.process(Input(runner, [name]), Sink(parts.append))
            except Quit as q:
                quit_status = q.status
            try:
                if suffix:
                    if "*" in suffix:
                        base = name.rsplit("/", 1)[-1]
                        backup = suffix.replace("*", base)
                        if "/" not in backup and "/" in name:
                            backup = name.rsplit("/", 1)[0] + "/" + backup
                    else:
                        backup = name + suffix
                    sh.fs.write_file(backup, sh.fs.read_file(name))
                sh.fs.write_file(name, b"".join(parts))
            except OSError as e:
                raise Fail(f"couldn't edit {name}: {message(e)}", 4) from None
            if quit_status is not None:
                runner.status = quit_status
                break
    finally:
        try:
            stdout.flush()
        finally:
            runner.close_wfiles()
    return runner.status


