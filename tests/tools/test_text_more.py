"""nl, paste, comm, join, fold, expand, column, split and cmp against GNU coreutils, util-linux
and diffutils."""

from __future__ import annotations

import pytest
from differential import Case, Dir, File, assert_same, require_tools

F = {
    "a": "one\ntwo\n\nthree\n",
    "b": "1\n2\n3\n",
    "nonl": "x\ny",
    "empty": "",
    "d/": Dir(),
    "secret": File("s\n", 0o200),
    "s1": "apple\nbanana\ncherry\n",
    "s2": "banana\ncherry\ndate\n",
    "unsorted": "b\na\nc\n",
    "j1": "1 alice x\n2 bob y\n3 carol z\n",
    "j2": "1 red\n3 blue\n4 green\n",
    "jc1": "a,1\nb,2\n",
    "jc2": "a,x\nc,y\n",
    "long": "the quick brown fox jumps over the lazy dog and keeps running far away\n",
    "tabs": "a\tb\tc\n\tindented\n  \tmixed\tx\n",
    "table": "name age city\nalice 30 paris\nbob 4 rome\n\nzed 100 x y\n",
    "csv": "a,b,c\nlonger,x,\n",
    "words": "".join(f"w{i}\n" for i in range(1, 31)),
    "lines": "".join(f"{i}\n" for i in range(1, 8)),
    "c1": "abc\ndef\n",
    "c2": "abc\ndxf\n",
    "c3": "abc\n",
    "c4": "abc",
}

