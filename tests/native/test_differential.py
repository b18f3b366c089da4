"""The C core agrees with its pure-Python twin on random input, and both honour the documented
cases of each function."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import native
from native import pytwin

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _tokens(*tokens: bytes, max_size: int = 12) -> st.SearchStrategy[bytes]:
    """Byte strings glued from a few tokens, so that interesting collisions are likely."""
    return st.lists(st.sampled_from(tokens), max_size=max_size).map(b"".join)


PATHS = st.one_of(
    _tokens(b"/", b"//", b".", b"..", b"~", b"~u", b"a", b"b", b"\x80", b"\xff\xfe", b"\x00"),
    st.binary(max_size=24),
)


def _bytes_of(alphabet: bytes) -> list[bytes]:
    return [bytes([c]) for c in alphabet]


PATTERNS = st.one_of(
    _tokens(*_bytes_of(b"ab*?[]!^-\\.{},/"), max_size=10),
    _tokens(
        *_bytes_of(b"ab*?[]!^-\\.\x80\xff\x00"),
        *(b"[:alpha:]", b"[:digit:]", b"[:bogus:]", b"[=a=]", b"[.a.]", b"[.", b":]"),
        max_size=8,
    ),
    st.binary(max_size=10),
)
NAMES = st.one_of(
    _tokens(*_bytes_of(b"ab.-]\\[*?!^/1:\x80\xff"), max_size=8),
    st.binary(max_size=10),
)
BRACE_WORDS = st.one_of(
    _tokens(*_bytes_of(b"{},ab1-0Z"), b"..", max_size=14),
    _tokens(*_bytes_of(b"{},a2$'\"\\ ()`<+\x00\xff"), b"..", max_size=14),
    st.binary(max_size=16),
)

NUMBER_TEXTS = st.one_of(
    _tokens(*_bytes_of(b"0123456789.eE+- \t\v\rx"), b"000", b"999", b"inf", b"NaN", b"0x", max_size=12),
    st.builds(lambda m, e: b"%de%d" % (m, e), st.integers(0, 2**60), st.integers(-40, 40)),
    st.floats(allow_nan=False).map(lambda f: repr(f).encode()),
    st.binary(max_size=8),
)
RECORD_TEXTS = _tokens(*_bytes_of(b"ab1.,; \t\n\x00\xff"), b"12", b"-3e2", b"+inf", max_size=40)


def _same_float(a: float | None, b: float | None) -> bool:
    """Equal, NaN equal to NaN, and -0.0 told from 0.0."""
    if a is None or b is None:
        return a is b
    if a != a or b != b:
        return a != a and b != b
    return a == b and math.copysign(1, a) == math.copysign(1, b)


# ---- differential ---------------------------------------------------------------------------


@SETTINGS
@given(PATHS, PATHS, PATHS)
def test_normalize_matches_twin(path: bytes, cwd: bytes, home: bytes) -> None:
    assert native.normalize(path, cwd, home) == pytwin.normalize(path, cwd, home)


@SETTINGS
@given(PATHS)
def test_split_matches_twin(path: bytes) -> None:
    assert native.split(path) == pytwin.split(path)


@SETTINGS
@given(PATHS, PATHS)
def test_is_within_matches_twin(path: bytes, root: bytes) -> None:
    assert native.is_within(path, root) == pytwin.is_within(path, root)


@SETTINGS
@given(PATTERNS, NAMES, st.booleans())
def test_glob_match_matches_twin(pattern: bytes, name: bytes, period: bool) -> None:
    assert native.glob_match(pattern, name, period) == pytwin.glob_match(pattern, name, period)


@SETTINGS
@given(PATTERNS, st.lists(NAMES, max_size=20), st.booleans())
def test_glob_filter_matches_twin(pattern: bytes, names: list[bytes], period: bool) -> None:
    assert native.glob_filter(pattern, names, period) == pytwin.glob_filter(pattern, names, period)


@SETTINGS
@given(PATTERNS)
def test_has_magic_matches_twin(pattern: bytes) -> None:
    assert native.has_magic(pattern) == pytwin.has_magic(pattern)


def _expand(impl, word: bytes, limit: int) -> list[bytes] | str:
    try:
        return impl.brace_expand(word, limit)
    except native.BraceLimitError as exc:
        return f"limit: {exc}"


@SETTINGS
@given(BRACE_WORDS, st.integers(min_value=0, max_value=40))
def test_brace_expand_matches_twin(word: bytes, limit: int) -> None:
    assert _expand(native, word, limit) == _expand(pytwin, word, limit)


@SETTINGS
@given(BRACE_WORDS)
def test_brace_expand_matches_twin_with_default_limit(word: bytes) -> None:
    assert _expand(native, word, 10000) == _expand(pytwin, word, 10000)


@SETTINGS
@given(NUMBER_TEXTS)
def test_awk_number_matches_twin_and_rounds_as_float(text: bytes) -> None:
    got = native.awk_number(text)
    assert _same_float(got, pytwin.awk_number(text))
    prefix = re.match(rb"[ \t\n\v\f\r]*([-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?)", text)
    if got is not None and prefix is not None:  # correctly rounded, as Python's own float()
        assert _same_float(got, float(prefix.group(1)))


@SETTINGS
@given(st.lists(RECORD_TEXTS, min_size=1, max_size=6), st.sampled_from([b"\n", b";", b","]),
       st.sampled_from([-1, ord(","), ord(";"), ord("a"), 0]), st.integers(1, 5), st.data())
def test_awk_columns_matches_twin(records: list[bytes], rs: bytes, fs: int, cuts: int, data) -> None:
    records = [r.replace(rs, b"") for r in records]
    text = rs.join(records)
    nums = sorted(data.draw(st.sets(st.integers(0, cuts - 1))))
    texts = sorted(data.draw(st.sets(st.integers(0, cuts - 1))))
    want_nf = data.draw(st.booleans())
    args = (text, len(records), rs[0], fs, cuts, nums, texts, want_nf)
    got, twin = native.awk_columns(*args), pytwin.awk_columns(*args)
    assert got is not None and twin is not None
    assert len(got[0]) == len(twin[0]) == len(nums)
    for column, twin_column in zip(got[0], twin[0]):
        assert all(_same_float(a, b) for a, b in zip(column, twin_column, strict=True))
    assert (got[1], list(got[2]) if want_nf else None, got[3]) == twin[1:]
    assert native.awk_columns(text, len(records) + 1, *args[2:]) is None


# ---- documented cases, checked on both ------------------------------------------------------

IMPLS = pytest.mark.parametrize("impl", [native, pytwin], ids=["native", "pytwin"])


@IMPLS
@pytest.mark.parametrize(
    ("path", "cwd", "home", "expected"),
    [
        (b"a/b", b"/x", b"/", b"/x/a/b"),
        (b"/a/./b/../c/", b"/x", b"/", b"/a/c"),
        (b"/..", b"/", b"/", b"/"),
        (b"/../../a", b"/", b"/", b"/a"),
        (b"..", b"/", b"/", b"/"),
        (b"", b"/x/y/", b"/", b"/x/y"),
        (b"~", b"/x", b"/home/k", b"/home/k"),
        (b"~/d", b"/x", b"/home/k/", b"/home/k/d"),
        (b"~user/d", b"/x", b"/home/k", b"/x/~user/d"),
        (b"a/~", b"/x", b"/home/k", b"/x/a/~"),
        (b"a", b"rel/./dir/..", b"/", b"/rel/a"),
        (b"~", b"/", b"h//", b"/h"),
        (b"//a//b//", b"/", b"/", b"/a/b"),
    ],
)
def test_normalize_documented_cases(impl, path, cwd, home, expected) -> None:
    assert impl.normalize(path, cwd, home) == expected


@IMPLS
def test_split_keeps_dotdot_and_drops_empty_and_dot(impl) -> None:
    assert impl.split(b"/a//b/./../c/") == [b"a", b"b", b"..", b"c"]
    assert impl.split(b"rel/x") == [b"rel", b"x"]
    assert impl.split(b"") == []


@IMPLS
@pytest.mark.parametrize(
    ("path", "root", "expected"),
    [
        (b"/root", b"/root", True),
        (b"/root/a", b"/root", True),
        (b"/rootx", b"/root", False),
        (b"/root/../etc", b"/root", False),
        (b"/root/a/../..", b"/root", False),
        (b"/root/a/..", b"/root/", True),
        (b"/anything", b"/", True),
        (b"/", b"/", True),
        (b"/", b"/root", False),
    ],
)
def test_is_within_documented_cases(impl, path, root, expected) -> None:
    assert impl.is_within(path, root) is expected


@IMPLS
@pytest.mark.parametrize(
    ("pattern", "name", "period", "expected"),
    [
        (b"*", b".hidden", True, False),
        (b"?hidden", b".hidden", True, False),
        (b"[.]hidden", b".hidden", True, False),
        (b".*", b".hidden", True, True),
        (b"\\.*", b".hidden", True, True),
        (b"*", b".hidden", False, True),
        (b"a*", b"a.b", True, True),
        (b"[]a]", b"]", True, True),
        (b"[!]a]", b"]", True, False),
        (b"[!]a]", b"b", True, True),
        (b"[^a]", b"b", True, True),
        (b"[a-z]", b"q", True, True),
        (b"[z-a]", b"q", True, False),
        (b"[[:alpha:]]", b"\xe9", True, False),
        (b"[![:alpha:]]", b"\xe9", True, True),
        (b"[[:digit:][:upper:]]", b"Q", True, True),
        (b"\\*", b"*", True, True),
        (b"\\*", b"x", True, False),
        (b"a\\", b"a\\", True, True),
        (b"*\\", b"a\\", True, True),  # bash 5.2 says no here; K keeps the documented rule
        (b"a[b", b"a[b", True, True),
        (b"a[b", b"ab", True, False),
        (b"a/b", b"a/b", True, True),
        (b"*/*", b"a/b", True, True),
    ],
)
def test_glob_match_documented_cases(impl, pattern, name, period, expected) -> None:
    assert impl.glob_match(pattern, name, period) is expected


@IMPLS
def test_glob_match_is_linear_on_star_heavy_patterns(impl) -> None:
    name = b"a" * 3000
    assert impl.glob_match(b"*a*a*a*a*a*a*a*b", name) is False
    assert impl.glob_match(b"*a*a*a*a*a*a*a*a", name) is True


@IMPLS
def test_glob_filter_keeps_input_order_and_handles_nul_in_names(impl) -> None:
    names = [b"b.py", b"a.txt", b"a.py", b"x\0y.py", b".h.py"]
    assert impl.glob_filter(b"*.py", names) == [b"b.py", b"a.py", b"x\0y.py"]
    assert impl.glob_filter(b"*.py", names, period=False) == [
        b"b.py",
        b"a.py",
        b"x\0y.py",
        b".h.py",
    ]
    assert impl.glob_filter(b"*", []) == []


@IMPLS
@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (b"plain", False),
        (b"a*", True),
        (b"a?", True),
        (b"a[b", True),
        (b"a\\*", False),
        (b"a\\\\*", True),
        (b"a]", False),
        (b"\\", False),
    ],
)
def test_has_magic_documented_cases(impl, pattern, expected) -> None:
    assert impl.has_magic(pattern) is expected


@IMPLS
@pytest.mark.parametrize(
    ("word", "expected"),
    [
        (b"a{b,c}d", [b"abd", b"acd"]),
        (b"{a,{b,c}}", [b"a", b"b", b"c"]),
        (b"{1..5}", [b"1", b"2", b"3", b"4", b"5"]),
        (b"{3..1}", [b"3", b"2", b"1"]),
        (b"{a..e}", [b"a", b"b", b"c", b"d", b"e"]),
        (b"{01..10}", [b"%02d" % i for i in range(1, 11)]),
        (b"{1..010}", [b"%03d" % i for i in range(1, 11)]),
        (b"{1..10..2}", [b"1", b"3", b"5", b"7", b"9"]),
        (b"{-3..3}", [b"-3", b"-2", b"-1", b"0", b"1", b"2", b"3"]),
        (b"{a..z..3}", [bytes([c]) for c in range(ord("a"), ord("z") + 1, 3)]),
        (b"{a,b}{1,2}", [b"a1", b"a2", b"b1", b"b2"]),
        (b"x'{a,b}'y", [b"x'{a,b}'y"]),
        (b'x"{a,b}"y', [b'x"{a,b}"y']),
        (b"x\\{a,b}", [b"x\\{a,b}"]),
        (b"{a\\,b,c}", [b"a\\,b", b"c"]),
        (b"{'a,b',c}", [b"'a,b'", b"c"]),
        (b"{a}", [b"{a}"]),
        (b"{}", [b"{}"]),
        (b"a{b", [b"a{b"]),
        (b"{1..x}", [b"{1..x}"]),
        (b"${var}", [b"${var}"]),
        (b"${a,b}", [b"${a,b}"]),
        (b"$(echo {a,b})", [b"$(echo {a,b})"]),
        (b"{a,b}$(x)", [b"a$(x)", b"b$(x)"]),
        (b"{,a}", [b"", b"a"]),
        (b"plain", [b"plain"]),
        (b"", [b""]),
    ],
)
def test_brace_expand_documented_cases(impl, word, expected) -> None:
    assert impl.brace_expand(word) == expected


@IMPLS
def test_brace_limit_is_a_value_error_with_the_documented_message(impl) -> None:
    with pytest.raises(native.BraceLimitError) as info:
        impl.brace_expand(b"{1..1000000000}")
    assert isinstance(info.value, ValueError)
    assert str(info.value) == "brace expansion: too many words (limit 10000)"
    with pytest.raises(native.BraceLimitError, match=r"\(limit 7\)"):
        impl.brace_expand(b"{a,b}{1..4}", max_words=7)
    assert len(impl.brace_expand(b"{a,b}{1..4}", max_words=8)) == 8


@IMPLS
def test_brace_limit_sees_products_beyond_64_bits(impl) -> None:
    word = b"{1..1000}" * 12  # 10**36 words
    with pytest.raises(native.BraceLimitError):
        impl.brace_expand(word)


def test_twin_reuses_the_native_error_type() -> None:
    assert pytwin.BraceLimitError is native.BraceLimitError


def test_brace_nesting_limit_is_a_value_error() -> None:
    deep = b"{a," * 300 + b"b" + b"}" * 300
    for impl in (native, pytwin):
        with pytest.raises(ValueError, match="nested too deeply"):
            impl.brace_expand(deep)
    ok = b"{a," * 150 + b"b" + b"}" * 150
    assert native.brace_expand(ok) == pytwin.brace_expand(ok) == [b"a"] * 150 + [b"b"]


@IMPLS
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (b"12", 12.0),
        (b" \t-3.5e2x", -350.0),
        (b"0x1A", 0.0),
        (b"abc", 0.0),
        (b"", 0.0),
        (b"-0", -0.0),
        (b".5", 0.5),
        (b"5.", 5.0),
        (b"+.", 0.0),
        (b"1e", 1.0),
        (b"1e+", 1.0),
        (b"1000e22", 1e25),
        (b"100000000000000000000", 1e20),
        (b"123.456789", 123.456789),
        (b"+inf", None),
        (b" -NaN", None),
        (b"1e25", None),
        (b"1e400", None),
        (b"9007199254740993", None),
        (b"0.30000000000000004", None),
    ],
)
def test_awk_number_documented_cases(impl, text, expected) -> None:
    assert _same_float(impl.awk_number(text), expected)


@IMPLS
def test_awk_columns_documented_cases(impl) -> None:
    numbers, joined, nf, unread = impl.awk_columns(b"a,1,x\nb,2.5\n\nc,+inf,y,z", 4, 10, ord(","), 3,
                                                   [1], [0, 2], True)
    assert [n if n == n else "nan" for n in numbers[0]] == [1.0, 2.5, 0.0, "nan"]
    assert (joined, list(nf), unread) == (b"a,x,b,,,,c,y", [3, 2, 0, 4], 1)
    numbers, joined, nf, unread = impl.awk_columns(b"  a 1 x\n b  2.5 \n\n c 7 y z", 4, 10, -1, 3,
                                                   [1], [0, 2], False)
    assert ([list(n) for n in numbers], joined, nf, unread) == ([[1.0, 2.5, 0.0, 7.0]], b"a x b    c y", None, 0)
    assert impl.awk_columns(b"a\nb", 3, 10, -1, 1, [0], [], False) is None
    assert impl.awk_columns(b"", 0, 10, -1, 1, [0], [0], False) is None


def test_awk_columns_separators_at_every_offset() -> None:
    """C looks for separators 16 bytes at a time: one at each offset, near the text's end too."""
    for a in range(40):
        for fs, sep in ((ord(","), b","), (-1, b" ")):
            records = [b"7" * a + sep + b"1" * (a % 5) + sep + b"x", b"y" * a, b"2" * (a % 17) + sep * (a % 3)]
            args = (b"\n".join(records), len(records), ord("\n"), fs, 2, [0, 1], [0, 1], True)
            got, twin = native.awk_columns(*args), pytwin.awk_columns(*args)
            for column, twin_column in zip(got[0], twin[0], strict=True):
                assert all(_same_float(x, y) for x, y in zip(column, twin_column, strict=True))
            assert (got[1], list(got[2]), got[3]) == twin[1:]
