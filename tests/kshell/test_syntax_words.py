"""Words: quoting structure, parameter expansions, substitutions, tilde and literal text."""

from __future__ import annotations

import pytest

from kshell.syntax import ShellSyntaxError, parse
from kshell.syntax.ast import (
    AnsiCQuoted,
    ArithSub,
    BadSubst,
    CommandSub,
    DoubleQuoted,
    Escaped,
    Literal,
    Param,
    ParamExp,
    PrefixNames,
    ProcessSub,
    SimpleCommand,
    SingleQuoted,
    TildePrefix,
    Word,
)


def words(src: str, **kw: bool) -> list[Word]:
    """The words of the single simple command in src (after the command name)."""
    (cmd,) = parse(src, **kw).commands
    assert isinstance(cmd, SimpleCommand)
    return list(cmd.words[1:])  # type: ignore[arg-type]


def parts(src: str, **kw: bool) -> tuple:
    """The parts of the one argument word of `echo <src>`."""
    (word,) = words("echo " + src, **kw)
    return word.parts


def test_plain_word_is_one_literal() -> None:
    assert parts("hello") == (Literal("hello"),)


def test_glob_and_brace_text_stay_literal_for_expansion() -> None:
    assert [w.parts for w in words("echo *.txt a{b,c}d [a-z]? {1..3}")] == [
        (Literal("*.txt"),), (Literal("a{b,c}d"),), (Literal("[a-z]?"),), (Literal("{1..3}"),)]


def test_single_quotes_keep_text_verbatim() -> None:
    assert parts("'a $b \\c \"d'") == (SingleQuoted('a $b \\c "d'),)


def test_double_quotes_hold_expansions() -> None:
    assert parts('"a $b ${c} $(d) \\$e"') == (DoubleQuoted((
        Literal("a "), Param("b"), Literal(" "), Param("c"), Literal(" "),
        CommandSub(parse("d")), Literal(" $e"))),)


def test_backslash_outside_quotes_quotes_one_character() -> None:
    assert parts("\\$x\\ y") == (Escaped("$"), Literal("x"), Escaped(" "), Literal("y"))


def test_backslash_in_double_quotes_escapes_only_dollar_backquote_quote_backslash() -> None:
    assert parts('"\\a\\$\\"\\\\\\`"') == (DoubleQuoted((Literal('\\a$"\\`'),)),)


def test_line_continuation_is_removed_inside_words() -> None:
    assert parts('ab\\\ncd"e\\\nf"') == (Literal("abcd"), DoubleQuoted((Literal("ef"),)))


def test_trailing_backslash_at_end_of_input_is_literal() -> None:
    assert parts("a\\") == (Literal("a\\"),)


@pytest.mark.parametrize(("body", "value"), [
    ("a\\nb", "a\nb"), ("\\t", "\t"), ("\\\\", "\\"), ("\\'", "'"), ('\\"', '"'),
    ("\\x41", "A"), ("\\x4g", "\x04g"), ("\\101", "A"), ("\\u00e9", "é"), ("\\U0001F600", "😀"),
    ("\\e", "\x1b"), ("\\E", "\x1b"), ("\\a", "\a"), ("\\b", "\b"), ("\\f", "\f"),
    ("\\r", "\r"), ("\\v", "\v"), ("\\cA", "\x01"), ("\\?", "?"), ("\\q", "\\q"),
    ("\\x", "\\x"), ("plain", "plain"),
])
def test_ansi_c_quotes_decode_escapes_like_bash(body: str, value: str) -> None:
    assert parts(f"$'{body}'") == (AnsiCQuoted(value),)


def test_ansi_c_high_bytes_are_surrogate_escaped() -> None:
    (part,) = parts("$'\\xff\\303\\251'")
    assert part.text.encode("utf-8", "surrogateescape") == b"\xff\xc3\xa9"


def test_ansi_c_nul_ends_the_string() -> None:
    assert parts("$'ab\\0cd'x") == (AnsiCQuoted("ab"), Literal("x"))


def test_locale_string_is_double_quoted() -> None:
    assert parts('$"hi $x"') == (DoubleQuoted((Literal("hi "), Param("x"))),)


def test_lone_dollar_is_literal() -> None:
    assert [w.parts for w in words('echo $ a$ "$" "$ "')] == [
        (Literal("$"),), (Literal("a$"),), (DoubleQuoted((Literal("$"),)),),
        (DoubleQuoted((Literal("$ "),)),)]


