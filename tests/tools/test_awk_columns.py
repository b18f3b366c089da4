"""awk's record loop cut by C a batch at a time (compile.py's columnar copy, Runtime.columns,
native.awk_columns) against GNU awk: numbers in every form a field may hold, missing and empty
fields, white space, RS and FS choices, exit, next and $0 after the loop. Each case also
asserts whether the columnar copy ran, so that a case cannot pass by never reaching it."""

from __future__ import annotations

import pytest
from differential import Case, assert_same, require_tools

from kshell.tools.awk.runtime import COLUMNS_MIN, Runtime

# what a numeric field may hold: plain, signed, padded, exponents, awk's prefix rule, no hex,
# and values past the C path's exact range (2^53, 10^22), left to Python
NUMBERS = ["7", "007", "-5", "+3", " 12", "12 ", "1e3", "1E-2", ".5", "5.", "-0", "0x1A", "1_0",
           "12ab", "", "abc", "inf", "nan", "1e400", "-1e400", "1e-400", "9007199254740993",
           "12345678901234567890", "0.30000000000000004", "3.14159", "1e", "1e+", "+.", ".", "-",
           "\t4", "\v6", "\r8", "\f9", "123456789012345678901234567890e-20", "0.1", "2.5e22",
           "1000e22", "1e23", "99999999999999999", "4.35", "-2.5e-3"]
# signed inf and nan, which C leaves to Python too; not compared nor glued to other text, where
# K and gawk differ in either loop ("+inf" is no number to K, "-inf3" is 0 to gawk, NaN > 5
# is true to gawk), and the record's key (i % 2) sums NaNs of one sign: the sign of -nan +
# +nan is the machine's choice (and CPython's: its specialised float add picks the other one)
SPECIALS = ["-inf", "+inf", "-nan", "+nan", "-INF", " +NaN"]
KEYS = ["a", "b", "", "A b", "caf\xe9", "n\x00l", "a"]


def _rows(sep: str, count: int = 3 * COLUMNS_MIN) -> str:
    """`count` records of a key, a number and sometimes more fields (none, empty, several)."""
    lines = []
    for i in range(count):
        key, num = KEYS[i % len(KEYS)], NUMBERS[i % len(NUMBERS)]
        tail = ["", f"{sep}x", f"{sep}", f"{sep}{i}{sep}y{sep}{sep}z"][i % 4]
        lines.append(f"{key}{sep}{num}{tail}" if i % 11 else key)  # some records lack field 2
    return "\n".join(lines) + "\n"


