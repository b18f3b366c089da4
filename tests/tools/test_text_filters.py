"""wc, sort, uniq, cut, tr and tee against GNU coreutils."""

from __future__ import annotations

import pytest
from differential import Case, Dir, File, assert_same

F = {"a": "one two\nthree\n\nfour five six\n", "b": "x y\n", "nl": "no newline", "d/": Dir(),
     "secret": File("s\n", 0o200),
     "nums": "10\n9\n-2\n1.5\n100\nabc\n007\n-10\n",
     "words": "pear\napple\nbanana\nApple\napple\ncherry\n",
     "tab": "b\t2\tz\na\t10\ty\nc\t1\tx\n",
     "csv": "name,age,city\nann,31,oslo\nbob,5,rome\ncid,,nice\nnodelim\n",
     "human": "1K\n2M\n512\n1G\n3K\n",
     "ver": "a-1.10\na-1.2\na-1.9\n",
     "dups": "a\na\nb\nB\nb\nc\nc\nc\n"}
# Inputs past sort's duplicate sample (4,096 lines) and several 64 KiB pipe buffers, so that
# sort's counted path and runs that uniq sees split across blocks are compared with GNU too.
_REPEATS = [("x%d" % ((i * 7919) % 613 % (1 + i % 97))) for i in range(60_000)]
F["many"] = "\n".join(_REPEATS) + "\n"
F["many_nl"] = "\n".join(_REPEATS)  # the last line without its newline
F["pow"] = "".join(f"{w}\n" * n for w, n in zip(["a", "", "ab", "a ", "b"] * 3,
                                                [1, 2, 3, 4, 7, 8, 9, 255, 256, 257, 1023, 1024, 1025, 16, 17])) + "b"
F["counts"] = "".join(f"{(i * 7919) % 613 % (1 + i % 97) - 40:7d} w{i % 13}\n" for i in range(20_000)) + "x\n\n-\n-0\n+1\n 007\n"
F["runs"] = "".join(f"{i // 2_500:05d} line\n" for i in range(60_000))  # long runs, already sorted

