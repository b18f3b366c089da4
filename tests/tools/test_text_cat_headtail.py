"""cat, head and tail against GNU coreutils."""

from __future__ import annotations

import pytest
from differential import Case, Dir, File, assert_same

FILES = {"a": "one\ntwo\nthree\n", "b": "x\n\n\n\ty\x01\x80z", "n": "".join(f"{i}\n" for i in range(1, 31)),
         "d/": Dir(), "d/e": "e\n", "secret": File("s\n", 0o200), "empty": ""}

CAT = [
    Case("cat_two", "cat a b", FILES),
    Case("cat_stdin", "cat", FILES, stdin=b"in\n"),
    Case("cat_dash", "cat a - a", FILES, stdin=b"mid\n"),
    Case("cat_show_all", "cat -A b", FILES),
    Case("cat_e_t", "cat -e b; cat -t b", FILES),
    Case("cat_v", "cat -v b", FILES),
    Case("cat_number", "cat -n a b", FILES),
    Case("cat_number_nonblank", "cat -b b a", FILES),
    Case("cat_squeeze", "cat -s b; cat -sn b", FILES),
    Case("cat_show_ends_long", "cat --show-ends a", FILES),
    Case("cat_missing", "cat nope a; echo $?", FILES),
    Case("cat_directory", "cat d; echo $?", FILES),
    Case("cat_bad_option", "cat -z a; echo $?", FILES),
    Case("cat_bad_long", "cat --zap a; echo $?", FILES),
    Case("cat_permission", "cat secret; echo $?", FILES, user=1000),
    Case("cat_empty", "cat empty; echo $?", FILES),
    Case("cat_pipe", "printf 'a\\tb\\n' | cat -T", FILES),
    Case("cat_double_dash", "cat -- a", FILES),
]

HEAD = [
    Case("head_default", "head n", FILES),
    Case("head_n", "head -n 3 n", FILES),
    Case("head_obsolete", "head -3 n", FILES),
    Case("head_negative", "head -n -27 n", FILES),
    Case("head_bytes", "head -c 5 a", FILES),
    Case("head_bytes_negative", "head -c -3 a", FILES),
    Case("head_bytes_suffix", "head -c 1k n | wc -c", FILES),
    Case("head_multi", "head -n 1 a n", FILES),
    Case("head_quiet", "head -q -n 1 a n", FILES),
    Case("head_verbose", "head -v -n 1 a", FILES),
    Case("head_stdin", "head -n 2", FILES, stdin=b"1\n2\n3\n"),
    Case("head_yes", "yes | head -n 3", FILES),
    Case("head_missing", "head nope a; echo $?", FILES),
    Case("head_directory", "head d a; echo $?", FILES),
    Case("head_bad_number", "head -n x a; echo $?", FILES),
    Case("head_bad_bytes", "head -c 1q a; echo $?", FILES),
    Case("head_bad_option", "head -j a; echo $?", FILES),
    Case("head_missing_arg", "head -n; echo $?", FILES),
    Case("head_permission", "head secret; echo $?", FILES, user=1000),
    Case("head_no_newline", "head -n 2 b | cat -A", FILES),
    Case("head_zero", "printf 'a\\0b\\0c' | head -z -n 2 | cat -A", FILES),
    Case("head_long_lines", "head --lines=2 a", FILES),
]

TAIL = [
    Case("tail_default", "tail n", FILES),
    Case("tail_n", "tail -n 2 a", FILES),
    Case("tail_plus", "tail -n +2 a", FILES),
    Case("tail_plus_big", "tail -n +28 n", FILES),
    Case("tail_obsolete", "tail -3 n", FILES),
    Case("tail_bytes", "tail -c 4 a", FILES),
    Case("tail_bytes_plus", "tail -c +5 a", FILES),
    Case("tail_no_newline", "tail -n 2 b | cat -A", FILES),
    Case("tail_stdin", "tail -n 2", FILES, stdin=b"1\n2\n3\n4"),
    Case("tail_stdin_plus", "seq 10 | tail -n +8", FILES),
    Case("tail_multi", "tail -n 1 a n", FILES),
    Case("tail_quiet", "tail -qn1 a n", FILES),
    Case("tail_missing", "tail nope a; echo $?", FILES),
    Case("tail_directory", "tail d; echo $?", FILES),
    Case("tail_bad_number", "tail -n x a; echo $?", FILES),
    Case("tail_bad_option", "tail --frob a; echo $?", FILES),
    Case("tail_permission", "tail secret; echo $?", FILES, user=1000),
    Case("tail_zero", "tail -n 0 a; echo $?", FILES),
    Case("tail_empty", "tail empty; echo $?", FILES),
    Case("tail_big_stdin", "seq 100000 | tail -n 3", FILES),
    Case("tail_z", "printf 'a\\0b\\0c\\0' | tail -z -n 2 | cat -A", FILES),
]


@pytest.mark.parametrize("case", CAT + HEAD + TAIL, ids=Case.id)
def test_cat_head_tail(case: Case) -> None:
    assert_same(case)


def test_tail_follow_stops_at_wall_time_limit(tmp_path) -> None:
    """tail -f follows a VFS file until the command's wall-time bound ends it."""
    from kfs.kstate import KState
    from kfs.vfs import VFS, PathFS
    from kshell import Limits, Shell

    state = KState(tmp_path / "s", create=True)
    try:
        fs = PathFS(VFS(state, by="test"), cwd="/", home="/")
        fs.write_file("/f", b"a\nb\n")
        result = Shell(fs, limits=Limits(wall_time=0.5)).run("tail -n 1 -f /f")
        assert result.stdout == b"b\n"
        assert b"wall-time" in result.stderr
    finally:
        state.close()
