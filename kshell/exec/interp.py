"""The command evaluator: runs syntax trees against shell state on the VFS.

One `Interp` is one shell (or subshell) state: variables, functions, options, positional
parameters, working directory and descriptor table. Subshells, command substitutions and
pipeline stages run in a `fork()` of it; pipeline stages run concurrently in threads joined
by bounded pipes. Everything one `Shell` session shares (limits, the wall-time deadline,
output meter, pids) lives in `Session`.
"""

from __future__ import annotations

import contextlib
import copy
import threading
import time
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, Any, NoReturn

from kfs.vfs import ROOT, PathFS
from kshell.core.errors import (
    AbortCommand,
    BreakLoop,
    CommandError,
    ContinueLoop,
    DiscardCommand,
    ExitSignal,
    FatalError,
    ReturnSignal,
    SigPipe,
)
from kshell.core.variables import AssignArg, Var, Variables
from kshell.exec import menu, regexes, timing
from kshell.exec import redirects as redir
from kshell.exec.conditions import binary_test, unary_test
from kshell.exec.jobs import JobTable
from kshell.exec.streams import BufferSink, BytesSource, Cancel, Pipe, PipeReader, PipeWriter, Stream, WriteError
from kshell.exec.threads import FORK_FAILED, ForkFailed, Threads
from kshell.exec.varops import ReadonlyError, VarOps
from kshell.expand import arith
from kshell.expand import pattern as pat
from kshell.expand.charset import from_bytes, to_bytes
from kshell.expand.fields import QUO
from kshell.expand.words import expand_pattern, expand_string, expand_word, expand_words, pattern_pieces
from kshell.limits import LimitExceeded, Limits
from kshell.syntax import Parser, ShellSyntaxError, parse
from kshell.syntax.ast import (
    AndOr,
    ArithCommand,
    ArithExpr,
    ArithFor,
    ArrayLiteral,
    Assignment,
    Background,
    BraceGroup,
    Case,
    CommandSub,
    Cond,
    CondAnd,
    CondBinary,
    CondNot,
    CondOr,
    CondUnary,
    For,
    FunctionDef,
    HereDoc,
    If,
    KeyedElement,
    Pipeline,
    ProcessSub,
    Program,
    Select,
    SimpleCommand,
    Subshell,
    While,
    Word,
)
from kshell.syntax.errors import ArithSyntaxError
from kshell.syntax.printer import (
    trace_array_literal,
    trace_quote,
    trace_source_word,
    trace_value,
    word_text,
)

if TYPE_CHECKING:
    from random import Random

    from kfs.vfs import PathFS
    from kshell.delegate import Delegation
    from kshell.delegate.terminal import Terminal


Builtin = Callable[["Interp", list[str]], int]  # a builtin or a tool: fn(sh, argv) -> status


class Session:
    """State shared by a shell and all its subshells and threads."""

    def __init__(self, limits: Limits, name: str) -> None:
        self.limits = limits
        self.name = name
        self.pid = 4242
        self.next_pid = 5000
        self.lock = threading.Lock()
        self.started = time.monotonic()
        self.cancel = Cancel(time.monotonic() + limits.wall_time)
        self.iterations = 0
        self.tmp_counter = 0
        self.jobs = JobTable()  # background commands (`&`), for jobs/wait/kill and $!
        self.threads = Threads(limits.threads)  # what jobs, pipeline stages and xargs -P run in
        self.builtins: dict[str, Builtin] = {}  # the language's builtins, handed in by kshell.session
        self.tools: dict[str, Builtin] = {}
        self.delegation: Delegation | None = None  # how programs K does not have run (kshell.delegate)
        self.terminal: Terminal | None = None  # the session's terminal, when it has one (a PTY session)
        self.rules: Any = ()  # policy rules on command lines (kfs.runtime.rules.CommandRules), read when it started
        self.denied: Callable[[str, Any], None] | None = None  # told of each command a rule denied
        # waits for a person's decision on a command an `ask` rule matched: (interp, command, rule,
        # argv) -> (allowed, what to tell the agent); None where no one can decide
        self.approve: Callable[[Any, str, Any, list[str]], tuple[bool, str]] | None = None
        self.preapproved: str | None = None  # a command decided `allow` while nobody waited: runs once
        # the image's command hooks: argv -> a rule-like decision (action, describe()) or None
        self.command_hook: Callable[[list[str]], Any] | None = None
        self.own_process = False  # a worker's session: `ulimit` sets the process's real limits
        self.process_limits_set = False  # and has: the process serves no other session
        self.child_cpu = timing.CpuMeter()  # the threads that ended: `times`'s children line
        self.history: list[str] = []  # the `history` builtin's list (nothing enters it by itself)
        # the files this session's view shows under /sys (kshell.exec.system): name -> contents
        self.view_files: dict[str, Callable[[], bytes]] = {}
        # which tools a K file earlier on $PATH shadows (name -> bool), for the $PATH it was
        # found with: bash's hash table, forgotten when PATH changes or on `hash -r`
        self.shadowed: dict[str, bool] = {}
        self.shadowed_path: str | None = None

    @cached_property
    def random(self) -> Random:
        """$RANDOM's generator, made at the first $RANDOM (the random module is not loaded before)."""
        import random

        return random.Random()

    def new_pid(self) -> int:
        with self.lock:
            self.next_pid += 1
            return self.next_pid


class Frame:
    """A function call: its name and positional parameters (for FUNCNAME and `return`)."""

    __slots__ = ("name",)