WC = [
    Case("wc_default", "wc a", F), Case("wc_lines", "wc -l a b", F), Case("wc_words", "wc -w a", F),
    Case("wc_bytes", "wc -c nl", F), Case("wc_chars", "wc -m a", F), Case("wc_max_line", "wc -L a", F),
    Case("wc_stdin", "wc", F, stdin=b"a b\nc\n"), Case("wc_stdin_lines", "printf 'x\\ny\\n' | wc -l", F),
    Case("wc_multi", "wc a b nl", F), Case("wc_missing", "wc nope a; echo $?", F),
    Case("wc_dir", "wc d; echo $?", F), Case("wc_bad_option", "wc -x a; echo $?", F),
    Case("wc_permission", "wc secret; echo $?", F, user=1000),
    Case("wc_combo", "wc -lc a b", F), Case("wc_dash_and_file", "wc - a", F, stdin=b"z\n"),
    Case("wc_empty", "wc -l < /dev/null", F),
]
SORT = [
    Case("sort_plain", "sort words", F), Case("sort_reverse", "sort -r words", F),
    Case("sort_b_whole_line", "printf '  b\\n a\\nc\\n' | sort -b; printf ' b\\na\\n' | sort -br; "
         "printf '10\\n 9\\n-1\\n' | sort -bn", F),
    Case("sort_unique", "sort -u words", F), Case("sort_fold", "sort -f words", F),
    Case("sort_fold_unique", "sort -fu words", F),
    Case("sort_numeric", "sort -n nums", F), Case("sort_numeric_reverse", "sort -rn nums", F),
    Case("sort_general", "sort -g nums", F),
    Case("sort_key_tab", "sort -t $'\\t' -k2,2n tab", F), Case("sort_key_third", "sort -k3 tab", F),
    Case("sort_key_csv", "sort -t, -k2n csv", F), Case("sort_key_reverse", "sort -t, -k1,1r csv", F),
    Case("sort_human", "sort -h human", F), Case("sort_version", "sort -V ver", F),
    Case("sort_stable", "sort -s -k1,1 -t, csv", F),
    Case("sort_check_ok", "sort words | sort -c; echo $?", F),
    Case("sort_check_bad", "sort -c words; echo $?", F),
    Case("sort_check_quiet", "sort -C words; echo $?", F),
    Case("sort_output", "sort -o out words; cat out", F),
    Case("sort_multi", "sort a b", F), Case("sort_no_newline", "sort nl b", F),
    Case("sort_missing", "sort nope; echo $?", F), Case("sort_bad_option", "sort -j; echo $?", F),
    Case("sort_multichar_tab", "sort -t ab words; echo $?", F),
    Case("sort_month", "printf 'Mar\\nJan\\nfeb\\n' | sort -M", F),
    Case("sort_zero", "printf 'b\\0a\\0' | sort -z | tr '\\0' '\\n'", F),
    Case("sort_uniq_c", "sort words | uniq -c | sort -rn", F),
    Case("sort_blank_keys", "printf ' b 2\\na 1\\n  c 0\\n' | sort -k2", F),
    Case("sort_dir", "sort d; echo $?", F),
    Case("sort_many", "sort many | md5sum", F), Case("sort_many_reverse", "sort -r many | md5sum", F),
    Case("sort_many_no_newline", "sort many_nl | tail -n 3", F),
    Case("sort_many_unique", "sort -u many | md5sum", F),
    Case("sort_many_zero", "tr '\\n' '\\0' < many | sort -z | tr '\\0' '\\n' | md5sum", F),
    Case("sort_char_past_field", "printf 'ab c\\nb a\\nabc b\\n a d\\n' | sort -k1.3,1.4", F),
    Case("sort_char_tab_fields", "printf 'x,abc,1\\ny,ab,2\\nz,,3\\nw,a\\n' | sort -t, -k2.2,2.3 -k1,1", F),
    Case("sort_char_blank_end", "printf 'a   xb\\na  xa\\nb yy\\n' | sort -k1.2b,2.1b -s", F),
    Case("sort_end_before_start", "printf 'b a\\na b\\nc\\n' | sort -k2,1 -k1.9,1.2", F),
    Case("sort_key_field_end_chars", "sort -k2,2.3 counts | md5sum; sort -k2b,2 -k1,1n counts | md5sum", F),
    Case("sort_counts_numeric", "sort -n counts | md5sum; sort -rn counts | md5sum", F),
    Case("sort_counts_numeric_stable", "sort -sn counts | md5sum; sort -rsn counts | md5sum", F),
    Case("sort_counts_numeric_blanks", "sort -bn counts | md5sum", F),
    Case("sort_many_uniq_c_rn", "sort many | uniq -c | sort -rn | head -n 5", F),
    Case("sort_huge_numbers", "printf '%05000d\\n1\\n-%05000d\\n' 9 9 | sort -n | cut -c1-3", F),
    Case("sort_many_uniq_c", "sort many | uniq -c | md5sum", F),
]
UNIQ = [
    Case("uniq_plain", "uniq dups", F), Case("uniq_count", "uniq -c dups", F),
    Case("uniq_repeated", "uniq -d dups", F), Case("uniq_unique", "uniq -u dups", F),
    Case("uniq_icase", "uniq -i dups", F), Case("uniq_icase_count", "uniq -ic dups", F),
    Case("uniq_all_repeated", "uniq -D dups", F), Case("uniq_skip_fields", "printf 'a x\\nb x\\nc y\\n' | uniq -f1", F),
    Case("uniq_skip_chars", "printf 'ax\\nbx\\ncy\\n' | uniq -s1 -c", F),
    Case("uniq_check_chars", "printf 'ab\\nac\\nbc\\n' | uniq -w1", F),
    Case("uniq_stdin", "uniq", F, stdin=b"x\nx\ny\n"), Case("uniq_output_file", "uniq dups out; cat out", F),
    Case("uniq_missing", "uniq nope; echo $?", F), Case("uniq_bad_option", "uniq -k; echo $?", F),
    Case("uniq_extra", "uniq a b c; echo $?", F), Case("uniq_no_newline", "uniq nl", F),
    Case("uniq_unsorted_count", "uniq -c many | md5sum", F),
    Case("uniq_runs_piped", "cat runs | uniq -c", F), Case("uniq_runs_repeated", "cat runs | uniq -d | wc -l", F),
    Case("uniq_runs_skip", "cat runs | uniq -c -f1", F), Case("uniq_many_unique", "uniq -u many_nl | md5sum", F),
    Case("uniq_many_icase_chars", "sort many | uniq -ic -w2 | md5sum", F),
    Case("uniq_repeated_and_unique", "uniq -du dups; uniq -cd dups", F),
    Case("uniq_pow_runs", "uniq -c pow; cat pow | uniq -d; uniq -u pow", F),
    Case("uniq_runs_output_file", "uniq -c runs out; tail -n 2 out", F),
]
CUT = [
    Case("cut_fields", "cut -d, -f1,3 csv", F), Case("cut_field_range", "cut -d, -f2- csv", F),
    Case("cut_only_delimited", "cut -d, -s -f1 csv", F), Case("cut_tab", "cut -f2 tab", F),
    Case("cut_bytes", "cut -b1-3 words", F), Case("cut_chars", "cut -c2,4 words", F),
    Case("cut_open_start", "cut -c-2 words", F), Case("cut_complement", "cut -d, --complement -f2 csv", F),
    Case("cut_output_delim", "cut -d, -f1,2 --output-delimiter=: csv", F),
    Case("cut_no_list", "cut a; echo $?", F), Case("cut_bad_delim", "cut -d ab -f1 a; echo $?", F),
    Case("cut_zero_field", "cut -f0 a; echo $?", F), Case("cut_missing", "cut -f1 nope; echo $?", F),
    Case("cut_decreasing", "cut -f3-1 a; echo $?", F), Case("cut_stdin", "echo a:b:c | cut -d: -f2", F),
    Case("cut_bad_option", "cut --frob; echo $?", F),
]
TR = [
    Case("tr_upper", "tr a-z A-Z < a", F), Case("tr_classes", "tr '[:lower:]' '[:upper:]' < a", F),
    Case("tr_delete", "tr -d aeiou < a", F), Case("tr_squeeze", "echo 'aaabbbccc  dd' | tr -s 'a-z '", F),
    Case("tr_complement_delete", "tr -cd 'a-z\\n' < a", F), Case("tr_newlines", "tr '\\n' ' ' < a", F),
    Case("tr_short_set2", "echo abcdef | tr abc x", F), Case("tr_truncate", "echo abcdef | tr -t abc x", F),
    Case("tr_delete_squeeze", "echo 'aabbcc' | tr -ds a b", F),
    Case("tr_digits", "echo 'a1b22c333' | tr -d '[:digit:]'", F),
    Case("tr_octal", "printf 'a\\tb\\n' | tr '\\011' ,", F),
    Case("tr_repeat", "echo abcd | tr abcd '[x*]'", F),
    Case("tr_missing_operand", "tr; echo $?", F), Case("tr_missing_second", "tr a; echo $?", F),
    Case("tr_extra", "tr -d a b; echo $?", F), Case("tr_bad_option", "tr -x a b; echo $?", F),
    Case("tr_squeeze_translate", "echo 'aabbcc' | tr -s a-c x-z", F),
]
TEE = [
    Case("tee_basic", "echo hi | tee f; cat f", F), Case("tee_append", "echo 1 > f; echo 2 | tee -a f; cat f", F),
    Case("tee_multi", "echo hi | tee f g >/dev/null; cat f g", F),
    Case("tee_dir", "echo hi | tee d; echo $?", F), Case("tee_missing_dir", "echo hi | tee nope/f; echo $?", F),
    Case("tee_bad_option", "tee -z; echo $?", F), Case("tee_permission", "echo x | tee secret; echo $?", F, user=1000),
    Case("tee_no_files", "echo hi | tee", F), Case("tee_pipeline", "printf 'a\\nb\\n' | tee f | wc -l; cat f", F),
    Case("tee_long_append", "echo 1 | tee --append f; echo 2 | tee --append f; cat f", F),
    Case("tee_dash", "echo hi | tee - ", F), Case("tee_empty", "tee f < /dev/null; wc -c f", F),
    Case("tee_twice_same", "echo a | tee f f; cat f", F), Case("tee_then_error", "echo a | tee f nope/x; echo $?; cat f", F),
    Case("tee_large", "seq 5000 | tee f | tail -n 1; wc -l f", F),
]


@pytest.mark.parametrize("case", WC + SORT + UNIQ + CUT + TR + TEE, ids=Case.id)
def test_filters(case: Case) -> None:
    assert_same(case)
