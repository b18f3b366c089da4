"""bc against GNU bc 1.07: arithmetic at each scale, ibase/obase, long-number line breaks,
variables, arrays, functions with autos and array parameters, control flow, print and strings,
the math library (-l) to the digit, and how quit, halt, syntax and runtime errors end work."""

from __future__ import annotations

import pytest
from differential import Case, assert_same

F = {"prog.bc": "define sq(x) { return x*x }\nsq(12)\n", "quit.bc": "1\nquit\n2\n"}


def bc(name: str, program: str, flags: str = "") -> Case:
    return Case(name, f"bc {flags} <<'EOF'\n{program}\nEOF\necho status=$?", F)


CASES = [
    bc("arith", "1+2*3; (1+2)*3; 7/2; 7%2; -7/2; -7%2; 2^10; -2^2; 2^-1"),
    bc("scale_division", "scale=5; 1/3; 2/3; -1/3; 10/4; scale=0; 10/4"),
    bc("scale_mul_add", "scale=2; 1.234*1.1; 1.5+2.25; 0.1*0.1; scale=10; 0.1*0.1; 1.00 - 0.5"),
    bc("scale_mod", "scale=3; 7%3; scale=2; 7.5%2; scale=0; 7.5%2"),
    bc("power_scale", "scale=3; 1.5^3; 2^-2; 0.5^10; scale=20; 2^-3; 1.1^20"),
    bc("sqrt_length_scale", "sqrt(2); scale=10; sqrt(2); sqrt(16); length(123.450); length(0.001); scale(1.50); scale(7)"),
    bc("zero_and_signs", ".5; -0.5; 0.000; -0; 1.0; 00012.3400"),
    bc("ibase", "ibase=16; FF; A.8; ibase=2; 1010; 11.1; ibase=A; 99"),
    bc("obase", "obase=16; 255; 10.5; 4096; obase=2; 5.25; 255; obase=20; 1234; obase=8; -64; obase=1000; 1234567.891"),
    bc("long_lines", "2^300; 10^67; 10^68; -10^68; scale=100; 1/7"),
    bc("line_length_env", "10^30", ""),
    bc("variables", "x=5; x++; x; ++x; x--; --x; y+=2; y; z^=2; z; abc_1 = 3; abc_1 * 2"),
    bc("assignment_not_printed", "x = 3; (x = 4); x = 3 < 4; x"),
    bc("relational_and_logic", "1<2; 2<1; 1==1; 1!=1; 2>=2; !0; !5; 1&&0; 0||3; 1 < 2 < 3"),
    bc("arrays", "a[3]=4; a[3]+1; a[0]++; a[0]; a[10]"),
    bc("functions", "define f(x) { return x*2 }\nf(3)\ndefine g(n) { auto i; for (i=0;i<n;i++) { if (i==2) break; print i, \" \" }; return (i) }\ng(5)"),
    bc("recursion", "define fact(n) { if (n <= 1) return 1; return n * fact(n-1) }\nfact(25)\ndefine fib(n) { if (n < 2) return n; return fib(n-1) + fib(n-2) }\nfib(15)"),
    bc("auto_dynamic_scope", "define f() { auto x; x = 9; return g() }\ndefine g() { return x }\nx = 1; f(); x"),
    bc("array_parameter_by_value", "define s(a[], n) { auto i, t; for (i = 0; i < n; i++) t += a[i]; a[0] = 99; return t }\nv[0]=1; v[1]=2; v[2]=3; s(v[], 3); v[0]"),
    bc("while_continue", "i = 0; while (i < 10) { i += 1; if (i % 2) continue; print i, \"\\n\" }"),
    bc("for_forms", "for (i = 0; i < 3; i++) i\nfor (;;) { j += 1; if (j > 3) break }\nj"),
    bc("if_else", "x = 5\nif (x > 3) { print \"big\\n\" } else { print \"small\\n\" }\nif (x < 3) 1 else 2"),
    bc("define_starts_its_line", "a[0] = 1; define g(x[]) { return x[0] }\ng(a[])\n5", "2>/dev/null"),
    bc("void_function_returns_zero", "define v() { x = 1 }\nv()"),
    bc("strings_and_print", "\"plain string\\n\"\nprint \"a\\tb\\n\", 3, \"\\n\"\nprint \"q\\qq\\\\\\n\""),
    bc("last_and_dot", "3 + 4; last * 2; . + 1"),
    bc("comments", "/* block\ncomment */ 1 # line comment\n2"),
    bc("continuation", "1 + \\\n2"),
    bc("semicolons_and_blank", ";;\n\n1;;2\n"),
    bc("quit_same_line", "1; quit"),
    bc("quit_read_early", "1\nif (0) quit\n2"),
    bc("halt_at_run_time", "1\nif (0) halt\n2\nhalt\n3"),
    bc("syntax_error_drops_line", "1 +; 3\n4"),
    bc("syntax_error_line_number", "1\n2\n)\n5"),
    bc("math_lib", "s(1); c(1); a(1); l(2); e(1); j(1,2); scale=50; a(1)*4", "-l"),
    bc("math_lib_more", "e(-1); l(0.5); s(-2); c(0); a(-0.3); j(0, 1); j(-3, 2.5); scale=5; e(10); l(100)", "-l"),
    bc("math_scale", "scale", "-l"),
    bc("math_user_scale", "scale=4; s(0.5); e(2); sqrt(3)", "-l"),
    Case("file_then_stdin", "echo 'sq(3)' | bc prog.bc -", F),
    Case("file_quit", "bc quit.bc; echo status=$?", F),
    Case("missing_file", "bc nope.bc; echo status=$?", F),
    Case("pipeline", "echo 'scale=2; 10/3' | bc", F),
    Case("bad_option", "bc -z; echo status=$?", F),
]
CASES[10] = Case("line_length_env", "echo '10^30; 2^100' | BC_LINE_LENGTH=20 bc; echo '10^150' | BC_LINE_LENGTH=0 bc", F)


@pytest.mark.parametrize("case", CASES, ids=Case.id)
def test_bc_matches_gnu(case: Case) -> None:
    assert_same(case)


def test_runtime_error_abandons_the_running_line() -> None:
    from differential import run_k

    r = run_k("printf '1/0; 5\\n6\\ndefine f() { return 1 %% 0 }\\nf()\\n7\\n' | bc")
    assert r.stdout == b"6\n7\n"
    assert r.stderr == (b"Runtime error (func=(main), adr=0): Divide by zero\n"
                        b"Runtime error (func=f, adr=0): Modulo by zero\n")
