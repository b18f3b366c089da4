"""Commands: simple commands, redirections, here-documents, lists, compound commands,
functions, [[ ]], (( )), line numbers and the incremental entry points."""

from __future__ import annotations

import pytest

from kshell.syntax import Parser, ShellSyntaxError, is_complete, parse
from kshell.syntax.ast import (
    AndOr,
    ArithCommand,
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
    DoubleQuoted,
    For,
    Select,
    FunctionDef,
    HereDoc,
    If,
    KeyedElement,
    Literal,
    Param,
    Pipeline,
    Redirect,
    SimpleCommand,
    SingleQuoted,
    Subshell,
    While,
    Word,
)


def lit(text: str) -> Word:
    return Word((Literal(text),))


def one(src: str, **kw: bool):
    (cmd,) = parse(src, **kw).commands
    return cmd


def simple(*argv: str, line: int = 1) -> SimpleCommand:
    return SimpleCommand((), tuple(lit(a) for a in argv), (), line)


def error(src: str) -> ShellSyntaxError:
    with pytest.raises(ShellSyntaxError) as info:
        parse(src)
    return info.value


# --------------------------------------------------------------------------- simple commands


def test_simple_command_has_words_and_line() -> None:
    assert one("echo hello world") == simple("echo", "hello", "world")


def test_prefix_assignments_in_every_form() -> None:
    cmd = one("a=1 b+=2 c[1]=x d[$k]+=y e= f=(1 2) g+=([k]=v z) env")
    assert cmd.assigns == (
        Assignment("a", lit("1")), Assignment("b", lit("2"), append=True),
        Assignment("c", lit("x"), subscript=lit("1")),
        Assignment("d", lit("y"), append=True, subscript=Word((Param("k"),))),
        Assignment("e", Word(())), Assignment("f", ArrayLiteral((lit("1"), lit("2")))),
        Assignment("g", ArrayLiteral((KeyedElement(lit("k"), lit("v")), lit("z"))),
                   append=True))
    assert cmd.words == (lit("env"),)


def test_assignment_only_command() -> None:
    assert one("x=1") == SimpleCommand((Assignment("x", lit("1")),), (), (), 1)


def test_array_literal_allows_newlines_and_comments() -> None:
    cmd = one("a=(\n  1 # one\n  '2 3'\n)")
    assert cmd.assigns[0].value == ArrayLiteral((lit("1"), Word((SingleQuoted("2 3"),))))


def test_assignment_after_the_command_word_is_an_argument() -> None:
    assert one("echo a=1") == simple("echo", "a=1")


def test_array_literal_outside_an_assignment_is_an_error() -> None:
    assert error("echo a=(1)").message == "syntax error near unexpected token `('"


def test_declaration_builtins_take_assignments_as_arguments() -> None:
    cmd = one("declare -A m=([k]=v) x=1 y")
    assert cmd.words == (
        lit("declare"), lit("-A"),
        Assignment("m", ArrayLiteral((KeyedElement(lit("k"), lit("v")),))),
        Assignment("x", lit("1")), lit("y"))


@pytest.mark.parametrize(("src", "op", "fd", "target"), [
    ("> f", ">", None, "f"), (">> f", ">>", None, "f"), ("< f", "<", None, "f"),
    ("2> f", ">", 2, "f"), ("2>&1", ">&", 2, "1"), ("&> f", "&>", None, "f"),
    ("&>> f", "&>>", None, "f"), (">| f", ">|", None, "f"), ("3<> f", "<>", 3, "f"),
    ("4>&-", ">&", 4, "-"), ("0<&3", "<&", 0, "3"), ("5<&-", "<&", 5, "-"),
    ("<<< word", "<<<", None, "word"), ("10>f", ">", 10, "f"),
])
def test_redirection_operators(src: str, op: str, fd: int | None, target: str) -> None:
    assert one(f"cmd {src}").redirects == (Redirect(op, fd, lit(target)),)