def test_simple_and_positional_parameters() -> None:
    assert [w.parts for w in words("echo $x ${x} $1 ${10} $10 $x_y1")] == [
        (Param("x"),), (Param("x"),), (Param("1"),), (Param("10"),),
        (Param("1"), Literal("0")), (Param("x_y1"),)]


@pytest.mark.parametrize("name", list("@*#?$!-0"))
def test_special_parameters(name: str) -> None:
    assert parts(f"${name}") == (Param(name),)
    assert parts("${" + name + "}") == (Param(name),)


W = Word


def lit(text: str) -> Word:
    return Word((Literal(text),))


@pytest.mark.parametrize(("src", "op", "arg", "arg2"), [
    ("${x:-y}", ":-", lit("y"), None), ("${x-y}", "-", lit("y"), None),
    ("${x:=y}", ":=", lit("y"), None), ("${x=y}", "=", lit("y"), None),
    ("${x:?msg}", ":?", lit("msg"), None), ("${x?msg}", "?", lit("msg"), None),
    ("${x:+y}", ":+", lit("y"), None), ("${x+y}", "+", lit("y"), None),
    ("${x#p*}", "#", lit("p*"), None), ("${x##p*}", "##", lit("p*"), None),
    ("${x%s}", "%", lit("s"), None), ("${x%%s*}", "%%", lit("s*"), None),
    ("${x/a/b}", "/", lit("a"), lit("b")), ("${x//a/b}", "//", lit("a"), lit("b")),
    ("${x/#a/b}", "/#", lit("a"), lit("b")), ("${x/%a/b}", "/%", lit("a"), lit("b")),
    ("${x/a}", "/", lit("a"), None), ("${x:1}", ":", lit("1"), None),
    ("${x:1:2}", ":", lit("1"), lit("2")), ("${x: -1}", ":", lit(" -1"), None),
    ("${x::2}", ":", W(()), lit("2")), ("${x^}", "^", None, None), ("${x^^}", "^^", None, None),
    ("${x,}", ",", None, None), ("${x,,}", ",,", None, None),
    ("${x^^[ab]}", "^^", lit("[ab]"), None), ("${x@Q}", "@Q", None, None),
    ("${x:-}", ":-", W(()), None),
])
def test_parameter_operators(src: str, op: str, arg: Word | None, arg2: Word | None) -> None:
    assert parts(src) == (ParamExp("x", op=op, arg=arg, arg2=arg2),)


def test_length_indirection_and_prefix_names() -> None:
    assert [w.parts for w in words("echo ${#x} ${#a[@]} ${!x} ${!a[@]} ${!pre*} ${!pre@} ${#}")] \
        == [(ParamExp("x", length=True),), (ParamExp("a", "@", length=True),),
            (ParamExp("x", indirect=True),), (ParamExp("a", "@", indirect=True),),
            (PrefixNames("pre", False),), (PrefixNames("pre", True),), (Param("#"),)]


def test_array_subscripts_are_words() -> None:
    assert [w.parts for w in words('echo ${a[i+1]} ${a[@]} ${a[*]} ${a["k y"]} ${a[$i]:-d}')] \
        == [(ParamExp("a", lit("i+1")),), (ParamExp("a", "@"),), (ParamExp("a", "*"),),
            (ParamExp("a", W((DoubleQuoted((Literal("k y"),)),))),),
            (ParamExp("a", W((Param("i"),)), op=":-", arg=lit("d")),)]


def test_operand_words_keep_their_quoting() -> None:
    assert parts("${x:-$y \"z\" 'w'}") == (ParamExp("x", op=":-", arg=W((
        Param("y"), Literal(" "), DoubleQuoted((Literal("z"),)), Literal(" "),
        SingleQuoted("w")))),)


def test_single_quotes_are_literal_in_a_double_quoted_default_operand() -> None:
    assert parts("\"${x:-'a'}\"") == (DoubleQuoted((ParamExp("x", op=":-", arg=lit("'a'")),)),)


def test_single_quotes_quote_in_a_double_quoted_pattern() -> None:
    assert parts("\"${x#'a'}\"") == (
        DoubleQuoted((ParamExp("x", op="#", arg=W((SingleQuoted("a"),))),)),)


def test_escaped_slash_does_not_end_the_pattern() -> None:
    assert parts('"${x/\\//-}"') == (
        DoubleQuoted((ParamExp("x", op="/", arg=W((Escaped("/"),)), arg2=lit("-")),)),)


def test_braces_do_not_nest_in_operands_but_substitutions_do() -> None:
    assert parts("${x:-{a}b}") == (ParamExp("x", op=":-", arg=lit("{a")), Literal("b}"))
    assert parts("${x:-${y:-a}b}") == (ParamExp("x", op=":-", arg=Word((
        ParamExp("y", op=":-", arg=lit("a")), Literal("b")))),)
    assert parts("${x:-$(echo })}") == (ParamExp("x", op=":-", arg=W((
        CommandSub(parse("echo }")),))),)


