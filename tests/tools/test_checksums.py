"""cksum, b2sum, sum and base32 against GNU coreutils 9.1: every algorithm, tagged and untagged
output, -l, -c with tagged and untagged listings, stdin without a name, and the refusals."""

from __future__ import annotations

import pytest
from differential import Case, Dir, assert_same, require_tools

F = {"a": "abc\n", "b": "hello\n", "e": "", "bin": bytes(range(256)) * 40 + b"\xff" * 70001, "d/": Dir(),
     "nl": "no newline"}
SCRIPTS = [
    "cksum a", "cksum < a", "cksum - < a", "cksum a nope b; echo $?", "cksum e bin nl", "cksum d; echo $?",
    "cksum -a sysv a bin", "cksum -a bsd a bin", "cksum -a crc a", "cksum -a foo a; echo $?",
    "cksum -a sha a; echo $?", "cksum -a sha2 a", "cksum -a md5 < a", "cksum -a md5 --untagged < a",
    "cksum -a sha1 a b", "cksum -a sha224 a", "cksum -a sha256 bin", "cksum -a sha384 a", "cksum -a sha512 a",
    "cksum -a blake2b a", "cksum -a blake2b -l 128 a", "cksum -a sm3 a", "cksum --untagged a",
    "cksum -a sha256 --untagged a b", "cksum -a sha256 --tag a",
    "cksum -a blake2b -l 7 a; echo $?", "cksum -a blake2b -l 1024 a; echo $?", "cksum -a md5 -l 128 a; echo $?",
    "cksum -c x; echo $?", "cksum -a md5 a b > s; cksum -c s; echo $?",
    "cksum -a md5 --untagged a > u; cksum -a md5 -c u; cksum -c u; echo $?",
    "cksum -a blake2b -l 128 a > t; cksum -c t; echo $?", "cksum -a sha1 a > t; echo x > a; cksum -c t; echo $?",
    "cksum -a crc -c t; echo $?", "cksum -a md5 -z a | od -c", "cksum --check --tag a; echo $?",
    "cksum -a sha256 a b > t; cksum -a sha1 -c t; echo $?", "cksum --quiet a; echo $?",
    "b2sum a b", "b2sum < a", "b2sum -l 128 a", "b2sum -l 128 --tag a", "b2sum --tag a", "b2sum -l 0 a",
    "b2sum -l x a; echo $?", "b2sum -l 12 a; echo $?", "b2sum a > t; b2sum -c t; echo $?",
    "b2sum -l 128 a > t; b2sum -c t; b2sum -l 128 -c t; b2sum -l 256 -c t; echo $?",
    "b2sum --tag -l 64 a b > t; b2sum -c t; echo $?", "b2sum nope; echo $?", "b2sum bin",
    "sum a", "sum < a", "sum a b", "sum -s < a", "sum -s a b bin", "sum - < a", "sum nope a; echo $?",
    "sum -r bin e", "sum -x; echo $?", "sum -s d; echo $?",
    "base32 a", "base32 -w 4 a", "base32 bin | tail -n 2", "base32 -w 0 b", "base32 < e",
    "printf 'MFRGGCQ=' | base32 -d", "printf 'MFRG!GCQ=' | base32 -d; echo $?",
    "printf 'MFRG!GCQ=' | base32 -d -i", "base32 -w x a; echo $?", "base32 bin | base32 -d | cmp - bin",
    "base32 a b; echo $?", "base32 nope; echo $?", "printf 'MFRGGCQ' | base32 -d; echo $?",
    "printf 'YWJ!' | base64 -d; echo $?", "printf 'YW!' | base64 -d; echo $?", "printf 'YWJjZA' | base64 -d; echo $?",
    "printf 'MFRGGZA' | base32 -d; echo $?", "printf 'MF\\nRG GC!Q=' | base32 -d; echo $?",
    "b2sum -l 256 a > t; cksum -a blake2b -c t; cksum -a blake2b -l 128 -c t; echo $?",
]


@pytest.mark.parametrize("case", [Case(s, s, F) for s in SCRIPTS], ids=Case.id)
def test_checksums(case: Case) -> None:
    require_tools("cksum", "b2sum", "sum", "base32", "od")
    assert_same(case)