NL = [
    Case("nl_default", "nl a", F), Case("nl_stdin", "printf 'x\\n\\ny\\n' | nl", F),
    Case("nl_all", "nl -ba a", F), Case("nl_none", "nl -bn a", F), Case("nl_regex", "nl -bp^t a", F),
    Case("nl_format_ln", "nl -n ln a", F), Case("nl_format_rz", "nl -n rz -w 3 a", F),
    Case("nl_width_sep", "nl -w2 -s: b", F), Case("nl_start_incr", "nl -v 10 -i 5 b", F),
    Case("nl_no_newline", "nl nonl", F), Case("nl_several", "nl a b", F),
    Case("nl_missing", "nl nope; echo $?", F), Case("nl_dir", "nl d; echo $?", F),
    Case("nl_bad_option", "nl -x; echo $?", F), Case("nl_bad_style", "nl -b x a; echo $?", F),
    Case("nl_bad_format", "nl -n xx a; echo $?", F), Case("nl_bad_width", "nl -w 0 a; echo $?", F),
    Case("nl_permission", "nl secret; echo $?", F, user=1000),
    Case("nl_sections", "printf '\\\\:\\\\:\\\\:\\nh\\n\\\\:\\\\:\\nb\\n\\\\:\\nf\\n' | nl", F),
    Case("nl_join_blank", "printf 'a\\n\\n\\n\\nb\\n' | nl -ba -l 2", F),
    Case("nl_long_options", "nl --number-format=rz --number-width=4 --number-separator=' | ' b", F),
    Case("nl_empty", "nl empty; echo $?", F),
]
PASTE = [
    Case("paste_two", "paste a b", F), Case("paste_delim", "paste -d, a b", F),
    Case("paste_delims_cycle", "paste -d ':;' a b a", F), Case("paste_serial", "paste -s a", F),
    Case("paste_serial_delim", "paste -s -d, b a", F), Case("paste_stdin", "seq 4 | paste - -", F),
    Case("paste_stdin_file", "seq 2 | paste b -", F), Case("paste_nonl", "paste nonl b", F),
    Case("paste_empty", "paste empty b", F), Case("paste_missing", "paste a nope; echo $?", F),
    Case("paste_dir", "paste d a; echo $?", F), Case("paste_bad_option", "paste -q; echo $?", F),
    Case("paste_escape_delims", "paste -d '\\t\\n' a b", F), Case("paste_zero_delim", "paste -d '\\0' a b", F),
    Case("paste_permission", "paste secret; echo $?", F, user=1000),
    Case("paste_serial_missing", "paste -s nope b; echo $?", F),
    Case("paste_trailing_backslash", "paste -d 'a\\' b; echo $?", F),
    Case("paste_empty_delim", "paste -d '' a b", F), Case("paste_serial_stdin", "seq 5 | paste -sd+", F),
    Case("paste_three_stdin", "seq 7 | paste - - -", F),
    Case("paste_long_option", "paste --serial --delimiters=: b", F),
]
COMM = [
    Case("comm_default", "comm s1 s2", F), Case("comm_12", "comm -12 s1 s2", F),
    Case("comm_3", "comm -3 s1 s2", F), Case("comm_1", "comm -1 s1 s2", F),
    Case("comm_23", "comm -23 s1 s2", F), Case("comm_delim", "comm --output-delimiter=, s1 s2", F),
    Case("comm_total", "comm --total s1 s2", F), Case("comm_stdin", "printf 'banana\\nz\\n' | comm - s1", F),
    Case("comm_unsorted", "comm unsorted s1; echo $?", F),
    Case("comm_unsorted_nocheck", "comm --nocheck-order unsorted s1; echo $?", F),
    Case("comm_check_order", "comm --check-order unsorted s1; echo $?", F),
    Case("comm_missing", "comm s1 nope; echo $?", F), Case("comm_one_operand", "comm s1; echo $?", F),
    Case("comm_no_operand", "comm; echo $?", F), Case("comm_extra", "comm s1 s2 a; echo $?", F),
    Case("comm_bad_option", "comm -4 s1 s2; echo $?", F), Case("comm_dir", "comm d s1; echo $?", F),
    Case("comm_permission", "comm secret s1; echo $?", F, user=1000),
    Case("comm_empty", "comm empty s1", F),
    Case("comm_3_delim", "comm -3 --output-delimiter=:: s1 s2", F), Case("comm_123", "comm -123 s1 s2; echo $?", F),
]
JOIN = [
    Case("join_default", "join j1 j2", F), Case("join_a1", "join -a1 j1 j2", F),
    Case("join_a2", "join -a 2 j1 j2", F), Case("join_v1", "join -v1 j1 j2", F),
    Case("join_v2", "join -v2 j1 j2", F), Case("join_tab", "join -t, jc1 jc2", F),
    Case("join_o", "join -o 1.2,2.2 j1 j2", F), Case("join_o_zero", "join -o 0,2.2,1.3 j1 j2", F),
    Case("join_e", "join -a1 -e NONE -o 0,1.2,2.2 j1 j2", F), Case("join_fields", "join -1 2 -2 1 j2 j2", F),
    Case("join_stdin", "printf '2 two\\n' | join j1 -", F),
    Case("join_many", "join <(printf 'a 1\\na 2\\n') <(printf 'a x\\na y\\n')", F),
    Case("join_unsorted", "join unsorted s1; echo $?", F),
    Case("join_missing", "join j1 nope; echo $?", F), Case("join_one_operand", "join j1; echo $?", F),
    Case("join_bad_option", "join -q j1 j2; echo $?", F), Case("join_bad_field", "join -1 0 j1 j2; echo $?", F),
    Case("join_ignore_case", "join -i <(printf 'A 1\\n') <(printf 'a 2\\n')", F),
    Case("join_header", "join --header <(printf 'k v\\n1 a\\n') <(printf 'k w\\n1 b\\n')", F),
    Case("join_permission", "join secret j1; echo $?", F, user=1000),
    Case("join_dir", "join d j1; echo $?", F),
    Case("join_o_auto", "join -o auto -a1 -e X j1 j2", F), Case("join_j", "join -j 1 j1 j2", F),
    Case("join_v_both", "join -v1 -v2 j1 j2", F), Case("join_tab_empty_fields", "join -t, -a1 -a2 jc1 jc2", F),
    Case("join_check_order", "join --check-order unsorted s1; echo $?", F),
    Case("join_extra", "join j1 j2 a; echo $?", F),
]
FOLD = [
    Case("fold_default", "fold long", F), Case("fold_w10", "fold -w 10 long", F),
    Case("fold_spaces", "fold -s -w 20 long", F), Case("fold_obsolete_width", "fold -15 long", F),
    Case("fold_tabs", "fold -w 5 tabs", F), Case("fold_bytes_tabs", "fold -b -w 5 tabs", F),
    Case("fold_stdin", "echo abcdefghij | fold -w3", F), Case("fold_nonl", "fold -w 1 nonl", F),
    Case("fold_missing", "fold nope; echo $?", F), Case("fold_dir", "fold d; echo $?", F),
    Case("fold_bad_width", "fold -w x long; echo $?", F), Case("fold_zero_width", "fold -w 0 long; echo $?", F),
    Case("fold_bad_option", "fold -q; echo $?", F),
    Case("fold_permission", "fold secret; echo $?", F, user=1000),
    Case("fold_long_word_s", "echo aaaaaaaaaaaaaaaaaaaa | fold -s -w 7", F),
    Case("fold_backspace", "printf 'abc\\bdefgh\\n' | fold -w 4", F),
    Case("fold_several", "fold -w 4 b long", F), Case("fold_cr", "printf 'abc\\rdefgh\\n' | fold -w 4", F),
]
EXPAND = [
    Case("expand_default", "expand tabs", F), Case("expand_t4", "expand -t 4 tabs", F),
    Case("expand_list", "expand -t 2,5,9 tabs", F), Case("expand_obsolete", "expand -3 tabs", F),
    Case("expand_initial", "expand -i tabs", F), Case("expand_stdin", "printf 'ab\\tc\\n' | expand", F),
    Case("expand_missing", "expand nope; echo $?", F), Case("expand_dir", "expand d; echo $?", F),
    Case("expand_bad_tab", "expand -t x tabs; echo $?", F), Case("expand_zero_tab", "expand -t 0 tabs; echo $?", F),
    Case("expand_descending", "expand -t 5,3 tabs; echo $?", F), Case("expand_bad_option", "expand -q; echo $?", F),
    Case("expand_permission", "expand secret; echo $?", F, user=1000),
    Case("expand_several", "expand tabs b", F), Case("expand_backspace", "printf 'ab\\b\\tc\\n' | expand", F),
    Case("expand_long_tabs", "expand --tabs=3 tabs", F), Case("expand_tabs_space_list", "expand -t '4 8' tabs", F),
]
COLUMN = [
    Case("column_t", "column -t table", F), Case("column_t_sep", "column -t -s, csv", F),
    Case("column_t_outsep", "column -t -s, -o '|' csv", F),
    Case("column_t_stdin", "printf 'a b\\nccc d\\n' | column -t", F),
    Case("column_fill", "column words", F), Case("column_fill_narrow", "column -c 30 words", F),
    Case("column_fill_rows", "column -x -c 30 words", F), Case("column_short", "printf 'a\\nbb\\nccc\\n' | column", F),
    Case("column_missing", "column nope; echo $?", F), Case("column_t_missing", "column -t a nope; echo $?", F),
    Case("column_empty", "column empty; echo $?", F), Case("column_bad_option", "column -q 2>/dev/null; echo $?", F),
    Case("column_t_tabs", "printf 'a\\tb\\nc\\td\\n' | column -t", F),
    Case("column_t_ragged", "printf 'a\\nb c d\\ne f\\n' | column -t", F),
    Case("column_t_permission", "column -t secret; echo $?", F, user=1000),
    Case("column_t_several_files", "column -t table csv", F),
    Case("column_t_empty", "column -t empty; echo $?", F),
]
SPLIT = [
    Case("split_lines", "split -l 3 lines; ls x*; cat xab", F), Case("split_default", "split a; ls x*; cat xaa", F),
    Case("split_bytes", "split -b 5 long; ls x*; cat xac", F),
    Case("split_prefix", "split -l 2 lines part; ls part*", F),
    Case("split_numeric", "split -d -l 2 lines; ls x*", F), Case("split_suffix_len", "split -a 3 -l 4 lines; ls x*", F),
    Case("split_additional", "split -l 4 --additional-suffix=.txt lines; ls x*", F),
    Case("split_number", "split -n 3 long; ls x*; wc -c x*", F), Case("split_stdin", "seq 5 | split -l 2; cat xac", F),
    Case("split_verbose", "split --verbose -l 3 lines", F),
    Case("split_exhausted", "seq 30 | split -l 1 -a 1; echo $?; ls x* | wc -l", F),
    Case("split_missing", "split nope; echo $?", F), Case("split_bad_lines", "split -l x a; echo $?", F),
    Case("split_zero_lines", "split -l 0 a; echo $?", F), Case("split_bad_option", "split -q a; echo $?", F),
    Case("split_extra", "split a p q; echo $?", F),
    Case("split_permission", "split secret; echo $?", F, user=1000),
    Case("split_widen", "seq 700 | split -l 1; ls x* | tail -n 3", F),
    Case("split_dir", "split d; echo $?", F),
    Case("split_bytes_suffix", "split -b 1K -d -a 3 lines out.; ls out.*", F),
    Case("split_elide", "split -e -n 10 b; ls x* | wc -l", F),
]
CMP = [
    Case("cmp_same", "cmp c1 c1; echo $?", F), Case("cmp_differ", "cmp c1 c2; echo $?", F),
    Case("cmp_silent", "cmp -s c1 c2; echo $?", F), Case("cmp_eof_line", "cmp c1 c3; echo $?", F),
    Case("cmp_eof_in_line", "cmp c4 c3; echo $?", F), Case("cmp_empty", "cmp empty c1; echo $?", F),
    Case("cmp_verbose", "cmp -l c1 c2; echo $?", F), Case("cmp_print_bytes", "cmp -b c1 c2; echo $?", F),
    Case("cmp_verbose_bytes", "cmp -lb c1 c2; echo $?", F), Case("cmp_limit", "cmp -n 4 c1 c2; echo $?", F),
    Case("cmp_skip", "cmp -i 5 c1 c2; echo $?", F), Case("cmp_skip_operands", "cmp c1 c2 6 6; echo $?", F),
    Case("cmp_stdin", "cmp c1 < c2; echo $?", F), Case("cmp_missing", "cmp nope c1; echo $?", F),
    Case("cmp_dir", "cmp d c1; echo $?", F), Case("cmp_bad_option", "cmp -x c1 c2; echo $?", F),
    Case("cmp_no_operand", "cmp; echo $?", F), Case("cmp_extra", "cmp c1 c2 1 1 1; echo $?", F),
    Case("cmp_bad_skip", "cmp c1 c2 x; echo $?", F),
    Case("cmp_permission", "cmp secret c1; echo $?", F, user=1000),
    Case("cmp_verbose_eof", "cmp -l c3 c1; echo $?", F),
    Case("cmp_both_empty", "cmp empty empty; echo $?", F), Case("cmp_stdin_dash", "cmp - c1 < c1; echo $?", F),
    Case("cmp_silent_missing", "cmp -s nope c1; echo $?", F), Case("cmp_skip_pair", "cmp -i 4:4 c1 c2; echo $?", F),
]


@pytest.mark.parametrize("case", NL + PASTE + COMM + JOIN, ids=Case.id)
def test_merging_tools_match_gnu(case: Case) -> None:
    assert_same(case)


@pytest.mark.parametrize("case", FOLD + EXPAND, ids=Case.id)
def test_fold_expand_match_gnu(case: Case) -> None:
    assert_same(case)


@pytest.mark.parametrize("case", COLUMN, ids=Case.id)
def test_column_matches_util_linux(case: Case) -> None:
    require_tools("column")
    assert_same(case)


@pytest.mark.parametrize("case", SPLIT, ids=Case.id)
def test_split_matches_gnu(case: Case) -> None:
    assert_same(case)


@pytest.mark.parametrize("case", CMP, ids=Case.id)
def test_cmp_matches_diffutils(case: Case) -> None:
    require_tools("cmp")
    assert_same(case)