@pytest.mark.parametrize("src", ["${x!}", "${}", "${x:}", "${#x:-y}", "${x[}", "${x@Z}"])
def test_bad_substitution_is_left_for_expansion_to_report(src: str) -> None:
    assert parts(src) == (BadSubst(src),)


def test_command_substitution_parses_the_inner_program() -> None:
    (part,) = parts("$(echo a | tr a b; x=1)")
    assert part == CommandSub(parse("echo a | tr a b; x=1"))


def test_command_substitution_handles_case_patterns_quotes_and_comments() -> None:
    inner = 'case x in a) echo ")" \'(\' ;; (b) echo;; esac # )'
    (part,) = parts(f"$({inner}\n)")
    assert isinstance(part, CommandSub) and part.program is not None
    assert part.program.commands == parse(inner).commands


def test_command_substitution_may_be_empty() -> None:
    assert parts("$()") == (CommandSub(parse("")),)


def test_command_substitutions_nest() -> None:
    (part,) = parts('"$(echo "$(echo in)")"')
    inner = part.parts[0].program.commands[0].words[1].parts[0]
    assert inner.parts[0] == CommandSub(parse("echo in"))


def test_backticks_apply_bash_backslash_rules() -> None:
    (part,) = parts("`echo \\$HOME \\\\ \\`date\\` \\a`")
    assert part.backtick and part.program == parse("echo $HOME \\ `date` \\a")


def test_backticks_in_double_quotes_unescape_double_quotes() -> None:
    (dq,) = parts('"`echo \\"hi\\"`"')
    assert dq.parts == (CommandSub(parse('echo "hi"'), backtick=True),)


def test_syntax_error_inside_backticks_is_deferred_to_expansion() -> None:
    (part,) = parts("`fi`")
    assert part.program is None and part.error is not None
    assert part.error.messages == ("syntax error near unexpected token `fi'", "`fi'")


def test_arithmetic_substitution_keeps_text_and_tree() -> None:
    (part,) = parts("$((1 + 2 * x))")
    assert isinstance(part, ArithSub)
    assert part.arith.text == "1 + 2 * x" and part.arith.word == lit("1 + 2 * x")
    assert type(part.arith.expr).__name__ == "ArithBinary"


def test_arithmetic_with_expansions_is_parsed_after_expansion() -> None:
    (part,) = parts('$(( $x + "1" ))')
    assert part.arith.expr is None
    assert part.arith.word == W((Literal(" "), Param("x"), Literal(" + 1 ")))


def test_invalid_static_arithmetic_is_left_for_evaluation() -> None:
    (part,) = parts("$((1 +* 2))")
    assert part.arith.text == "1 +* 2" and part.arith.expr is None


def test_dollar_double_paren_closed_separately_is_command_substitution() -> None:
    assert parts("$((echo a) )") == (CommandSub(parse("(echo a)")),)


def test_legacy_dollar_bracket_arithmetic() -> None:
    (part,) = parts("$[1+2]")
    assert isinstance(part, ArithSub) and part.arith.text == "1+2"


def test_process_substitutions() -> None:
    assert [w.parts for w in words("cat <(ls) >(wc -l) a<(b)")] == [
        (ProcessSub("<", parse("ls")),), (ProcessSub(">", parse("wc -l")),),
        (Literal("a"), ProcessSub("<", parse("b")))]


def test_tilde_prefix_at_word_start() -> None:
    assert [w.parts for w in words('echo ~ ~/x ~root/y ~"x" a~ "~"')] == [
        (TildePrefix(""),), (TildePrefix(""), Literal("/x")),
        (TildePrefix("root"), Literal("/y")), (Literal("~"), DoubleQuoted((Literal("x"),))),
        (Literal("a~"),), (DoubleQuoted((Literal("~"),)),)]


def test_tilde_after_equals_and_colons_in_assignment_like_words() -> None:
    assert parts("PATH=~/bin:$P:~x:a~") == (
        Literal("PATH="), TildePrefix(""), Literal("/bin:"), Param("P"), Literal(":"),
        TildePrefix("x"), Literal(":a~"))


def test_extended_glob_groups_need_extglob() -> None:
    with pytest.raises(ShellSyntaxError):
        parse("echo @(a|b)")
    assert parts("@(a|b c)*(x)", extglob=True) == (Literal("@(a|b c)*(x)"),)
