"""iconv against glibc's: conversions between UTF-8, Latin-1, UTF-16/32 and ASCII, the failure
positions and messages, -c, //TRANSLIT and //IGNORE, -o, files and standard input."""

from __future__ import annotations

import pytest
from differential import Case, File, assert_same

U8 = "caf\u00e9 \u20ac x\n"
F = {"u8": U8, "l1": File(b"caf\xe9\n"), "bad": File(b"a\xffb\n"), "cut": File(b"x\xc3"),
     "quotes": File("\u201cq\u201d \u2018s\u2019 \u00ab \u00bb \u2014 \u2026 \u00a9 \u00ae \u2122 \u00df \u00c6"
                    " \u00e6 \u00a0 \u00d7 \u00bd \ufb01 \u4e2d\n".encode())}

CASES = [
    Case("utf8_to_latin1", "iconv -f UTF-8 -t LATIN1 u8 | od -An -c", F),
    Case("latin1_to_utf8", "iconv -f ISO-8859-1 -t UTF-8 l1", F),
    Case("lowercase_names", "iconv -f latin1 -t utf8 l1", F),
    Case("unconvertible", "iconv -f UTF-8 -t ASCII u8; echo $?", F),
    Case("skip_c", "iconv -c -f UTF-8 -t ASCII u8; echo $?", F),
    Case("translit", "iconv -f UTF-8 -t ASCII//TRANSLIT u8; echo $?", F),
    Case("translit_table", "iconv -f UTF-8 -t ASCII//TRANSLIT quotes; echo $?", F),
    Case("translit_latin1", "printf '\\xe4\\xb8\\xad\\n' | iconv -f utf-8 -t latin1//TRANSLIT; echo $?", F),
    Case("ignore", "iconv -f UTF-8 -t ASCII//IGNORE u8; echo $?", F),
    Case("translit_utf8_locale", "LC_ALL=C.UTF-8 iconv -f UTF-8 -t ASCII//TRANSLIT u8", F),
    Case("invalid_input", "iconv -f UTF-8 -t UTF-16LE bad | od -An -c; echo ${PIPESTATUS[0]}", F),
    Case("invalid_input_skipped", "iconv -c -f UTF-8 -t LATIN1 bad; echo $?", F),
    Case("incomplete_at_end", "iconv -f utf-8 -t latin1 cut; echo $?", F),
    Case("utf16_bom", "iconv -f utf8 -t utf-16 u8 | od -An -c", F),
    Case("utf16_round_trip", "iconv -f utf8 -t UTF-16BE u8 | iconv -f UTF-16BE -t UTF-8", F),
    Case("utf32le", "iconv -f utf8 -t UTF-32LE l1 2>&1 | od -An -tx1; iconv -f latin1 -t UTF-32LE l1 | od -An -tx1", F),
    Case("cp1252", "printf '\\x80 \\x93x\\x94\\n' | iconv -f CP1252 -t UTF-8", F),
    Case("stdin", "printf 'h\\xe9\\n' | iconv -f latin1 -t utf-8", F),
    Case("unknown_from", "iconv -f FOO -t UTF-8 u8; echo $?", F),
    Case("unknown_to", "iconv -f UTF-8 -t BAR u8; echo $?", F),
    Case("missing_file", "iconv -t ascii nope; echo $?", F),
    Case("missing_file_continues", "iconv -f utf-8 -t ascii -c u8 nope u8; echo $?", F),
    Case("output_file", "iconv -f latin1 -t utf-8 -o out l1; cat out", F),
    Case("several_files", "iconv -f latin1 -t utf-8 l1 l1", F),
    Case("bad_option", "iconv -z; echo $?", F),
]


@pytest.mark.parametrize("case", CASES, ids=Case.id)
def test_iconv_matches_glibc(case: Case) -> None:
    assert_same(case)