def _spaced(rs: str = "\n", count: int = 3 * COLUMNS_MIN) -> str:
    """White-space separated records: runs of blanks, leading and trailing ones, and the white
    space awk's default FS does not cut at (\\v, \\f, \\r) but Python's str.split() would,
    glued to fields; with another RS, newlines cut fields too."""
    blanks = [" ", "  ", "\t", " \t ", "\n" if rs != "\n" else " "]
    odd = ["", "\v", "\f", "\r", ""]
    lines = []
    for i in range(count):
        b, c, o = blanks[i % 5], blanks[i // 5 % 5], odd[i // 3 % 5]
        num = NUMBERS[i % len(NUMBERS)].strip() or "0"
        lines.append(f"{c}{KEYS[i % 4]}{o}{b}{num}{o}{c}{i}{b}" if i % 13 else b)
    return rs.join(lines) + rs


F = {"csv": _rows(","), "semi": _rows(";"), "tabs": _rows("\t"), "bars": _rows("|"), "dots": _rows("."),
     "spaced": _spaced(), "semis": _spaced(";"),
     "specials": "".join(f"k{i % 2},{SPECIALS[i % len(SPECIALS)]},{i}\n" for i in range(3 * COLUMNS_MIN)),
     "long": "".join(f"{i},{i * 7 % 1000}.{i % 97:02d}123456789,{i % 5}\n" for i in range(5000))}

# comparisons of $2 only where it exists: K compares a missing field as a number, gawk as a
# string (either loop)
SUMS = ("'{ s += $2; t[$1] += $2; c[$1]++; if ($2 != \"\" && $2 > 0) p++; if ($2 != \"\" && $2 == 0) z++;"
        " if ($3 == \"\") e++;"
        " if ($4) f++; printf \"%.17g|%s|%s\\n\", $2 + 0, $1, $2 }"
        " END { print s, p, z, e, f, t[\"a\"], t[\"b\"], c[\"caf\\351\"], NR; print $0 \"|\" $1 \"|\" $2 }'")

COLUMNAR = [
    Case("csv_numbers", f"gawk -F, {SUMS} csv", F),
    Case("tab_separated", f"gawk -F'\\t' {SUMS} tabs", F),
    Case("bar_is_literal", f"gawk -F'|' {SUMS} bars", F),
    Case("dot_is_literal", f"gawk -F. {SUMS} dots", F),
    Case("default_fs_white_space", f"gawk {SUMS} spaced", F),
    Case("rs_char_newline_is_blank", f"gawk -v RS=';' {SUMS} semis", F),
    Case("rs_char_with_fs", f"gawk -v RS='\\n' -F';' {SUMS} semi", F),
    Case("fs_assigned_between_files", f"gawk {SUMS} FS=, csv FS=';' semi", F),
    Case("signed_inf_and_nan", "gawk -F, '{ s[$1] += $2; t += $3; printf \"%s %s|\", $2 + 0, -$2 }"
                               " END { print s[\"k0\"], s[\"k1\"], t }' specials", F),
    Case("long_decimals", "gawk -F, '{ s += $2; n[$3] += $2 * 2 } END { printf \"%.17g %.17g %.17g %d\\n\","
                          " s, n[0], n[4], length(n); print s, n[1] }' long", F),
    Case("convfmt_subscripts", "gawk -F, 'BEGIN { CONVFMT = \"%.2g\"; OFMT = \"%.3g\" } { k[$2 * 1.5]++; v = $2 \"\";"
                               " u[v]++; w[$2]++ } END { for (x in k) n++; for (x in u) m++; print n, m, length(w),"
                               " s + $2 / 3 }' csv", F),
    Case("exit_mid_batch", "gawk -F, '{ s += $2 } NR == 100 { exit 3 } END { print s, NR, $0, $1, NF }' csv;"
                           " echo $?", F),
    Case("nextfile_mid_batch", "gawk -F, 'FNR == 50 { nextfile } { s += $2; n++ } END { print s, n, NR, FNR, $0 }'"
                               " csv long", F),
    Case("next_skips", "gawk -F, '$2 > 5 { next } { s += $2; k = k $1 } END { print s, length(k), $1 }' csv", F),
    Case("record_and_fields_read", "gawk -F, 'NR % 7 == 0 { print NR \": \" $0 \" [\" $1 \"]\"; s += $2 }"
                                   " END { print s }' csv", F),
    Case("uninitialized_and_strnum", "gawk -F, '{ if ($2 == x) u++; if ($2 < \"5\") l++;"
                                     " if ($3 != \"\" && $3 == 0) z++; if ($2 != \"\") m = ($2 > m ? $2 : m) }"
                                     " END { print u, l, z, m }' csv", F),
]
GENERAL = [  # rules or input the columnar copy leaves to the general loop
    Case("regex_fs", f"gawk -F'[,;]' {SUMS} csv", F),
    Case("nf_read", "gawk -F, '{ s += $2 + NF } END { print s }' csv", F),
    Case("field_by_variable", "gawk -F, '{ i = 2; s += $i } END { print s }' csv", F),
    Case("record_changed", "gawk -F, '{ s += $2; $1 = \"q\"; t = t $1 } END { print s, t, $0 }' csv", F),
    Case("getline_in_rules", "gawk -F, '{ s += $2; getline; s += $2 } END { print s, NR }' csv", F),
    Case("fs_assigned_in_rules", "gawk '{ FS = \",\"; s += $2 } END { print s }' csv", F),
]


@pytest.fixture
def columnar_batches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of records of each batch the columnar copy ran (Runtime.columns said yes)."""
    seen: list[int] = []
    columns = Runtime.columns

    def spy(self, batch, *args):
        got = columns(self, batch, *args)
        if got is not None:
            seen.append(len(batch))
        return got

    monkeypatch.setattr(Runtime, "columns", spy)
    return seen


@pytest.mark.parametrize("case", COLUMNAR, ids=Case.id)
def test_columnar_loop_is_gawk(case: Case, columnar_batches: list[int]) -> None:
    require_tools("gawk")
    assert_same(case)
    assert columnar_batches, "the columnar copy never ran"


@pytest.mark.parametrize("case", GENERAL, ids=Case.id)
def test_general_loop_is_gawk(case: Case, columnar_batches: list[int]) -> None:
    require_tools("gawk")
    assert_same(case)
    assert not columnar_batches


def test_short_batches_take_the_general_loop(columnar_batches: list[int]) -> None:
    require_tools("gawk")
    assert_same(f"head -n {COLUMNS_MIN - 1} csv | gawk -F, {SUMS}", F)
    assert not columnar_batches
