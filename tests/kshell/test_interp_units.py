"""The expansion stages on their own: IFS splitting, pattern operations, the arithmetic
evaluator's C semantics, streams and pipes."""

from __future__ import annotations

import threading

import pytest
from interp_support import KWorld

from kshell.core.errors import SigPipe
from kshell.exec.streams import BytesSource, Pipe, PipeReader, PipeWriter
from kshell.expand import pattern
from kshell.expand.fields import ifs_split


@pytest.mark.parametrize(("text", "ifs", "expected"), [
    ("a b  c", " \t\n", (["a", "b", "c"], False, False)),
    ("  a b  ", " \t\n", (["a", "b"], True, True)),
    ("a::b", ":", (["a", "", "b"], False, False)),
    (":a", ":", (["", "a"], False, False)),
    ("a:", ":", (["a"], False, True)),
    (" a : b ", " :", (["a", "b"], True, True)),
])
def test_ifs_split_follows_bash_rules(text: str, ifs: str, expected: tuple) -> None:
    assert ifs_split(text, ifs) == expected


@pytest.mark.parametrize(("value", "pat", "longest", "expected"), [
    ("a/b/c", "*/", False, "b/c"), ("a/b/c", "*/", True, "c"), ("abc", "x*", True, "abc"),
    ("abc", "", False, "abc"), ("aXbXc", "*X", True, "c"),
])
def test_strip_prefix(value: str, pat: str, longest: bool, expected: str) -> None:
    assert pattern.strip_prefix(value, pat, longest) == expected


@pytest.mark.parametrize(("value", "pat", "longest", "expected"), [
    ("a/b/c", "/*", False, "a/b"), ("a/b/c", "/*", True, "a"), ("file.tar.gz", ".*", False, "file.tar"),
])
def test_strip_suffix(value: str, pat: str, longest: bool, expected: str) -> None:
    assert pattern.strip_suffix(value, pat, longest) == expected


@pytest.mark.parametrize(("value", "pat", "repl", "mode", "expected"), [
    ("abcabc", "b", "X", "/", "aXcabc"), ("abcabc", "b", "X", "//", "aXcaXc"),
    ("abcabc", "a*c", "X", "/", "X"), ("abc", "[ab]", "", "//", "c"), ("abc", "a", "X", "/#", "Xbc"),
    ("abc", "c", "X", "/%", "abX"), ("abc", "b", "X", "/#", "abc"),
])
def test_replace_modes(value: str, pat: str, repl: str, mode: str, expected: str) -> None:
    assert pattern.replace(value, pat, repl, mode) == expected


def test_pattern_escape_makes_glob_characters_literal() -> None:
    assert pattern.match(pattern.escape("a*[b]?"), "a*[b]?")
    assert not pattern.match(pattern.escape("a*"), "abc")


@pytest.fixture
def interp(tmp_path):
    world = KWorld(tmp_path)
    shell = world.shell()
    yield shell.interp
    world.close()


@pytest.mark.parametrize(("expr", "value"), [
    ("7/2", 3), ("-7/2", -3), ("-7%3", -1), ("7%-3", 1), ("2**62*2", -(2**63)), ("1<<64", 1),
    ("-1>>1", -1), ("9223372036854775807+1", -(2**63)), ("16#ff+8#17+2#11", 255 + 15 + 3),
    ("0x1F", 31), ("010", 8), ("1?2:3", 2), ("0||0", 0), ("3&&4", 1), ("~0", -1), ("!5", 0),
    ("x=5, x*=3, x", 15), ("y++ + y", 1),
])
def test_arithmetic_has_c_semantics(interp, expr: str, value: int) -> None:
    from kshell.expand.arith import evaluate_text

    assert evaluate_text(interp, expr) == value


def test_arithmetic_division_by_zero_names_the_token(interp) -> None:
    from kshell.expand.arith import evaluate_text
    from kshell.syntax.errors import ArithSyntaxError

    with pytest.raises(ArithSyntaxError) as info:
        evaluate_text(interp, "4 / (2-2)")
    assert info.value.text == '4 / (2-2): division by 0 (error token is "(2-2)")'


def test_arithmetic_variables_hold_expressions(interp) -> None:
    from kshell.expand.arith import evaluate_text

    interp.assign_scalar("a", "b+1")
    interp.assign_scalar("b", "4")
    assert evaluate_text(interp, "a*2") == 10


def test_input_stream_reads_lines_and_keeps_the_rest() -> None:
    s = BytesSource(b"one\ntwo\nthree")
    assert s.read_until(b"\n") == b"one\n"
    assert s.read(2) == b"tw"
    assert s.read_until(b"\n") == b"o\n"
    assert s.read_until(b"\n") == b"three"
    assert s.read() == b""


def test_pipe_blocks_the_writer_at_capacity_and_breaks_when_the_reader_leaves() -> None:
    pipe = Pipe(4, None)
    writer, reader = PipeWriter(pipe), PipeReader(pipe)
    outcome: list[object] = []

    def produce() -> None:
        try:
            for _ in range(100):
                writer.write(b"xx")
        except SigPipe as e:  # no OSError: a tool's `except OSError` must not turn it into a message
            outcome.append(e)

    t = threading.Thread(target=produce)
    t.start()
    assert reader.read(2) == b"xx"
    reader.close()
    t.join(5)
    assert not t.is_alive()
    assert isinstance(outcome[0], SigPipe) and not isinstance(outcome[0], OSError)