def test_redirections_may_appear_anywhere_in_a_command() -> None:
    cmd = one(">out echo a 2>&1 b")
    assert cmd.words == (lit("echo"), lit("a"), lit("b"))
    assert [r.op for r in cmd.redirects] == [">", ">&"]


def test_digits_not_touching_the_operator_are_a_word() -> None:
    cmd = one("echo 2 >f a2>g")
    assert cmd.words == (lit("echo"), lit("2"), lit("a2"))
    assert [r.fd for r in cmd.redirects] == [None, None]


def test_varname_redirection_names_its_variable() -> None:
    assert one("exec {fd}>file {in}<&0 {fd}>&-").redirects == (
        Redirect(">", None, lit("file"), "fd"), Redirect("<&", None, lit("0"), "in"),
        Redirect(">&", None, lit("-"), "fd"))


def test_braces_not_touching_the_operator_are_a_word() -> None:
    cmd = one("echo {fd} >f")
    assert cmd.words == (lit("echo"), lit("{fd}"))
    assert cmd.redirects == (Redirect(">", None, lit("f")),)


# --------------------------------------------------------------------------- here-documents


def heredoc(src: str) -> HereDoc:
    (redirect,) = parse(src).commands[0].redirects
    assert isinstance(redirect.target, HereDoc)
    return redirect.target


def test_heredoc_body_is_parsed_for_expansions() -> None:
    doc = heredoc('cat <<EOF\na $x "q" \\$y\nEOF\n')
    assert (doc.delimiter, doc.quoted, doc.text) == ("EOF", False, 'a $x "q" \\$y\n')
    assert doc.body == Word((Literal("a "), Param("x"), Literal(' "q" $y\n')))


@pytest.mark.parametrize("delimiter", ["'EOF'", '"EOF"', "\\EOF", "E'O'F"])
def test_quoted_delimiter_keeps_the_body_literal(delimiter: str) -> None:
    doc = heredoc(f"cat <<{delimiter}\n$x `y`\nEOF\n")
    assert doc.quoted and doc.delimiter == "EOF"
    assert doc.body == Word((SingleQuoted("$x `y`\n"),))


def test_dash_heredoc_strips_leading_tabs() -> None:
    doc = heredoc("cat <<-EOF\n\t\tone\n\ttwo\n\tEOF\n")
    assert doc.strip_tabs and doc.text == "one\ntwo\n"


def test_backslash_newline_joins_lines_of_an_unquoted_body() -> None:
    assert heredoc("cat <<EOF\na\\\nEOF\nEOF\n").text == "aEOF\n"


def test_several_heredocs_on_one_line_are_read_in_order() -> None:
    cmds = parse("cat <<A; cat <<B\n1\nA\n2\nB\necho done").commands
    assert [c.redirects[0].target.text for c in cmds[:2]] == ["1\n", "2\n"]
    assert cmds[2] == simple("echo", "done", line=6)


def test_heredoc_inside_command_substitution() -> None:
    cmd = one("x=$(cat <<EOF\nhi)\nEOF\n)")
    (sub,) = cmd.assigns[0].value.parts
    assert sub.program.commands[0].redirects[0].target.text == "hi)\n"


def test_heredoc_ended_by_end_of_file_is_a_warning() -> None:
    program = parse("echo hi\ncat <<EOF\nabc")
    assert program.commands[1].redirects[0].target.text == "abc\n"
    (warning,) = program.warnings
    assert (warning.lineno, warning.message) == (
        3, "here-document at line 2 delimited by end-of-file (wanted `EOF')")


def test_error_inside_heredoc_body_is_deferred_to_expansion() -> None:
    doc = heredoc("cat <<EOF\n$(fi)\nEOF\n")
    assert doc.body is None and doc.error is not None
    assert doc.error.message == "syntax error near unexpected token `fi'"


def test_here_string() -> None:
    assert one('cat <<< "$x"').redirects == (
        Redirect("<<<", None, Word((DoubleQuoted((Param("x"),)),))),)


# --------------------------------------------------------------------------- lists


