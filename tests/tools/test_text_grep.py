"""grep against GNU grep 3.8: syntaxes, output modes, context, recursion, errors."""

from __future__ import annotations

import pytest
from differential import Case, Dir, File, assert_same

T = {"a": "one\ntwo\nthree\nfour\nfive\nsix\n", "b": "alpha beta\nGamma\nbeta-gamma\n\n",
     "src/": Dir(), "src/x.py": "import os\nprint('hi')\n", "src/y.txt": "hi there\n",
     "src/sub/": Dir(), "src/sub/z.py": "hi = 1\n", "skip/": Dir(), "skip/w.py": "hi\n",
     "pats": "two\nsix\n", "secret": File("hi\n", 0o200), "bin": b"ab\0c\nab\n"}

CASES = [
    Case("basic", "grep o a", T),
    Case("no_match_status", "grep zzz a; echo $?", T),
    Case("line_numbers", "grep -n e a", T),
    Case("count", "grep -c e a b", T),
    Case("invert", "grep -v e a", T),
    Case("ignore_case", "grep -i gamma b", T),
    Case("word", "grep -w beta b", T),
    Case("line_regexp", "grep -x two a", T),
    Case("only_matching", "grep -o 'e.' a", T),
    Case("only_matching_n", "grep -on '[aeiou]' b", T),
    Case("files_with_matches", "grep -l e a b src/y.txt", T),
    Case("files_without_match", "grep -L two a b; echo $?", T),
    Case("quiet", "grep -q two a; echo $?; grep -q zz a; echo $?", T),
    Case("extended", "grep -E 't(wo|hree)' a", T),
    Case("extended_plus", "grep -E 'e+' b", T),
    Case("basic_interval", "grep 'e\\{2\\}' a", T),
    Case("basic_alternation", "grep 'one\\|six' a", T),
    Case("basic_group_backref", "printf 'abab\\nabc\\n' | grep '\\(ab\\)\\1'", T),
    Case("fixed", "grep -F 'a.b' ", T, stdin=b"a.b\naxb\n"),
    Case("fixed_multi", "grep -F -e two -e six a", T),
    Case("perl", "grep -P '\\d+' ", T, stdin=b"x1\ny\n22\n"),
    Case("multi_e", "grep -e one -e four a", T),
    Case("pattern_file", "grep -f pats a", T),
    Case("newline_patterns", "grep $'one\\nfive' a", T),
    Case("after_context", "grep -A1 two a", T),
    Case("before_context", "grep -B2 four a", T),
    Case("context_groups", "grep -C1 -e one -e six a", T),
    Case("context_numbers", "grep -n -C1 three a", T),
    Case("max_count", "grep -m2 e a", T),
    Case("max_count_context", "grep -m1 -A2 o a", T),
    Case("recursive_n", "grep -rn hi src | sort", T),
    Case("recursive_implicit", "cd src && grep -r hi | sort", T),
    Case("recursive_include", "grep -r --include='*.py' hi . | sort", T),
    Case("recursive_exclude", "grep -r --exclude='*.py' hi . | sort", T),
    Case("recursive_exclude_dir", "grep -r --exclude-dir=sub hi src | sort", T),
    Case("R_flag", "grep -R -n hi src/sub", T),
    Case("with_filename", "grep -H one a", T),
    Case("no_filename", "grep -h e a b", T),
    Case("stdin_label", "echo hi | grep -H hi", T),
    Case("directory", "grep hi src; echo $?", T),
    Case("missing", "grep hi nope a; echo $?", T),
    Case("missing_silent", "grep -s hi nope; echo $?", T),
    Case("missing_quiet_match", "grep -q one nope a; echo $?", T),
    Case("permission", "grep hi secret; echo $?", T, user=1000),
    Case("bad_option", "grep -j x a; echo $?", T),
    Case("bad_long_option", "grep --frob x a; echo $?", T),
    Case("no_pattern", "grep; echo $?", T),
    Case("unmatched_bracket", "grep '[a' a; echo $?", T),
    Case("unmatched_paren", "grep -E '(a' a; echo $?", T),
    Case("bad_backref", "grep '\\(a\\)\\2' a; echo $?", T),
    Case("class_syntax", "grep '[:space:]' a; echo $?", T),
    Case("posix_class", "grep '[[:upper:]]' b", T),
    Case("negated_bracket", "grep '^[^aeiou]*$' b", T),
    Case("anchors", "grep '^t' a; grep 'e$' a", T),
    Case("dot_star", "grep -c '.*' a", T),
    Case("empty_pattern", "grep -c '' b", T),
    Case("binary", "grep ab bin; echo $?", T),
    Case("binary_text", "grep -a -c ab bin", T),
    Case("null_data", "printf 'a1\\0b2\\0a3' | grep -z a | tr '\\0' '\\n'", T),
    Case("byte_offset", "grep -b e a", T),
    Case("count_invert", "grep -vc e a", T),
    Case("word_boundaries", "grep '\\<be' b; grep 'ta\\>' b", T),
    Case("egrep_word_class", "grep -E '\\w+-\\w+' b", T),
    Case("literal_brace_ere", "echo 'a{b' | grep -E 'a{b'", T),
    Case("star_at_start", "echo '*x' | grep '*x'", T),
    Case("color_never", "grep --color=never one a", T),
    Case("yes_max_count", "yes | grep -m2 y", T),
    # a whole file is searched at once: matches that would span lines, the place after the last
    # newline, a last line without one, line numbers counted between matches
    Case("spanning_class", "printf 'a\\nb\\n\\nab\\n' | grep -n 'a[^x]*b'", T),
    Case("empty_lines_numbered", "printf '\\nx\\n\\n' | grep -n '^$'", T),
    Case("end_anchor_no_newline", "printf 'one\\ntwo' | grep -nb 'o$'", T),
    Case("recursive_modes", "grep -rc e src | sort; grep -rl i . | sort; grep -rL zz src | sort;"
                            " grep -rnm1 '' src | sort; grep -rq hi src; echo $?", T),
    Case("recursive_binary_and_permission",
         "grep -rn ab . 2>&1 | sort; grep -rn ab . >/dev/null 2>&1; echo $?", T, user=1000),
]


@pytest.mark.parametrize("case", CASES, ids=Case.id)
def test_grep(case: Case) -> None:
    assert_same(case)