class Interp(VarOps):
    def __init__(self, fs: PathFS, session: Session, fds: dict[int, Stream]) -> None:
        self.fs = fs
        self.session = session
        self.limits = session.limits
        self.fds = fds
        self.vars = Variables()
        self.funcs: dict[str, FunctionDef] = {}
        self.aliases: dict[str, str] = {}
        self.positional: list[str] = []
        self.dollar0 = session.name
        self.script_name = session.name  # message prefix
        self.opts: set[str] = {"h", "B"}
        self.pipefail = False
        self.shopts: set[str] = {"checkwinsize", "cmdhist", "complete_fullquote", "extquote",
                                 "force_fignore", "globasciiranges", "globskipdots", "hostcomplete",
                                 "interactive_comments", "patsub_replacement", "progcomp",
                                 "promptvars", "sourcepath"}  # a non-interactive bash's
        self.noglob = False
        self.last_status = 0
        self.last_bg = 0
        self.lineno = 0
        self.pid = session.pid
        self.funcnames: list[str] = []
        self.traps: dict[str, str] = {}
        # a subshell runs none of its parent's traps, but `trap -p` shows them until it sets one
        self.parent_traps: dict[str, str] = {}
        self.errexit_off = 0  # > 0 inside conditions where set -e does not apply
        self.inverted: object = None  # the command `!` runs: its own status never fails
        self.loop_depth = 0
        self.call_depth = 0
        self.source_depth = 0
        self.subshell = 0
        self.comsub_status: int | None = None
        self.arith_depth = 0
        self.getopts_pos = 1
        self.in_trap = False
        self.pipestatus: list[int] = []  # unset until the first command (bash)
        self.dirstack: list[str] = []  # pushd's stack below the working directory
        self.hashed: dict[str, tuple[str, int]] = {}  # `hash`'s table: name -> (path, hits)
        self.hashed_for: str | None = None  # the PATH it holds for (another empties it, as bash)
        self.call_lines: list[int] = []  # the line each running function was called from (caller)
        self.disabled: dict[str, Builtin] = {}  # builtins `enable -n` took out of self.builtins
        self.rlimits: dict[int, tuple[int, int]] = {}  # limits `ulimit` set for this shell alone
        self.completions: dict[str, Any] = {}  # `complete`'s specifications (kshell.builtins.completion)
        self.readline_vars: dict[str, str] = {}  # readline variables `bind 'set NAME VALUE'` set
        self.pending_tmp: list[str] = []
        self.pending_outsubs: list[tuple[str, Program]] = []
        self.trace_level = 1
        self.last_arg = ""
        self.is_top = False
        self.dash_c = True  # running a -c string (syntax errors say `NAME: -c: line N:`)
        self.line_meter = None
        self.cpu_meters: tuple[timing.CpuMeter, ...] = ()  # the `time`s running (innermost last)
        self.niceness = 0  # `nice -n N` (kshell.tools.system.nice): inherited, applied to delegated programs
        self._dispatch = {
            SimpleCommand: self.exec_simple,
            Pipeline: self.exec_pipeline,
            AndOr: self.exec_andor,
            If: self.exec_if,
            While: self.exec_while,
            For: self.exec_for,
            Select: self.exec_select,
            ArithFor: self.exec_arith_for,
            BraceGroup: self.exec_group,
            Subshell: self.exec_subshell,
            Case: self.exec_case,
            FunctionDef: self.exec_funcdef,
            Cond: self.exec_cond,
            ArithCommand: self.exec_arith_command,
            Background: self.exec_background,
        }
        self.builtins: dict[str, Builtin] = session.builtins  # the command table the session was given

    # ------------------------------------------------------------------ state

    def fork(self) -> Interp:
        """A subshell: a copy of this state that shares nothing mutable with it."""
        child = Interp.__new__(Interp)
        child.__dict__.update(self.__dict__)
        child.fs = self.fs.clone()
        child.vars = self.vars.copy()
        child.funcs = dict(self.funcs)
        child.aliases = dict(self.aliases) if self.aliases else {}
        child.positional = list(self.positional)
        child.opts = set(self.opts)
        child.shopts = set(self.shopts)
        child.vars.rebind(child)
        child.funcnames = list(self.funcnames)
        child.parent_traps = dict(self.traps) if self.traps else self.parent_traps
        child.traps = {}
        child.fds = dict(self.fds)
        child.subshell = self.subshell + 1
        child.pid = self.session.new_pid()
        child.dirstack = list(self.dirstack)
        child.hashed = dict(self.hashed)
        child.call_lines = list(self.call_lines)
        child.rlimits = dict(self.rlimits)
        child.completions = {k: copy.deepcopy(v) for k, v in self.completions.items()}
        child.readline_vars = dict(self.readline_vars)
        if self.builtins is not self.session.builtins:  # `enable -n` gave this shell its own table
            child.builtins = dict(self.builtins)
            child.disabled = dict(self.disabled)
        child.pending_tmp = []
        child.pending_outsubs = []
        child.is_top = False
        child.comsub_status = None
        child._dispatch = {k: getattr(child, v.__name__) for k, v in self._dispatch.items()}
        return child

    @property
    def pipestatus(self) -> list[int]:
        """The statuses `${PIPESTATUS[@]}` shows: the last pipeline's, or the last simple
        command's, subshell's, `[[ ]]`'s or `(( ))`'s."""
        return self._pipestatus

    @pipestatus.setter
    def pipestatus(self, codes: list[int]) -> None:
        # bash sets PIPESTATUS after each of those whatever a script assigned to it
        self._pipestatus = codes
        if "PIPESTATUS" in self.vars.table:
            del self.vars.table["PIPESTATUS"]

    @property
    def errexit(self) -> bool:
        return "e" in self.opts

    def options_u(self) -> bool:
        return "u" in self.opts

    def option_flags(self) -> str:
        """$-: the set letters in bash's order, then c (a -c string, in subshells too) and s
        (commands read from standard input)."""
        flags = "".join(c for c in "abefhikmnprtuvxBCEHPT" if c in self.opts)
        return flags + ("c" if self.dash_c else "") + ("s" if "s" in self.opts else "")

    # ------------------------------------------------------------------ output

    def prefix(self) -> str:
        """An error message's start: an interactive shell's (`bash -i`) names no line."""
        if "i" in self.opts:
            return f"{self.script_name}: "
        return f"{self.script_name}: line {self.lineno}: "

    def error(self, message: str) -> None:
        """Print `name: line N: message` to standard error."""
        self.write_err(f"{self.prefix()}{message}\n")

    def start_thread(self, target: Callable[..., Any], args: tuple[Any, ...],
                     name: str | None = None) -> threading.Thread:
        """A thread for a job, a pipeline stage or an xargs command, if the session has room;
        else the command line is abandoned as after bash's failed fork."""
        # the thread's CPU time counts for `times` and for each running `time`
        target = timing.metered(target, (*self.cpu_meters, self.session.child_cpu))
        try:
            return self.session.threads.start(target, args, name)
        except ForkFailed:
            self.fork_failed()

    def fork_failed(self) -> NoReturn:
        """No room for another process (the session's or the agent's bound): bash's failed
        fork, which abandons the command line."""
        self.write_err(f"{self.script_name}: fork: Resource temporarily unavailable\n")  # as bash: no line
        raise AbortCommand(FORK_FAILED) from None

    def write_err(self, text: str) -> None:
        stream = self.fds.get(2)
        if stream is None:
            return
        with contextlib.suppress(OSError, LimitExceeded):
            stream.write(text.encode("utf-8", "surrogateescape"))

    def out(self, data: bytes | str, fd: int = 1) -> None:
        if type(data) is str:
            data = data.encode("utf-8", "surrogateescape")
        stream = self.fds.get(fd)
        if stream is None:
            raise OSError(9, "Bad file descriptor")
        stream.write(data)

    # ------------------------------------------------------------------ running source

    def run_source(self, source: str, *, filename: str = "") -> int:
        """Parse and run `source` line by line, as bash runs a script: earlier lines run even
        if a later one has a syntax error (which ends the script with status 2)."""
        parser = self.parser(source, filename=filename)
        status = self.last_status
        while True:
            start = parser.pos
            try:
                commands = parser.parse_line()
            except ShellSyntaxError as e:
                self.echo_input(parser, start, error=True)
                for w in parser.take_warnings():
                    self.write_err(f"{self.script_name}: line {w.lineno}: warning: {w.message}\n")
                where = f"{filename}: line" if filename else (
                    f"{self.script_name}: -c: line" if self.dash_c else f"{self.script_name}: line")
                self.write_err(e.format(where + " {lineno}: "))
                self.last_status = 2
                raise ExitSignal(2) from None
            for w in parser.take_warnings():
                self.write_err(f"{self.script_name}: line {w.lineno}: warning: {w.message}\n")
            if commands is None:
                return status
            self.echo_input(parser, start)
            if "n" in self.opts:
                continue
            status = self.run_line(commands)
            self.update_parser(parser)

    def parser(self, source: str, *, filename: str = "", line0: int = 0):
        """A parser for `source` that sees this shell's extglob, locale and aliases."""
        return Parser(source, filename=filename, line0=line0, extglob="extglob" in self.shopts,
                      utf8=self.utf8_locale(), aliases=self.parse_aliases())

    def update_parser(self, parser) -> None:
        """After a line has run: what it changed applies to the lines parsed after it."""
        parser.extglob = "extglob" in self.shopts
        parser.utf8 = self.utf8_locale()
        parser.aliases = self.parse_aliases()

    def parse_aliases(self) -> dict[str, str] | None:
        return self.aliases if self.aliases and "expand_aliases" in self.shopts else None

    def echo_input(self, parser, start: int, error: bool = False) -> None:
        """set -v: print the input just read (from `start`), as bash echoes lines it reads;
        after a syntax error, up to the end of the offending line."""
        if "v" not in self.opts:
            return
        src = parser.src
        end = parser.pos
        if error:
            nl = src.find("\n", max(end - 1, start))
            end = len(src) if nl < 0 else nl + 1
        text = src[start:end]
        if text:
            self.write_err(text if text.endswith("\n") else text + "\n")

    def run_line(self, commands) -> int:
        """Run one line's commands; an AbortCommand abandons the rest of the line. At the top
        level each line is one command for the bounds: a fresh deadline, count and meter."""
        if self.is_top and not self.source_depth and not self.call_depth:
            session = self.session
            deadline = time.monotonic() + self.limits.wall_time
            if session.cancel.cancelled:  # the last line was ended: this one starts afresh
                session.cancel = Cancel(deadline)
            else:
                session.cancel.renew(deadline)
            session.iterations = 0
            if self.line_meter is not None:
                self.line_meter.count = 0
            try:
                return self._run_line(commands)
            except LimitExceeded as e:
                # a runaway command ends the script: later lines would only run away too
                if self.line_meter is not None:
                    self.line_meter.count = 0
                if not getattr(e, "quiet", False):  # a job ended by a signal: its status says so
                    self.error(e.message)
                self.last_status = 1
                raise ExitSignal(1) from None
        return self._run_line(commands)

    def _run_line(self, commands) -> int:
        try:
            status = 0
            for cmd in commands:
                status = self.execute(cmd)
            return status
        except AbortCommand as e:
            self.last_status = e.status
            if type(e) is DiscardCommand and self.dash_c and self.is_top and not (self.source_depth or self.call_depth):
                raise ExitSignal(e.status) from None
            return e.status
        except CommandError as e:
            self.error(e.message)
            self.last_status = e.status
            return e.status

    def run_program(self, program: Program) -> int:
        status = 0
        for cmd in program.commands:
            status = self.execute(cmd)
        return status

    def execute_list(self, commands) -> int:
        status = 0
        for cmd in commands:
            status = self._dispatch[type(cmd)](cmd)
        return status

    def execute(self, node) -> int:
        return self._dispatch[type(node)](node)

    # ------------------------------------------------------------------ errexit and traps

    def failed(self, status: int, node: object = None) -> None:
        """A command (not in a condition) returned non-zero: ERR trap, then set -e."""
        if self.errexit_off or (node is not None and node is self.inverted):
            return
        trap = self.traps.get("ERR")
        if trap and not self.in_trap and (not self.funcnames or "E" in self.opts):
            self.run_trap(trap, status)
        if "e" in self.opts:
            raise ExitSignal(status)

    def run_trap(self, source: str, status: int, exit_trap: bool = False) -> None:
        """Run a trap's commands; their LINENO counts from the line that triggered it (for
        the EXIT trap, from 1, as in bash)."""
        saved = self.last_status
        lineno = self.lineno
        self.in_trap = True
        try:
            self.last_status = status
            try:
                line0 = 0 if exit_trap else max(lineno - 1, 0)
                program = self.parser(source, line0=line0).parse_program()
            except ShellSyntaxError:
                self.run_string(source)  # reports the error
            else:
                self.run_program(program)
        finally:
            self.in_trap = False
            self.last_status = saved
            self.lineno = lineno

    def run_string(self, source: str, name: str = "") -> int:
        try:
            program = parse(source, extglob="extglob" in self.shopts, utf8=self.utf8_locale(),
                            aliases=self.parse_aliases())
        except ShellSyntaxError as e:
            head = f"{self.script_name}: {name + ': ' if name else ''}line {{lineno}}: "
            self.write_err(e.format(head))
            self.last_status = 2
            return 2
        return self.run_program(program)

    def run_script(self, script: str, name: str, fds: dict[int, Stream]) -> int:
        """Shell text run in a subshell of this shell with the descriptors given (the image's
        `ctx.exec`, kshell.image.commands): this shell's state is left as it was."""
        child = self.fork()
        child.fds = fds
        return child.run_subshell(lambda: child.run_string(script, name))

    # ------------------------------------------------------------------ simple commands

    def exec_simple(self, node: SimpleCommand) -> int:
        self.lineno = node.line
        self.comsub_status = None
        try:
            argv = expand_words(self, node.words) if node.words else []
            if not argv:
                return self._assign_only(node)
            status = self.run_command(argv, node)
            self.last_arg = argv[-1]
        except ReadonlyError as e:
            self.error(f"{e.name}: readonly variable")
            self.last_status = 1
            if not node.words:
                raise AbortCommand(1) from None
            status = 1
        except CommandError as e:
            self.error(e.message)
            status = self.last_status = e.status
        except ArithSyntaxError as e:
            self.error(e.text)
            raise AbortCommand(1) from None
        self.pipestatus = [status]
        if status:
            self.failed(status, node)
        return status

    def _assign_only(self, node: SimpleCommand) -> int:
        for a in node.assigns:
            self.assign(a)
        if node.redirects:
            opened: list[Stream] = []
            try:
                redir.apply(self, node.redirects, self.fds, opened, in_shell=True)
            except CommandError as e:
                self.error(e.message)
                self.last_status = 1
                self.pipestatus = [1]
                self.failed(1, node)  # errexit holds for it too, as for any simple command
                return 1
            finally:
                for s in opened:
                    s.close()
        status = self.comsub_status or 0
        self.last_status = status
        self.pipestatus = [status]  # bash: every simple command sets PIPESTATUS, `x=1` too
        if status:
            self.failed(status, node)
        return status

    def assign(self, a: Assignment) -> None:
        value = a.value
        if type(value) is ArrayLiteral:
            if a.subscript is not None:
                self.list_to_element(a)
            if "x" in self.opts:
                self.trace_assignment(a, trace_array_literal(value))
            self.assign_array(a.name, self.array_items(value), a.append)
            return
        if a.subscript is not None and not a.subscript.parts:  # `a[]=x`
            self.error(f"{a.name}[]: bad array subscript")
            raise AbortCommand(1)
        text = expand_string(self, value)
        if "x" in self.opts:
            self.trace_assignment(a, trace_value(text, self.utf8_locale()))
        if a.subscript is not None:
            self.set_element(a.name, self.element_key(a.name, a.subscript), text, a.append)
        else:
            self.assign_scalar(a.name, text, a.append)
            if a.name == "PATH":  # bash empties its table of command paths on any PATH=
                self.hashed = {}

    def assignment_arg(self, a: Assignment) -> str:
        """A declaration builtin's assignment argument, as a str that keeps its structure."""
        value = a.value
        if type(value) is ArrayLiteral:
            if a.subscript is not None:
                self.list_to_element(a)
            items = self.array_items(value)
            text = ""
        else:
            items = None
            text = expand_string(self, value)
        sub = expand_string(self, a.subscript) if a.subscript is not None else None
        shown = f"{a.name}{'[' + sub + ']' if sub is not None else ''}{'+' if a.append else ''}={text}"
        arg = AssignArg(shown)
        arg.name = a.name
        arg.subscript = sub
        arg.append = a.append
        arg.items = items
        arg.value = text
        return arg

    def array_items(self, lit: ArrayLiteral) -> list[tuple[str | None, str]]:
        items: list[tuple[str | None, str]] = []
        for el in lit.elements:
            if type(el) is KeyedElement:
                items.append((expand_string(self, el.key), expand_string(self, el.value)))
            else:
                for text in expand_word(self, el):
                    items.append((None, text))
        return items

    def trace_assignment(self, a: Assignment, shown: str) -> None:
        """set -x: `name[sub]+=value` as written, with the value as expanded (or, for an array,
        its words as written)."""
        sub = f"[{word_text(a.subscript)}]" if a.subscript is not None else ""
        self.write_err(f"{self.ps4()}{a.name}{sub}{'+' if a.append else ''}={shown}\n")

    def trace_words(self, words: list[str]) -> None:
        """set -x: a command's words. An array assignment given to a declaration builtin is
        shown first on its own, and then by its name (`+ a=('1' '2')`, `+ declare -a a`)."""
        utf8 = self.utf8_locale()
        shown = []
        for w in words:
            if isinstance(w, AssignArg) and w.items is not None:
                items = " ".join(("" if k is None else f"[{_sq(k)}]=") + _sq(v) for k, v in w.items)
                self.write_err(f"{self.ps4()}{w.name}{'+' if w.append else ''}=({items})\n")
                shown.append(w.name)
            else:
                shown.append(trace_quote(w, utf8))
        self.write_err(self.ps4() + " ".join(shown) + "\n")

    def ps4(self) -> str:
        var = self.vars.table.get("PS4")
        if var is None or type(var.value) is not str:
            return "+ "
        text = var.value
        if '"' not in text and ("$" in text or "`" in text or "\\" in text):
            try:  # expanded as in double quotes
                text = expand_string(self, parse(f'x="{text}"').commands[0].assigns[0].value)
            except Exception:  # noqa: BLE001 - a PS4 that does not expand is shown as written
                text = var.value
        return (text[:1] * self.trace_level + text[1:]) if text else ""

    def run_command(self, argv: list[str], node: SimpleCommand | None) -> int:
        """Run a command by name: function, builtin, tool, or a VFS executable on $PATH."""
        assigns = node.assigns if node is not None else ()
        values = self.prefix_values(assigns) if assigns else ()
        if "x" in self.opts:
            utf8 = self.utf8_locale()
            for a, text in zip(assigns, values, strict=True):
                self.trace_assignment(a, trace_value(text, utf8))
            self.trace_words(argv)
        name = argv[0]
        redirects = node.redirects if node is not None else ()
        saved_fds = self.fds
        opened: list[Stream] = []
        saved_vars: list[tuple[str, Var | None]] = []
        if name == "exec" and len(argv) == 1 and redirects and name not in self.funcs:
            self.exec_redirects(redirects)
            self.last_status = 0
            return 0
        try:
            if redirects:
                self.fds = redir.apply(self, redirects, saved_fds, opened,
                                      in_shell=name in self.funcs or name in self.builtins)
            if assigns:
                saved_vars = self._temp_assign(assigns, values)
            func = self.funcs.get(name)
            if func is not None:
                status = self.call_function(func, argv)
            else:
                builtin = self.builtins.get(name)
                if builtin is not None:
                    status = self.call_builtin(builtin, argv)
                else:
                    tool = self.tool(name)
                    if tool is not None:
                        self.hash_hit(name, f"/usr/bin/{name}")
                        status = regexes.running(self.session, tool, self, argv)
                    else:
                        status = self.run_external(argv)
        except WriteError as e:
            status = self.write_failed(name, e)
        finally:
            if saved_vars:
                self._restore_temp(saved_vars)
            self.fds = saved_fds
            for stream in opened:
                try:
                    stream.close()  # what is still buffered is written now
                except WriteError as e:
                    status = self.write_failed(name, e)
                except OSError as e:
                    self.error(f"{stream.name}: {redir.os_message(e)}")
        self.last_status = status
        return status

    def exec_redirects(self, redirects) -> None:
        """`exec 3>f 4<g`: redirections that stay for the rest of the shell. Streams no
        longer named by any descriptor are closed."""
        opened: list[Stream] = []
        old = self.fds
        self.fds = redir.apply(self, redirects, old, opened, unbuffered=True)
        live = {id(s) for s in self.fds.values()}
        for stream in old.values():
            if id(stream) not in live and not isinstance(stream, (PipeReader, PipeWriter)) \
                    and stream not in self.session_streams():
                with contextlib.suppress(OSError, WriteError):  # unbuffered: its writes already said so
                    stream.close()

    def session_streams(self) -> list[Stream]:
        return []

    def write_failed(self, name: str, e: WriteError) -> int:
        """A command's output could not be written (a full quota): bash's words for a builtin
        (`bash: line 1: echo: write error: ...`), GNU's for a tool or a program (`seq: write
        error: ...`)."""
        prefix = self.prefix() if name in self.builtins or name in self.funcs else ""
        self.write_err(f"{prefix}{name}: write error: {e.strerror}\n")
        return 1

    def call_builtin(self, builtin: Builtin, argv: list[str]) -> int:
        try:
            return builtin(self, argv)
        except WriteError as e:
            return self.write_failed(argv[0], e)
        except OSError as e:
            if e.errno == 9 or e.errno == 28 or e.errno == 5:
                self.error(f"{argv[0]}: write error: {redir.os_message(e)}")
                return 1
            raise

    def _temp_assign(self, assigns, values: list[str]) -> list[tuple[str, Var | None]]:
        """`a=1 cmd`: the (already expanded) values, exported for the command's duration, as
        a scope of their own (see Variables.temps)."""
        saved: list[tuple[str, Var | None]] = []
        for a, text in zip(assigns, values, strict=True):
            self.bind_temp(saved, a, text)
        if saved:
            self.vars.push_temps(saved)
        return saved

    def _restore_temp(self, saved: list[tuple[str, Var | None]]) -> None:
        self.vars.pop_temps(saved)
        table = self.vars.table
        for name, old in reversed(saved):
            if old is None:
                table.pop(name, None)
            else:
                table[name] = old

    # ------------------------------------------------------------------ functions

    def exec_funcdef(self, node: FunctionDef) -> int:
        if any(c in node.name for c in "$`'\"\\"):  # bash: a name with quoting or an expansion
            self.lineno = node.line
            self.error(f"`{node.name}': not a valid identifier")
            self.last_status = 1
            return 1
        self.funcs[node.name] = node
        self.last_status = 0
        return 0

    def call_function(self, func: FunctionDef, argv: list[str]) -> int:
        if self.call_depth >= self.limits.recursion_depth:
            raise LimitExceeded(f"{func.name}: maximum function nesting level exceeded "
                                f"({self.limits.recursion_depth})")
        funcnest = self.vars.table.get("FUNCNEST")
        if funcnest is not None and type(funcnest.value) is str and funcnest.value.isdigit():
            nest = int(funcnest.value)
            if nest > 0 and len(self.funcnames) >= nest:
                self.error(f"{func.name}: maximum function nesting level exceeded ({nest})")
                return 1
        saved_pos = self.positional
        self.positional = argv[1:]
        self.funcnames.append(func.name)
        self.call_lines.append(self.lineno)
        self.vars.push_frame()
        self.call_depth += 1
        saved_loop = self.loop_depth
        self.loop_depth = 0
        lineno = self.lineno
        try:
            status = self.execute(func.body)
        except ReturnSignal as r:
            status = r.status
        finally:
            self.lineno = lineno  # back on the line of the call
            self.loop_depth = saved_loop
            self.call_depth -= 1
            self.vars.pop_frame()
            self.funcnames.pop()
            self.call_lines.pop()
            self.positional = saved_pos
        self.last_status = status
        return status

    # ------------------------------------------------------------------ external commands

    def tool(self, name: str) -> Builtin | None:
        """The K tool a command name runs, None when there is none or when an executable K
        file of that name comes first on $PATH: tools live in /usr/bin and /bin, and a
        directory before those (`~/bin`, an image's /usr/local/bin) wins, as in bash."""
        tool = self.session.tools.get(name)
        if tool is None:
            return None
        session = self.session
        path = self.get_param_or_none("PATH")
        if session.shadowed_path != path:
            session.shadowed, session.shadowed_path = {}, path
        shadowed = session.shadowed.get(name)
        if shadowed is None:
            shadowed, relative = False, False
            for d in (path or "").split(":"):
                if d.rstrip("/") in ("/usr/bin", "/bin"):
                    break
                relative = relative or not d.startswith("/")
                candidate = f"{d or '.'}/{name}"
                try:
                    inode = self.fs.stat(candidate)
                except OSError:
                    continue
                if inode.is_reg and self.fs.access(candidate, 1) and self.fs.host_path(candidate) is None:
                    shadowed = True
                    break
            if not relative:  # what a relative directory holds depends on the cwd
                session.shadowed[name] = shadowed
        return None if shadowed else tool

    def hash_table(self) -> dict[str, tuple[str, int]]:
        """bash's table of the paths commands were found at (`hash`): emptied when PATH
        changes, as an assignment to PATH empties bash's."""
        path = self.get_param_or_none("PATH")
        if path != self.hashed_for:
            self.hashed, self.hashed_for = {}, path
        return self.hashed

    def hash_hit(self, name: str, path: str) -> None:
        """A command found on $PATH (or at its hashed path) ran: counted as bash counts it."""
        table = self.hash_table()
        old = table.get(name)
        table[name] = (path, old[1] + 1 if old is not None and old[0] == path else 1)

    def run_external(self, argv: list[str]) -> int:
        from kshell.exec.scripts import run_path  # on first use, not at start-up

        return run_path(self, argv)

    # ------------------------------------------------------------------ compound commands

    def _with_redirects(self, redirects, fn) -> int:
        if not redirects:
            return fn()
        saved = self.fds
        opened: list[Stream] = []
        try:
            try:
                self.fds = redir.apply(self, redirects, saved, opened, in_shell=True)
            except CommandError as e:
                self.error(e.message)
                self.last_status = 1
                self.failed(1)
                return 1
            status = fn()
        finally:
            self.fds = saved
            for s in opened:
                try:
                    s.close()  # a group's output still buffered is written now
                except WriteError as e:
                    self.error(f"write error: {e.strerror}")
                    status = 1
                except OSError:
                    pass
        return status

    def exec_group(self, node: BraceGroup) -> int:
        if node.redirects:
            self.lineno = node.line
            return self._with_redirects(node.redirects, lambda: self.execute_list(node.body))
        return self.execute_list(node.body)

    def exec_subshell(self, node: Subshell) -> int:
        self.lineno = node.line

        def body() -> int:
            child = self.fork()
            child.loop_depth = 0  # bash: `(break)` in a loop is "only meaningful in a loop"
            status = child.run_subshell(lambda: child.execute_list(node.body))
            self.last_status = status
            return status
        status = self._with_redirects(node.redirects, body)
        self.pipestatus = [status]  # bash waits for the subshell's process, which sets it
        if status:
            self.failed(status, node)
        return status

    def run_subshell(self, fn) -> int:
        """Run fn in this (forked) state as a subshell: exit, errors and traps end here."""
        try:
            status = fn()
        except ExitSignal as e:
            status = e.status
        except FatalError:
            status = 1
        except AbortCommand as e:
            status = e.status
        except (BreakLoop, ContinueLoop):
            status = self.last_status
        except ReturnSignal as r:
            status = r.status
        except CommandError as e:
            self.error(e.message)
            status = e.status
        self.last_status = status
        trap = self.traps.pop("EXIT", None)
        if trap:
            try:
                self.run_trap(trap, status, exit_trap=True)
            except (ExitSignal, FatalError) as e:  # `exit N` or set -e in the trap: the subshell's status
                status = self.last_status = e.status
        self.cleanup_tmp()
        return status

    def exec_if(self, node: If) -> int:
        def run() -> int:
            for clause in node.clauses:
                self.errexit_off += 1
                try:
                    cond = self.execute_list(clause.condition)
                finally:
                    self.errexit_off -= 1
                if cond == 0:
                    return self.execute_list(clause.body)
            if node.else_body is not None:
                return self.execute_list(node.else_body)
            self.last_status = 0
            return 0
        return self._with_redirects(node.redirects, run) if node.redirects else run()

    def tick(self) -> None:
        session = self.session
        session.iterations += 1
        if session.iterations > self.limits.loop_iterations:
            raise LimitExceeded(f"loop iteration limit exceeded ({self.limits.loop_iterations})")
        if session.iterations & 1023 == 0 or session.cancel.stopped:  # a stop parks at once
            session.cancel.check()

    def loop_pass(self, commands) -> tuple[int, bool]:
        """One pass of a loop's body: (its status, whether a `break` aimed at this loop ends
        it). A `continue` ends the pass with continue's own status, 0; a jump aimed at an
        enclosing loop goes on outward."""
        try:
            return self.execute_list(commands), False
        except BreakLoop as b:
            self.pass_outward(b)
            return b.status, True
        except ContinueLoop as c:
            self.pass_outward(c)
            return 0, False

    @staticmethod
    def pass_outward(jump: BreakLoop | ContinueLoop) -> None:
        """`break N` / `continue N` with N > 1 is aimed at an enclosing loop: re-raise it there
        with one level fewer; otherwise this loop handles it."""
        if jump.levels > 1:
            jump.levels -= 1
            raise jump

    def exec_while(self, node: While) -> int:
        def run() -> int:
            status = 0
            until = node.until
            cond_cmds = node.condition
            body = node.body
            self.loop_depth += 1
            try:
                while True:
                    self.tick()
                    self.errexit_off += 1
                    try:
                        cond = self.execute_list(cond_cmds)
                    except BreakLoop as b:
                        self.pass_outward(b)
                        status = b.status
                        break
                    except ContinueLoop as c:
                        self.pass_outward(c)
                        continue
                    finally:
                        self.errexit_off -= 1
                    if (cond == 0) == until:
                        break
                    status, broke = self.loop_pass(body)
                    if broke:
                        break
            finally:
                self.loop_depth -= 1
            self.last_status = status
            return status
        return self._with_redirects(node.redirects, run) if node.redirects else run()

    def _loop_words(self, node: For | Select) -> list[str] | None:
        """The words a `for` or `select` goes over ("$@" without `in`), None (status 1, said)
        when its variable is no name."""
        self.lineno = node.line
        if not self.is_valid_name(node.var):
            self.error(f"`{node.var}': not a valid identifier")
            self.last_status = 1
            return None
        return list(self.positional) if node.words is None else expand_words(self, node.words)

    def exec_for(self, node: For) -> int:
        def run() -> int:
            items = self._loop_words(node)
            if items is None:
                return 1
            status = 0
            name = node.var
            body = node.body
            self.loop_depth += 1
            try:
                trace = "x" in self.opts
                if trace:  # bash shows the words as written
                    shown = '"$@"' if node.words is None else " ".join(
                        trace_source_word(w) for w in node.words)
                for item in items:
                    self.tick()
                    if trace:
                        self.write_err(f"{self.ps4()}for {name} in {shown}\n")
                    self.assign_scalar(name, item)
                    status, broke = self.loop_pass(body)
                    if broke:
                        break
            except ReadonlyError as e:
                self.error(f"{e.name}: readonly variable")
                status = 1
            finally:
                self.loop_depth -= 1
            self.last_status = status
            return status
        return self._with_redirects(node.redirects, run) if node.redirects else run()

    def exec_select(self, node: Select) -> int:
        def run() -> int:
            items = self._loop_words(node)
            if items is None:
                return 1
            status = 0
            show = True
            self.loop_depth += 1
            try:
                while items:
                    self.tick()
                    choice = self._select_query(items, show)
                    if choice is None:  # end of input
                        status = 1
                        break
                    self.assign_scalar(node.var, choice)
                    status, broke = self.loop_pass(node.body)
                    if broke:
                        break
                    show = not self.get_param_or_none("REPLY")  # bash's ksh-compatible select
            except ReadonlyError as e:
                self.error(f"{e.name}: readonly variable")
                status = 1
            finally:
                self.loop_depth -= 1
            self.last_status = status
            return status
        return self._with_redirects(node.redirects, run) if node.redirects else run()

    def _select_query(self, items: list[str], show: bool) -> str | None:
        """bash's select_query: the menu (when `show`, and again after an empty line), PS3,
        a line read into REPLY as `read` reads it; the item its number names, "" for any
        other answer, None at the end of input (after a newline on stdout, as bash)."""
        ps3 = self.get_param_or_none("PS3")
        columns = self.get_param_or_none("COLUMNS") or ""
        width = int(columns) if columns.isdigit() and int(columns) > 0 else 80
        while True:
            if show:
                self.write_err(menu.select_menu(items, width))
            self.write_err("#? " if ps3 is None else ps3)
            if self.builtins["read"](self, ["read"]) != 0:
                self.out("\n")
                return None
            reply = self.get_param_or_none("REPLY") or ""
            if not reply:
                show = True
                continue
            number = reply.strip(" \t\n")
            if not (number.lstrip("+-").isascii() and number.lstrip("+-").isdigit()) or number[1:2] in ("+", "-"):
                return ""
            index = int(number)
            return items[index - 1] if 1 <= index <= len(items) else ""

    def exec_arith_for(self, node: ArithFor) -> int:
        def run() -> int:
            self.lineno = node.line
            status = 0
            self.loop_depth += 1
            try:
                trace = "x" in self.opts
                if node.init is not None:
                    self.eval_arith(node.init, "((", trace, loop=True)
                elif trace:
                    self.write_err(f"{self.ps4()}(( 1 ))\n")
                while True:
                    self.tick()
                    if node.cond is not None:
                        if not self.eval_arith(node.cond, "((", trace, loop=True):
                            break
                    elif trace:
                        self.write_err(f"{self.ps4()}(( 1 ))\n")
                    status, broke = self.loop_pass(node.body)
                    if broke:
                        break
                    if node.step is not None:
                        self.eval_arith(node.step, "((", trace, loop=True)
                    elif trace:
                        self.write_err(f"{self.ps4()}(( 1 ))\n")
            except _ArithCmdFailed:
                status = 1  # bash: a part that fails ends the loop, and the script goes on
            finally:
                self.loop_depth -= 1
            self.last_status = status
            return status
        return self._with_redirects(node.redirects, run) if node.redirects else run()

    def exec_case(self, node: Case) -> int:
        def run() -> int:
            self.lineno = node.line
            if "x" in self.opts:
                self.write_err(f"{self.ps4()}case {trace_source_word(node.word)} in\n")
            word = expand_string(self, node.word)
            nocase = "nocasematch" in self.shopts
            utf8 = self.utf8_locale()
            status = 0
            items = node.items
            i = 0
            matched_any = False
            while i < len(items):
                item = items[i]
                if any(pat.match(expand_pattern(self, p), word, nocase, utf8) for p in item.patterns):
                    matched_any = True
                    status = self.execute_list(item.body)
                    term = item.terminator
                    while term == ";&" and i + 1 < len(items):
                        i += 1
                        status = self.execute_list(items[i].body)
                        term = items[i].terminator
                    if term != ";;&":
                        break
                i += 1
            if not matched_any:
                status = 0
            self.last_status = status
            return status
        return self._with_redirects(node.redirects, run) if node.redirects else run()

    def exec_andor(self, node: AndOr) -> int:
        self.errexit_off += 1
        try:
            status = self.execute(node.first)
        finally:
            self.errexit_off -= 1
        rest = node.rest
        last = len(rest) - 1
        for i, (op, cmd) in enumerate(rest):
            if (op == "&&") == (status == 0):
                if i == last:
                    status = self.execute(cmd)
                else:
                    self.errexit_off += 1
                    try:
                        status = self.execute(cmd)
                    finally:
                        self.errexit_off -= 1
        self.last_status = status
        return status

    def exec_background(self, node: Background) -> int:
        """`cmd &`: run concurrently, in a subshell on its own thread, as a job of the session."""
        job = self.session.jobs.start(self, node.command)
        self.last_bg = job.pid
        self.last_status = 0
        return 0

    # ------------------------------------------------------------------ pipelines

    def exec_pipeline(self, node: Pipeline) -> int:
        if node.timed:
            return self.exec_timed(node)
        return self.run_untimed(node)

    def exec_timed(self, node: Pipeline) -> int:
        """`time [-p] pipeline`: run it, then print TIMEFORMAT's report (or POSIX's) to the
        shell's standard error as it is then: the pipeline's own redirections do not take the
        report, an `exec 2>f` inside it does. As in bash, leaving by exit, break or an error
        still reports, leaving by `return` does not. See kshell.exec.timing for what the user
        and system times count."""
        meter = timing.CpuMeter()
        outer = self.cpu_meters
        self.cpu_meters = outer + (meter,)
        report = True
        try:
            return self.run_untimed(node)
        except ReturnSignal:
            report = False
            raise
        finally:
            self.cpu_meters = outer
            if report:
                self.time_report(meter, node.time_posix)

    def time_report(self, meter: timing.CpuMeter, posix: bool) -> None:
        real, user, system = meter.stop()
        fmt = timing.POSIX_FORMAT if posix else self.get_param_or_none("TIMEFORMAT")
        if fmt is None:
            fmt = timing.DEFAULT_FORMAT
        if not fmt:
            return
        try:
            self.write_err(timing.format_report(fmt, real, user, system) + "\n")
        except timing.TimeFormatError as e:
            self.error(f"TIMEFORMAT: `{e.char}': invalid format character")

    def run_untimed(self, node: Pipeline) -> int:
        commands = node.commands
        if len(commands) == 1:
            if node.negated:
                # bash exempts what `!` runs from set -e only when set -e is on as it starts:
                # a `set -e` inside (in a function, say) applies in full
                exempt = "e" in self.opts
                self.errexit_off += exempt
                outer, self.inverted = self.inverted, commands[0]
                try:
                    status = self.execute(commands[0])
                finally:
                    self.errexit_off -= exempt
                    self.inverted = outer
                status = 0 if status else 1
                if type(commands[0]) in (Cond, ArithCommand):  # PIPESTATUS: their status as `!` left it
                    self.pipestatus = [status]              # (bash), every other command's own
            else:
                status = self.execute(commands[0])
            self.last_status = status
            return status
        statuses = self.run_pipeline(node)
        self.pipestatus = statuses
        self._set_pipestatus(statuses)
        if self.pipefail or "pipefail" in self.opts:
            status = next((s for s in reversed(statuses) if s), 0)
        else:
            status = statuses[-1]
        if node.negated:
            status = 0 if status else 1
        self.last_status = status
        if status and not node.negated:
            self.failed(status)
        return status

    def _set_pipestatus(self, statuses: list[int]) -> None:
        pass

    def run_pipeline(self, node: Pipeline) -> list[int]:
        commands = node.commands
        n = len(commands)
        cancel = self.session.cancel
        pipes = [Pipe(self.limits.pipeline_buffer, cancel) for _ in range(n - 1)]
        statuses = [0] * n
        errors: list[BaseException] = []
        threads: list[threading.Thread] = []

        def stage(i: int, child: Interp) -> None:
            reader = PipeReader(pipes[i - 1]) if i > 0 else None
            writer = PipeWriter(pipes[i]) if i < n - 1 else None
            try:
                if reader is not None:
                    child.fds[0] = reader
                if writer is not None:
                    child.fds[1] = writer
                    if node.stderr[i]:
                        child.fds[2] = writer
                statuses[i] = child.run_subshell(lambda: child.execute(commands[i]))
            except SigPipe:
                statuses[i] = 141
            except LimitExceeded as e:
                cancel.cancelled = True
                cancel.reason = cancel.reason or e.message
                errors.append(e)
                statuses[i] = 1
            except BaseException as e:  # noqa: BLE001 - reported by the caller
                errors.append(e)
                statuses[i] = 1
            finally:
                if writer is not None:
                    writer.close()
                if reader is not None:
                    reader.close()

        # `shopt -s lastpipe` without job control: the last stage runs in this shell (`read`
        # there sets this shell's variables), in this thread
        here = "lastpipe" in self.shopts and "m" not in self.opts
        for i in range(n - here):
            try:
                threads.append(self.start_thread(stage, (i, self.fork())))
            except AbortCommand:
                for p in pipes:  # the stages already started see their pipes end, and end
                    p.close_reader()
                    p.close_writer()
                raise
        if here:
            self._last_stage_here(commands[-1], pipes, statuses, threads)
        for t in threads:
            while t.is_alive():
                t.join(0.1)
                if cancel.cancelled or time.monotonic() > cancel.deadline:
                    cancel.cancelled = True
                    cancel.reason = cancel.reason or "command exceeded the wall-time limit"
                    for p in pipes:
                        p.close_reader()
                        p.close_writer()
        if errors:
            raise errors[0]
        return statuses

    def _last_stage_here(self, command: Any, pipes: list[Pipe], statuses: list[int],
                         threads: list[threading.Thread]) -> None:
        """lastpipe's last stage: this interpreter reads the last pipe; an `exit` there ends the
        shell once the other stages have seen their pipes close."""
        reader = PipeReader(pipes[-1])
        saved = self.fds
        self.fds = dict(saved)
        self.fds[0] = reader
        try:
            statuses[-1] = self.execute(command)
        except SigPipe:
            statuses[-1] = 141
        except BaseException:
            for p in pipes:
                p.close_reader()
                p.close_writer()
            for t in threads:
                t.join()
            raise
        finally:
            self.fds = saved
            reader.close()

    # ------------------------------------------------------------------ [[ ]] and (( ))

    def exec_cond(self, node: Cond) -> int:
        self.lineno = node.line

        def run() -> int:
            try:
                status = 0 if self.cond(node.expr) else 1
            except ArithSyntaxError as e:
                self.error(f"[[: {e.text}")
                status = 1
            except ReadonlyError as e:  # `[[ x=1 -eq 1 ]]` assigns
                self.error(f"{e.name}: readonly variable")
                status = 1
            except _CondError as e:
                self.error(e.args[0])
                status = 2
            except _RegexError:
                status = 2
            self.last_status = status
            return status
        status = self._with_redirects(node.redirects, run) if node.redirects else run()
        self.pipestatus = [status]  # as bash's [[ ]] and (( )) set it
        if status:
            self.failed(status, node)
        return status

    def trace_cond_term(self, invert: bool, op: str, left: str, right: Word | None = None) -> None:
        """bash's xtrace of one `[[ ]]` term, printed as it is evaluated (so `&&` and `||`
        show only the terms that ran): operands expanded, quoted pattern characters escaped."""
        if right is None:
            text = f"{op} {left or chr(39) * 2}"
        else:
            shown = expand_pattern(self, right, trace="regex" if op == "=~" else "glob") \
                if op in ("==", "=", "!=", "=~") else expand_string(self, right)
            text = f"{left or chr(39) * 2} {op} {shown or chr(39) * 2}"
        self.write_err(f"{self.ps4()}[[ {'! ' if invert else ''}{text} ]]\n")

    def cond(self, node, invert: bool = False) -> bool:
        """Evaluate a `[[ ]]` tree. `invert` only says, for the trace, that the term stands
        under an odd number of `!` (bash prints `[[ ! -z x ]]`, but not for `! ( ... )`)."""
        t = type(node)
        if t is CondBinary:
            op = node.op
            left = expand_string(self, node.left)
            if op in ("==", "=", "!="):
                right = expand_pattern(self, node.right)
                if "x" in self.opts:
                    self.trace_cond_term(invert, op, left, node.right)
                result = pat.match(right, left, "nocasematch" in self.shopts, self.utf8_locale())
                return result if op != "!=" else not result
            if op == "=~":
                if "x" in self.opts:
                    self.trace_cond_term(invert, op, left, node.right)
                return self.regex_match(left, node.right)
            right = expand_string(self, node.right)
            if "x" in self.opts:
                self.trace_cond_term(invert, op, left, node.right)
            return binary_test(self, op, left, right, arith=True)
        if t is CondUnary:
            operand = expand_string(self, node.operand)
            if "x" in self.opts:
                self.trace_cond_term(invert, node.op, operand)
            return unary_test(self, node.op, operand)
        if t is CondNot:
            expr = node.expr
            shown = True
            while type(expr) is CondNot and not expr.grouped:
                expr = expr.expr
                shown = not shown
            result = self.cond(expr, shown and not expr.grouped and type(expr) in (CondBinary, CondUnary))
            return not result if shown else result
        if t is CondAnd:
            return self.cond(node.left) and self.cond(node.right)
        if t is CondOr:
            return self.cond(node.left) or self.cond(node.right)
        raise TypeError(t)

    def regex_match(self, text: str, word: Word) -> bool:
        """`[[ text =~ word ]]`: bash's ERE for the word (kshell.exec.ere), matched by the
        locale's characters (a byte each outside UTF-8) leftmost-longest; BASH_REMATCH set."""
        import re

        import regex

        from kshell.exec.ere import EreError, LineSearch, bash_regex, ere_to_regex, lossy_search, lossy_sources
        from kshell.exec.ere import groups as ere_groups

        utf8 = self.utf8_locale()
        pieces = [(t if utf8 else to_bytes(t), k == QUO) for t, k in pattern_pieces(self, word)]
        flags = re.DOTALL | (0 if utf8 else re.ASCII)  # re's flags: regexes.compile maps them
        if "nocasematch" in self.shopts:
            flags |= re.IGNORECASE
        subject = text if utf8 else to_bytes(text)
        cancel = self.session.cancel
        try:
            ere = bash_regex(pieces)
            lines = LineSearch(ere, utf8) if "\n" in text else None
            lossy = lossy_sources(ere, utf8, lines is not None and lines.anchored)
            if lossy is not None:  # an anchor in a copy of a repeated group, glibc loses it
                m = lossy_search(*(regexes.compile(x, flags, cancel, posix=True) for x in lossy), subject)
            elif lines is None or not lines.anchored:
                m = regexes.compile(ere_to_regex(ere, utf8), flags, cancel, posix=True).search(subject)
            else:  # anchors at the newlines the match takes, as glibc's
                sources = (lines.loose, lines.quirk_at, lines.strict)
                m = lines.search(*(regexes.compile(x, flags, cancel, posix=True) for x in sources), subject)
        except EreError:
            raise _RegexError() from None
        except regex.error:
            raise _RegexError() from None
        table = self.vars.table
        if m is None:
            table["BASH_REMATCH"] = Var({}, 8)
            return False
        groups = {i: g or "" for i, g in enumerate(ere_groups(m), 1)}
        groups[0] = m.group(0)
        if not utf8:
            groups = {i: from_bytes(g) for i, g in groups.items()}
        table["BASH_REMATCH"] = Var(dict(sorted(groups.items())), 8)
        return True

    def exec_arith_command(self, node: ArithCommand) -> int:
        self.lineno = node.line

        def run() -> int:
            try:
                value = self.eval_arith(node.arith, "((", "x" in self.opts)
            except _ArithCmdFailed:
                value = 0
            status = 0 if value else 1
            self.last_status = status
            return status
        status = self._with_redirects(node.redirects, run) if node.redirects else run()
        self.pipestatus = [status]  # as bash's [[ ]] and (( )) set it
        if status:
            self.failed(status, node)
        return status

    # ------------------------------------------------------------------ arithmetic

    def eval_arith(self, expr: ArithExpr, context: str = "", trace: bool = False,
                   loop: bool = False) -> int:
        """Evaluate an arithmetic expression; `trace` prints it first as set -x does for
        `(( ))` (and, with `loop`, for a part of `for (( ; ; ))`, leading blanks dropped)."""
        node = expr.expr
        try:
            if trace:
                text = expr.text if node is not None else self.expand_arith_text(expr.word)
                shown = text.lstrip(" \t\n") if loop else text
                self.write_err(f"{self.ps4()}(( {shown} ))\n")
                if node is None:
                    return arith.evaluate_text(self, text)
            if node is not None:
                try:
                    return arith.compiled(node)(self)
                except arith.ArithError as e:
                    raise ArithSyntaxError(expr.text, e.message, e.token) from None
            return arith.evaluate(self, expr)
        except ArithSyntaxError as e:
            self.error(f"{context}: {e.text}" if context else e.text)
            if context == "((":
                raise _ArithCmdFailed() from None
            raise AbortCommand(1) from None
        except ReadonlyError as e:
            self.error(f"{e.name}: readonly variable")
            if context == "((":
                raise _ArithCmdFailed() from None
            raise AbortCommand(1) from None

    def eval_arith_text(self, text: str, discard: bool = False) -> int:
        """Evaluate expanded arithmetic text; an error abandons the command (`discard`: for a
        subscript or an integer variable, with bash's DISCARD: see DiscardCommand)."""
        try:
            return arith.evaluate_text(self, text)
        except ArithSyntaxError as e:
            self.error(e.text)
            raise (DiscardCommand if discard else AbortCommand)(1) from None

    def expand_arith_text(self, word: Word) -> str:
        return expand_string(self, word)

    # ------------------------------------------------------------------ expansions with effects

    def tilde(self, user: str) -> str:
        if user == "":
            home = self.get_param_or_none("HOME")
            return home if home is not None else self.fs.home.decode("utf-8", "surrogateescape")
        if user == "+":
            return self.get_param("PWD")
        if user == "-":
            old = self.get_param_or_none("OLDPWD")
            return old if old is not None else "~-"
        if user == "root":
            return "/root"
        if user == "agent" or user == self.get_param_or_none("USER"):
            return self.fs.home.decode("utf-8", "surrogateescape")
        return "~" + user

    def command_substitution(self, part: CommandSub) -> str:
        if part.program is None:
            err = part.error
            assert err is not None
            self.write_err(err.format(f"{self.script_name}: command substitution: line {{lineno}}: "))
            self.comsub_status = 2
            return ""
        program = part.program
        if len(program.commands) == 1:
            only = program.commands[0]
            if (type(only) is SimpleCommand and not only.words and not only.assigns
                    and len(only.redirects) == 1 and only.redirects[0].op == "<"):
                return self._read_file_substitution(only)
        child = self.fork()
        child.trace_level = self.trace_level + 1
        sink = BufferSink(min(self.limits.variable_bytes, self.limits.output_bytes),
                          "command substitution output")
        child.fds[1] = sink
        program = part.program
        lineno = self.lineno
        try:
            status = child.run_subshell(lambda: child.run_program(program))
        except SigPipe:
            status = 141
        self.lineno = lineno
        self.comsub_status = status
        self.last_status = status
        data = bytes(sink.data)
        if b"\0" in data:
            self.write_err(f"{self.prefix()}warning: command substitution: ignored null byte in input\n")
            data = data.replace(b"\0", b"")
        return data.decode("utf-8", "surrogateescape").rstrip("\n")

    def _read_file_substitution(self, node: SimpleCommand) -> str:
        """`$(< file)`: the file's contents, without running a command."""
        opened: list[Stream] = []
        try:
            fds = redir.apply(self, node.redirects, self.fds, opened)
            data = fds[0].read() if fds.get(0) is not None else b""
            self.comsub_status = 0
        except CommandError as e:
            self.error(e.message)
            self.comsub_status = 1
            data = b""
        except OSError as e:
            self.error(f"{redir.os_message(e)}")
            self.comsub_status = 1
            data = b""
        finally:
            for s in opened:
                s.close()
        self.last_status = self.comsub_status
        return data.decode("utf-8", "surrogateescape").rstrip("\n")

    def process_substitution(self, part: ProcessSub) -> str:
        """`<(cmd)`: cmd runs to completion into a VFS temp file whose path is the word.
        `>(cmd)`: the word names a temp file; cmd reads it once the command has finished."""
        path = self.new_tmp_path()
        if part.direction == "<":
            child = self.fork()
            opened: list[Stream] = []
            try:
                stream = redir.open_path(self, path, ">", self.fds, False)
            except CommandError as e:
                self.error(f"process substitution: {e.message}")
                raise AbortCommand(1) from None
            opened.append(stream)
            child.fds[1] = stream
            try:
                child.run_subshell(lambda: child.run_program(part.program))
            finally:
                stream.close()
            self.pending_tmp.append(path)
            return path
        try:
            self.fs.write_file(path, b"")
        except OSError as e:
            self.error(f"process substitution: {path}: {redir.os_message(e)}")
            raise AbortCommand(1) from None
        self.pending_tmp.append(path)
        self.pending_outsubs.append((path, part.program))
        return path

    def new_tmp_path(self) -> str:
        with self.session.lock:
            self.session.tmp_counter += 1
            n = self.session.tmp_counter
        try:
            self.fs.stat("/tmp")
        except FileNotFoundError:
            # A state made before /tmp came with it (agent creation makes it now): the machine's
            # /tmp, root's and 1777 whoever asks, not the agent's (who cannot write in `/`)

            with contextlib.suppress(OSError):
                PathFS(self.fs.vfs, cred=ROOT, umask=0).mkdir("/tmp", 0o1777, parents=True)
        except OSError:
            pass
        return f"/tmp/.k-procsub-{self.session.pid}-{n}"

    def cleanup_tmp(self) -> None:
        outsubs = self.pending_outsubs
        if outsubs:
            self.pending_outsubs = []
            for path, program in outsubs:
                child = self.fork()
                try:
                    data = self.fs.read_file(path)
                except OSError:
                    data = b""

                child.fds[0] = BytesSource(data)
                child.run_subshell(lambda c=child, p=program: c.run_program(p))
        if self.pending_tmp:
            for path in self.pending_tmp:
                with contextlib.suppress(OSError):
                    self.fs.unlink(path)
            self.pending_tmp = []

    def heredoc_text(self, doc: HereDoc) -> bytes:
        if doc.quoted:
            return doc.text.encode("utf-8", "surrogateescape")
        if doc.body is None:
            if doc.error is not None:
                self.write_err(doc.error.format(f"{self.script_name}: line {{lineno}}: "))
            raise AbortCommand(2)
        return expand_string(self, doc.body).encode("utf-8", "surrogateescape")


class _CondError(Exception):
    pass


class _RegexError(Exception):
    """`[[ =~ ]]` with an invalid regular expression: status 2, no message (as bash)."""


class _ArithCmdFailed(AbortCommand):
    """`(( ))` with an evaluation error: the command fails with status 1; the line goes on."""


def _sq(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"