def test_pipeline_with_negation_and_stderr_links() -> None:
    assert one("! a | b |& c") == Pipeline(
        (simple("a"), simple("b"), simple("c")), True, (False, True), 1)


def test_double_negation_and_lone_bang() -> None:
    assert one("! ! true") == simple("true")
    assert one("!") == Pipeline((SimpleCommand((), (), (), 1),), True, (), 1)


def test_time_marks_the_pipeline_after_any_bangs() -> None:
    assert one("time a | b") == Pipeline((simple("a"), simple("b")), False, (False,), 1, True)
    assert one("! time -p a") == Pipeline((simple("a"),), True, (), 1, True, True)
    assert one("time -- ! a") == one("time -p ! a")
    assert one("time time a") == Pipeline((simple("a"),), False, (), 1, True)
    assert one("time -- -p a") == Pipeline((simple("-p", "a"),), False, (), 1, True, True)
    assert one("time") == Pipeline((SimpleCommand((), (), (), 1),), False, (), 1, True)
    assert parse("time -p; b").commands[0].time_posix
    assert parse("time a && b").commands[0].first.timed
    assert one("a | time b") == Pipeline((simple("a"), simple("time", "b")), False, (False,), 1)
    assert error("time &").message == "syntax error near unexpected token `&'"


def test_and_or_lists_are_flat_and_left_to_right() -> None:
    assert one("a && b || c") == AndOr(simple("a"), (("&&", simple("b")), ("||", simple("c"))), 1)


def test_background_and_sequential_commands() -> None:
    assert parse("a & b; c &").commands == (
        Background(simple("a"), 1), simple("b"), Background(simple("c"), 1))


def test_newlines_may_follow_pipes_and_logical_operators() -> None:
    assert one("a &&\n\n b |\n c") == AndOr(
        simple("a"), (("&&", Pipeline((simple("b", line=3), simple("c", line=4)), False,
                                      (False,), 3)),), 1)


def test_subshell_and_group_take_redirections() -> None:
    assert one("( a; b ) > f") == Subshell((simple("a"), simple("b")),
                                           (Redirect(">", None, lit("f")),), 1)
    assert one("{ a; b & } 2>/dev/null") == BraceGroup(
        (simple("a"), Background(simple("b"), 1)), (Redirect(">", 2, lit("/dev/null")),), 1)


# --------------------------------------------------------------------------- compound commands


def test_if_elif_else() -> None:
    cmd = one("if a; then b; elif c\nthen d; else e; fi")
    assert isinstance(cmd, If)
    assert [(c.condition, c.body) for c in cmd.clauses] == [
        ((simple("a"),), (simple("b"),)), ((simple("c"),), (simple("d", line=2),))]
    assert cmd.else_body == (simple("e", line=2),)


@pytest.mark.parametrize(("src", "words"), [
    ("for x in a b; do :; done", ("a", "b")), ("for x in; do :; done", ()),
    ("for x; do :; done", None), ("for x do :; done", None), ("for x\ndo :; done", None),
    ("for x in a\ndo :; done", ("a",)), ("for x in a; { :; }", ("a",)),
    ("for x in do done; do :; done", ("do", "done")),
])
def test_for_loop_forms(src: str, words: tuple[str, ...] | None) -> None:
    cmd = one(src)
    assert isinstance(cmd, For) and cmd.var == "x"
    assert cmd.words == (None if words is None else tuple(lit(w) for w in words))


def test_arithmetic_for_loop_with_empty_parts() -> None:
    cmd = one("for ((i = 0; i < 3; i++)) do echo $i; done")
    assert isinstance(cmd, ArithFor)
    assert (cmd.init.text, cmd.cond.text, cmd.step.text) == ("i = 0", " i < 3", " i++")
    forever = one("for ((;;)); do break; done")
    assert (forever.init, forever.cond, forever.step) == (None, None, None)


def test_arithmetic_for_needs_three_expressions() -> None:
    assert error("for ((i=0;i<3)); do :; done").messages == (
        "syntax error: arithmetic expression required", "syntax error: `((i=0;i<3))'")


