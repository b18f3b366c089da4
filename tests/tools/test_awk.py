"""awk against GNU awk 5.2: fields, patterns, arrays, functions, printf, getline, redirections,
and gawk's error messages and statuses."""

from __future__ import annotations

import pytest
from differential import Case, Dir, File, assert_same

F = {
    "csv": "a,b,c\n1,2,3\nx,,z\n", "nums": "3 apple\n10 banana\n2 cherry\n10 apple\n",
    "t": "one two three\nfour five\n\nsix\n", "tabs": "a\tb c\td\n", "d/": Dir(),
    "secret": File("s\n", 0o200), "prog.awk": "{ n++ }\nEND { print n, \"lines\" }\n",
    "para": "a b\nc\n\n\nd e\nf\n", "mixed": "10\n9\nabc\n 5 \n1e2\n0x10\n",
}

CASES = [
    Case("seed_csv_fields", "awk -F, '{print $1,$2,$NF,NF}' csv", F),
    Case("print_all", "awk '{print}' t", F),
    Case("print_field", "awk '{print $2}' nums", F),
    Case("sum_column", "awk '{s+=$1} END{print s, NR}' nums", F),
    Case("pattern_regex", "awk '/apple/' nums", F),
    Case("pattern_expr", "awk '$1 > 5' nums", F),
    Case("pattern_negated_regex", "awk '!/apple/' nums", F),
    Case("range", "awk 'NR==2,NR==3{print NR\": \"$0}' nums", F),
    Case("range_regex", "awk '/two/,/five/' t", F),
    Case("begin_only", "awk 'BEGIN{print \"hi\"}'", F),
    Case("end_nr", "awk 'END{print NR}' t", F),
    Case("nf", "awk '{print NF}' t", F),
    Case("last_field", "awk '{print $NF}' t", F),
    Case("fs_tab", "awk -F'\\t' '{print $2}' tabs", F),
    Case("fs_regex", "echo 'a1b22c' | awk -F'[0-9]+' '{print $1 $2 $3, NF}'", F),
    Case("fs_begin", "awk 'BEGIN{FS=\",\"} {print $3}' csv", F),
    Case("ofs_rebuild", "awk -F, -v OFS=- '{$1=$1; print}' csv", F),
    Case("assign_field_extends", "echo a b | awk '{$5=\"e\"; print; print NF}'", F),
    Case("assign_nf", "echo a b c d | awk '{NF=2; print}'", F),
    Case("assign_record", "echo a b | awk '{$0=\"x y z\"; print NF, $2}'", F),
    Case("ors", "awk -v ORS=';' '{print $1}' nums", F),
    Case("rs_paragraph", "awk -v RS= '{print NR\": \"$1\"/\"NF}' para", F),
    Case("rs_char", "printf 'a;b;c' | awk -v RS=';' '{print NR, $0}'", F),
    Case("fnr_filename", "awk '{print FILENAME, FNR, NR}' csv nums", F),
    Case("var_option", "awk -v x=5 'BEGIN{print x*2}'", F),
    Case("var_escape", "awk -v 's=a\\tb' 'BEGIN{print s}'", F),
    Case("operand_assignment", "awk '{print x, $0}' x=1 csv x=2 nums", F),
    Case("program_file", "awk -f prog.awk t", F),
    Case("stdin", "printf '1\\n2\\n' | awk '{print $1*2}'", F),
    Case("stdin_dash", "echo z | awk '{print FILENAME \":\" $0}' csv -", F),
    Case("arrays_count", "awk '{c[$2]++} END{for(k in c) print k, c[k] | \"sort\"}' nums", F),
    Case("array_in", "awk 'BEGIN{a[1]; if (1 in a) print \"yes\"; if (!(2 in a)) print \"no\"}'", F),
    Case("array_delete", "awk 'BEGIN{a[1];a[2];delete a[1]; for(k in a) print k; delete a; print length(a)}'", F),
    Case("multi_subscript", "awk 'BEGIN{a[1,2]=3; for (k in a) {split(k,p,SUBSEP); print p[1], p[2], a[1,2]};"
                            " if ((1,2) in a) print \"in\"}'", F),
    Case("printf_formats", "awk 'BEGIN{printf \"%5.2f|%-4d|%x|%X|%o|%s|%c|%c|%e|%g|%i|%u\\n\", 3.14159, 42,"
                           " 255, 255, 8, \"hi\", 65, \"zed\", 12345.678, 0.0001, 7.9, 3}'", F),
    Case("printf_width_star", "awk 'BEGIN{printf \"[%*d][%-*s][%.3s]\\n\", 5, 42, 4, \"ab\", \"abcdef\"}'", F),
    Case("printf_flags", "awk 'BEGIN{printf \"%+d % d %05d %#o %#x %%\\n\", 5, 5, 42, 8, 255}'", F),
    Case("sprintf", "awk 'BEGIN{s=sprintf(\"%03d-%s\", 7, \"x\"); print s, length(s)}'", F),
    Case("number_output", "awk 'BEGIN{print 1/3, 100000000, 1e30, 0.1+0.2, 2^53, -0.5, 3.0}'", F),
    Case("ofmt_convfmt", "awk 'BEGIN{OFMT=\"%.2f\"; CONVFMT=\"%.3f\"; x=3.14159; print x; y=x \"\"; print y}'", F),
    Case("string_functions", "awk 'BEGIN{s=\"Hello World\"; print length(s), substr(s,7), substr(s,0,3),"
                             " substr(s,-1,3), index(s,\"World\"), toupper(s), tolower(s)}'", F),
    Case("split_default", "awk 'BEGIN{n=split(\"  a b  c \", p); print n, p[1], p[3]}'", F),
    Case("split_sep", "awk 'BEGIN{n=split(\"a:b::c\", p, \":\"); print n, p[4]; n=split(\"a1b2c\", q,"
                      " /[0-9]/); print n, q[3]}'", F),
    Case("sub_gsub", "awk '{n=gsub(/a/,\"A\"); sub(/e/,\"[&]\"); print n, $0}' nums", F),
    Case("gsub_escaped_amp", "awk 'BEGIN{s=\"aaa\"; gsub(/a/,\"\\\\&\",s); print s}'", F),
    Case("gsub_empty_match", "echo abc | awk '{gsub(/x*/,\"-\"); print}'", F),
    Case("gsub_field", "awk '{gsub(/a/,\"o\",$2); print}' nums", F),
    Case("match_rstart", "awk 'BEGIN{print match(\"foobar\", /o+b/), RSTART, RLENGTH; print match(\"x\", /y/),"
                         " RSTART, RLENGTH}'", F),
    Case("regex_dynamic", "awk -v re='^[0-9]+ a' '$0 ~ re' nums", F),
    Case("regex_match_ops", "awk '$2 ~ /an/ {print \"m\", $2} $2 !~ /an/ {print \"n\", $2}' nums", F),
    Case("math", "awk 'BEGIN{print int(3.9), int(-3.9), sqrt(16), exp(0), log(1), sin(0), cos(0), atan2(0,-1)}'", F),
    Case("modulo_power", "awk 'BEGIN{print 7%3, -7%3, 2^10, 2**3, 2^3^2, -2^2}'", F),
    Case("increment", "awk 'BEGIN{x=5; print x++, x, ++x, x--, --x}'", F),
    Case("compound_assign", "awk 'BEGIN{x=10; x+=5; x-=3; x*=2; x/=4; x%=4; x^=3; print x}'", F),
    Case("ternary", "awk '{print ($1 > 5 ? \"big\" : \"small\")}' nums", F),
    Case("logical", "awk 'BEGIN{print (1 && 0), (1 || 0), !0, !\"\", !\"a\"}'", F),
    Case("string_number_compare", "awk '{print ($1 < 9)}' mixed", F),
    Case("strnum_fields", "echo '10 9' | awk '{print ($1 > $2), (\"10\" > \"9\")}'", F),
    Case("uninitialized", "awk 'BEGIN{print x+0, \"[\" x \"]\", length(x), (x == 0), (x == \"\")}'", F),
    Case("concat_precedence", "awk 'BEGIN{print 1 \" \" 2+3 \" \" 4*5}'", F),
    Case("while_loop", "awk 'BEGIN{i=0; while(i<3){print i; i++}}'", F),
    Case("do_loop", "awk 'BEGIN{i=5; do {print i; i++} while (i<3)}'", F),
    Case("for_loop_break_continue", "awk 'BEGIN{for(i=0;i<10;i++){if(i==2)continue; if(i==5)break; print i}}'", F),
    Case("next_statement", "awk '/banana/{next} {print $2}' nums", F),
    Case("exit_status", "awk '{print; exit 3} END{print \"end\"}' nums; echo $?", F),
    Case("exit_in_end", "awk 'END{exit 4}' t; echo $?", F),
    Case("user_function", "awk 'function add(a,b){return a+b} BEGIN{print add(2,3)}'", F),
    Case("recursive_function", "awk 'function fact(n){return n<=1?1:n*fact(n-1)} BEGIN{print fact(10)}'", F),
    Case("function_array_ref", "awk 'function fill(arr,n,  i){for(i=1;i<=n;i++)arr[i]=i*i} BEGIN{fill(sq,4);"
                               " print sq[3], length(sq)}'", F),
    Case("function_locals", "awk 'function f(x,  tmp){tmp=x*2; return tmp} BEGIN{tmp=1; print f(4), tmp}'", F),
    Case("getline_plain", "awk 'NR==1{getline; print \"got\", $0}' nums", F),
    Case("getline_var", "awk 'NR==1{getline line; print line, $0, NR}' nums", F),
    Case("getline_file", "awk 'BEGIN{while((getline l < \"csv\") > 0) n++; print n}'", F),
    Case("getline_missing_file", "awk 'BEGIN{print (getline l < \"nofile\")}'", F),
    Case("getline_cmd", "awk 'BEGIN{while((\"printf \\\"a\\\\nb\\\\n\\\"\" | getline x) > 0) print \"<\" x \">\"}'", F),
    Case("print_to_file", "awk '{print $1 > \"out\"} END{close(\"out\"); while((getline l < \"out\")>0) print"
                          " \"r\", l}' nums", F),
    Case("print_append", "echo old > out; awk 'BEGIN{print \"new\" >> \"out\"}'; cat out", F),
    Case("print_pipe", "awk '{print $2 | \"sort -u\"}' nums", F),
    Case("print_pipe_close", "awk 'BEGIN{print \"b\" | \"cat\"; close(\"cat\"); print \"a\"}'", F),
    Case("print_stderr", "awk 'BEGIN{print \"err\" > \"/dev/stderr\"; print \"out\"}'", F),
    Case("system", "awk 'BEGIN{r=system(\"echo hi; exit 3\"); print \"r=\" r}'", F),
    Case("environ", "X=42 awk 'BEGIN{print ENVIRON[\"X\"]}'", F),
    Case("argv", "awk 'BEGIN{for(i=0;i<ARGC;i++) print i, ARGV[i]}' a b", F),
    Case("length_no_parens", "awk '{print length}' t", F),
    Case("printf_no_newline", "awk '{printf \"%s,\", $1} END{print \"\"}' nums", F),
    Case("print_parenthesized", "awk 'BEGIN{print(\"a\",\"b\")}'", F),
    Case("comparison_in_print_group", "awk 'BEGIN{print (2 > 1)}'", F),
    Case("semicolon_newlines", "awk 'BEGIN {\n  x = 1\n  if (x)\n    print \"one\"\n  else\n    print"
                               " \"other\"\n}'", F),
    Case("comments", "awk '# comment\nBEGIN { print 1 } # trailing'", F),
    Case("srand_rand_range", "awk 'BEGIN{srand(1); r=rand(); print (r >= 0 && r < 1)}'", F),
    Case("substr_edge", "awk 'BEGIN{print substr(\"hello\", 2, 100) \"|\" substr(\"hello\", 10) \"|\""
                        " substr(\"hello\", 1.5, 2)}'", F),
    Case("index_subscript_number", "awk 'BEGIN{a[01]=\"x\"; a[\"1\"]=a[\"1\"] \"y\"; print a[1]; b[0.5+0.5]=1;"
                                   " for (k in b) print k}'", F),
    Case("field_negative_nf_zero", "echo | awk '{print NF, $1 \"|\"}'", F),
    Case("dollar_expression", "echo 'a b c' | awk '{i=1; print $(i+1), $i++, i}'", F),
    Case("regex_special_chars", "echo 'a.b|c' | awk -F'|' '{print $2; print ($1 ~ /a\\.b/)}'", F),
    Case("err_syntax_unterminated", "awk '{print $1' t; echo $?", F),
    Case("err_syntax_operator", "awk 'BEGIN { print 1 +* 2 }'; echo $?", F),
    Case("err_syntax_extra_brace", "awk '{print $1}}' t; echo $?", F),
    Case("err_division_by_zero", "awk 'BEGIN{x=0; print 1/x}'; echo $?", F),
    Case("err_missing_file", "awk '{print}' nope t; echo $?", F),
    Case("err_directory_skipped", "awk '{print}' d t; echo $?", F),
    Case("err_missing_program_file", "awk -f nofile; echo $?", F),
    Case("err_bad_option", "awk -k 2>&1 | head -1; awk -k 2>/dev/null; echo $?", F),
    Case("err_no_program", "awk 2>&1 | head -2; awk 2>/dev/null; echo $?", F),
    Case("err_printf_args", "awk 'BEGIN{printf \"%s %s\\n\", \"a\"}'; echo $?", F),
    Case("err_array_scalar", "awk 'BEGIN{x[\"a\"]; x=1}'; echo $?", F),
    Case("err_permission", "awk '{print}' secret; echo $?", F, user=1000),
    # the compiled code: fields cut once per record and reused until something changes them,
    # field numbers converted once, globals kept in locals, records read in batches
    Case("fields_after_assignment_in_earlier_rule", "awk '{ $2 = \"X\" } { print $2, NF }' t", F),
    Case("fields_after_record_assignment", "awk '/a/ { $0 = \"q r\" } { print $1, NF }' nums", F),
    Case("fields_after_conditional_change", "awk '{ if ($1 > 5) $0 = \"big one\"; print $2 }' nums", F),
    Case("field_number_after_field_change", "awk '{ x = $1 + 0; $1 = 7; y = $1 + 0; print x, y, $0 }' nums", F),
    Case("field_number_after_sub", "awk '{ s += $1; sub(/1/, \"9\"); s += $1 } END { print s }' nums", F),
    Case("fields_changed_in_loop", "awk '{ for (i = 1; i <= 3; i++) { s = s $1; $1 = i } print s; s = \"\" }' nums", F),
    Case("field_loop_condition", "awk '{ while ($1 < 5) $1++; print }' nums", F),
    Case("getline_var_keeps_fields", "awk '{ getline line < \"t\"; print $1, line }' nums", F),
    Case("assignment_operands_between_files", "awk '{ print $1, $2, x }' OFS=- x=1 nums OFS=+ x=2 t", F),
    Case("record_assigned_in_pattern", "awk '($0 = \"x y\") { print $2 }' nums", F),
    Case("field_comparisons_with_numbers", "awk '{ print $1 == 10, $1 != 10, $1 < 10, $1 >= 10, 10 > $1, $3 == 0,"
                                           " $3 < 1, ($1 == \"10\"), ($1 < \"9\") }' nums mixed", F),
    Case("field_comparison_patterns", "awk -F, '$3 == 0 { z++ } $3 > 1 { g++ } $2 == \"\" { e++ } END { print z, g, e }' csv", F),
    Case("nf_after_changes", "awk '{ print NR, NF, $NF; NF = 1; print $NF; $0 = $0 \" extra\"; print NF, $NF }' t", F),
    Case("do_while_continue", "awk '{ i = 0; do { i++; if ($i == \"apple\") continue; n++ } while (i < NF) }"
                              " END { print n }' nums", F),
    Case("for_continue_runs_step", "awk '{ for (i = 1; i <= NF; i++) { if ($i == \"apple\") continue; n++ } }"
                                   " END { print n }' nums", F),
    Case("next_in_loop", "awk '{ for (i = 0; i < 3; i++) if (i == 1 && NR % 2) next; print }' nums", F),
    Case("exit_keeps_globals", "awk '{ s += $1; if (NR == 2) exit } END { print s, NR }' nums", F),
    Case("function_sees_globals", "awk 'function f(x) { g += x; return x * 2 } { s += f($1) } END { print s, g }' nums", F),
    Case("records_across_chunks", "seq 1 200000 > big; awk '{ s += $1 } END { print s, NR, $0 }' big;"
                                  " seq 1 100000 | awk 'NR % 25000 == 0 { print NR, $1 }'", F),
    Case("subscript_evaluated_once", "awk 'BEGIN { i = 1; a[i++] += 5; print i, a[1], a[2] }'", F),
    Case("field_index_evaluated_once", "echo '1 2 3' | awk '{ i = 1; $(i++) += 10; print i, $0 }'", F),
    Case("nr_assigned_a_string", "awk '{ NR = \"x\" } END { print NR }' nums", F),
    Case("side_effects_compared_once", "awk 'BEGIN { x = 0; if (x++ == 0) print \"first\", x; if (x++ != 1)"
                                       " print \"no\"; print x }'", F),
    Case("numbers_become_strings", "awk 'BEGIN { for (i = 0; i < 3; i++) { if (i == 1) i = \"1x\"; print i, (i < 10) }"
                                   " x = 5; sub(/5/, \"6\", x); print x + 1, (x < 10); y = 2;"
                                   " do { y = y \"0\" } while (y < 1000); print y }'", F),
    # the record loop keeps $0 and FNR in locals when nothing else reads them (compile.py)
    Case("record_after_the_loop", "awk '{ s += $1 } END { print $0, NF, $1, s }' nums", F),
    Case("record_after_exit", "awk '{ s += $1 } NR == 2 { exit } END { print $0, NF, NR, FNR, s }' nums csv", F),
    Case("fnr_unread_across_files", "awk '{ n++ } END { print NR, FNR, n }' csv nums;"
                                    " awk 'FNR == 1 { print FILENAME, NR } END { print FNR }' csv nums", F),
    Case("nextfile_keeps_fnr", "awk 'NR == 2 { nextfile } { n++ } END { print NR, FNR, n, $0 }' csv nums", F),
    Case("record_reads_in_the_loop", "awk '/apple/ { print length(), length, $0; print } END { print; print NF }' nums", F),
    Case("regex_fs_in_the_loop", "awk -F'[,]+' '{ print $2, NF } END { print $0, $3 }' csv", F),
    Case("odd_white_space_in_the_loop", "printf 'a\\vb c\\n x\\fy \\n' | awk '{ print NF, $1 } END { print $2 }'", F),
    # rules reading only the first fields cut each record only that far
    Case("leading_fields_only", "awk '{ print $1 \"|\" $2 \"|\" }' t; awk -F, '{ print $2 \"|\" }' csv;"
                                " printf '  a  b   c \\n\\n   \\n x\\n' | awk '$2 != \"\" { print $2 \"|\" $1 }"
                                " $3 > 0 { n++ } END { print n + 0, NF, $1 }'", F),
    # `x += v` on a global assigned only numbers tries float's sum first (TypeError: convert)
    Case("sum_from_strings", "awk -v s=5x 'BEGIN { t = \"3\"; t += 1; u += 2; print t, u } { s += $1; n -= $1;"
                             " m *= $1 } END { print s, n, m, s + n }' nums", F),
    Case("element_sums", "awk 'BEGIN { x = a[\"k\"]; a[\"k\"] += 2; a[\"s\"] = \"3x\"; a[\"s\"] *= 2 }"
                         " { c[$2] += $1; d[$2] -= 1 } END { print a[\"k\"], a[\"s\"], c[\"apple\"], d[\"apple\"],"
                         " length(c) }' nums", F),
    # a field's number: small ones looked up, long digit strings past int's digits or float's range
    Case("field_numbers", "echo '007 -5 +3 1_0 0x1A 1e3 .5 5. 000 00 999 1000 12ab nan -inf +inf' |"
                          " awk '{ for (i = 1; i <= NF; i++) printf \"%s \", $i + 0; s = $1 + $2 + $3 + $10"
                          " + $11 + $12; print s, ($1 < 8), ($11 == 999), ($12 > 999) }'", F),
    Case("field_numbers_sampled", "awk 'BEGIN { for (i = 0; i < 3000; i++) print i % 50, i * 1000, (i % 9 ? i : \"x\"), \"0\" i }'"
                                  " > cols; awk '{ a += $1; b += $2; c += $3; d += $4 } END { print a, b, c, d }' cols", F),
    Case("field_numbers_huge", "awk 'BEGIN { s = \"1\"; for (i = 0; i < 5000; i++) s = s \"9\";"
                               " print \"x\", s, substr(s, 1, 400), substr(s, 1, 20) }' > big;"
                               " awk '{ print $2 + 0, $3 + 0, $4 + 0; t += $4 } END { print t }' big", F),
    # expressions nested deeper than Python's parser takes (200 parentheses)
    Case("deep_sum", "awk 'BEGIN { x = 1; i = 0; print " + "(" * 150 + "x" + "+1)" * 150
                     + ", " + " + ".join(["(i++)"] * 300) + ", i }'", F),
    Case("deep_alternatives", "awk '{ n += (" + " || ".join(f'$1 == \"{i}\"' for i in range(300))
                              + ") } END { print n }' nums", F),
    # mistakes gawk reports, not internal errors
    Case("return_outside_a_function", "awk 'BEGIN { return }'; echo $?", F),
    Case("next_in_end", "awk '{ print } END { next }' nums; echo $?", F),
    Case("nextfile_in_begin", "awk 'BEGIN { nextfile }'; echo $?", F),
    Case("bad_dynamic_regex_is_fatal", "awk 'BEGIN { if (\"a\" ~ \"[\") print 1 }' 2>/dev/null; echo $?", F),
    Case("next_in_a_function", "awk 'function f() { next } { f(); print \"no\" } END { print NR }' nums", F),
]


@pytest.mark.parametrize("case", CASES, ids=Case.id)
def test_awk(case: Case) -> None:
    assert_same(case)