def test_while_and_until_loops() -> None:
    assert one("while a; do b; done") == While((simple("a"),), (simple("b"),), False, (), 1)
    assert one("until a; do b; done < f").until


def test_case_items_terminators_and_optional_paren() -> None:
    cmd = one("case $x in\n a|b) one;;\n (c) two ;&\n *) ;;&\n d) last\nesac")
    assert isinstance(cmd, Case) and cmd.word == Word((Param("x"),))
    assert [(tuple(p.parts[0].text for p in i.patterns), i.terminator, i.line)
            for i in cmd.items] == [
        (("a", "b"), ";;", 2), (("c",), ";&", 3), (("*",), ";;&", 4), (("d",), ";;", 5)]
    assert cmd.items[2].body == ()


def test_case_with_no_items() -> None:
    assert one("case x in esac").items == ()


@pytest.mark.parametrize("src", [
    "f() { echo; }", "function f { echo; }", "function f() { echo; }", "f ( ) { echo; }",
    "f()\n\n{ echo; }", "function f\n{ echo; }",
])
def test_function_definition_forms(src: str) -> None:
    cmd = one(src)
    assert cmd == FunctionDef("f", BraceGroup((simple("echo", line=cmd.body.line),), (),
                                              cmd.body.line), 1)


def test_function_body_may_be_any_compound_command_with_redirections() -> None:
    assert isinstance(one("f() ( echo )").body, Subshell)
    assert isinstance(one("f() if a; then b; fi").body, If)
    body = one("f() { echo; } > out 2>&1").body
    assert [r.op for r in body.redirects] == [">", ">&"]


def test_conditional_expression_tree() -> None:
    cmd = one("[[ -f x && ( $a == b* || ! c =~ ^d ) ]]")
    assert cmd == Cond(CondAnd(
        CondUnary("-f", lit("x")),
        CondOr(CondBinary("==", Word((Param("a"),)), lit("b*")),
               CondNot(CondBinary("=~", lit("c"), lit("^d"))))), (), 1)


def test_conditional_bare_word_tests_non_empty() -> None:
    assert one("[[ $x ]]").expr == CondUnary("-n", Word((Param("x"),)))


def test_conditional_regex_takes_parentheses_pipes_and_inner_blanks() -> None:
    assert one("[[ x =~ ^(a|b c)$ ]]").expr == CondBinary("=~", lit("x"), lit("^(a|b c)$"))


def test_conditional_less_and_greater_compare_strings() -> None:
    assert one("[[ a < b ]]").expr == CondBinary("<", lit("a"), lit("b"))


def test_conditional_pattern_allows_extended_globs() -> None:
    assert one("[[ x == @(a|b) ]]").expr == CondBinary("==", lit("x"), lit("@(a|b)"))


def test_conditional_allows_newlines_between_terms() -> None:
    assert one("[[\n -n a &&\n b ]]").expr == CondAnd(CondUnary("-n", lit("a")),
                                                      CondUnary("-n", lit("b")))


def test_conditional_bare_word_cannot_be_followed_by_a_newline() -> None:
    assert error("[[ a\n]]").message == \
        "unexpected token `newline', conditional binary operator expected"


def test_arithmetic_command() -> None:
    cmd = one("(( i += 2 ))")
    assert isinstance(cmd, ArithCommand) and cmd.arith.text == " i += 2 "
    assert type(cmd.arith.expr).__name__ == "ArithAssign"


def test_double_paren_closed_separately_is_a_nested_subshell() -> None:
    assert one("((echo a); echo b)") == Subshell(
        (Subshell((simple("echo", "a"),), (), 1), simple("echo", "b")), (), 1)


def test_reserved_words_count_only_in_command_position() -> None:
    assert one("echo if then fi { }") == simple("echo", "if", "then", "fi", "{", "}")


def test_close_brace_needs_a_separator() -> None:
    assert not is_complete("{ echo }")
    assert one("{ echo a;}") == BraceGroup((simple("echo", "a"),), (), 1)


def test_comments_are_skipped_but_hash_inside_a_word_is_text() -> None:
    assert parse("echo a#b # c\n# full line\necho d").commands == (
        simple("echo", "a#b"), simple("echo", "d", line=3))


def test_line_continuation_between_words() -> None:
    assert one("echo a \\\n  b") == simple("echo", "a", "b")


def test_commands_record_their_starting_line() -> None:
    src = 'a\nb "x\ny"\ncat <<E\n1\nE\nif c\nthen d\nfi\n\ne $(\nf\n)'
    cmds = parse(src).commands
    assert [c.line for c in cmds] == [1, 2, 4, 7, 11]
    assert cmds[3].clauses[0].body[0].line == 8
    assert cmds[4].words[1].parts[0].program.commands[0].line == 12


def test_unsupported_reserved_words_are_rejected_precisely() -> None:
    assert error("coproc x").message == "`coproc': reserved word not supported by this shell"
    assert one("echo coproc") == simple("echo", "coproc")


def test_select_parses_as_for_does() -> None:
    cmd = one("select v in a 'b c'; do echo $v; break; done")
    assert isinstance(cmd, Select) and cmd.var == "v" and len(cmd.words) == 2 and len(cmd.body) == 2
    assert one("select v\ndo :; done").words is None
    assert error("select ((i=0; i<1; i++)); do :; done").message == "syntax error near unexpected token `('"


def test_command_substitution_body_keeps_its_own_structure() -> None:
    cmd = one('echo "$(for i in 1 2; do echo $i; done)"')
    (dq,) = cmd.words[1].parts
    (sub,) = dq.parts
    assert isinstance(sub, CommandSub) and isinstance(sub.program.commands[0], For)


# --------------------------------------------------------------------------- entry points


def test_parse_line_returns_one_line_at_a_time_like_bash() -> None:
    parser = Parser("echo a; echo b\nfi\necho c")
    assert parser.parse_line() == [simple("echo", "a"), simple("echo", "b")]
    with pytest.raises(ShellSyntaxError) as info:
        parser.parse_line()
    assert info.value.lineno == 2


def test_parse_line_reads_heredocs_of_its_line() -> None:
    parser = Parser("cat <<E\nbody\nE\necho after")
    (cmd,) = parser.parse_line()
    assert cmd.redirects[0].target.text == "body\n"
    assert parser.parse_line() == [simple("echo", "after", line=4)]
    assert parser.parse_line() is None


def test_extglob_may_be_switched_on_between_lines() -> None:
    parser = Parser("shopt -s extglob\necho @(a|b)")
    parser.parse_line()
    parser.extglob = True
    assert parser.parse_line() == [simple("echo", "@(a|b)", line=2)]


@pytest.mark.parametrize(("src", "complete"), [
    ("echo a", True), ("if true; then", False), ("echo 'abc", False), ('echo "a', False),
    ("echo $(", False), ("echo ${x", False), ("cat <<EOF\nabc", False), ("echo a \\", False),
    ("echo a \\\\", True), ("for x in a b", False), ("f() {", False), ("[[ a == b", False),
    ("[[ a &&", False), ("a=(1 2", False), ("echo a |", False), ("echo a &&", False),
    ("fi", True), ("case x in a) echo;; b", True), ("echo `x", False), ("", True),
])
def test_is_complete_tells_more_input_from_errors(src: str, complete: bool) -> None:
    assert is_complete(src) is complete


def test_nesting_depth_is_limited_with_a_syntax_error() -> None:
    assert error("echo " + "$(" * 500).message == "maximum nesting depth exceeded"
    assert error("{ " * 500).message == "maximum nesting depth exceeded"


def test_error_formats_every_line_with_the_prefix() -> None:
    assert error("if true; then fi").format("bash: -c: line {lineno}: ") == (
        "bash: -c: line 1: syntax error near unexpected token `fi'\n"
        "bash: -c: line 1: `if true; then fi'\n")
