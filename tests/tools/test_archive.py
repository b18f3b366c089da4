"""gzip, gunzip and zcat against GNU gzip: round trips, files replaced and kept, messages and
statuses (the compressed bytes themselves differ: a different deflate)."""

from __future__ import annotations

import pytest
from differential import Case, Dir, File, assert_same

F = {"a": "hello\nworld\n" * 50, "b.txt": "plain\n", "d/": Dir(), "secret": File("s\n", 0o200),
     "ro/": Dir(0o555), "ro/f": "f\n"}

GZIP = [
    Case("gzip_roundtrip_stdout", "gzip -c a | gunzip -c | cmp - a && echo same", F),
    Case("gzip_replaces", "gzip a; ls; zcat a.gz | head -n 2", F),
    Case("gzip_keep", "gzip -k a; ls", F),
    Case("gzip_mode_kept", "chmod 600 a; gzip a; stat -c %a a.gz", F),
    Case("gunzip_restores", "gzip a; gunzip a.gz; ls; head -n 1 a", F),
    Case("gunzip_keep", "gzip a; gunzip -k a.gz; ls", F),
    Case("gzip_d", "gzip a; gzip -d a.gz; ls", F),
    Case("zcat_stdin", "gzip -c a | zcat | wc -l", F),
    Case("gzip_stdin", "printf 'x\\ny\\n' | gzip | gunzip", F),
    Case("zcat_many", "gzip -k a b.txt; zcat b.txt.gz b.txt.gz", F),
    Case("gzip_missing", "gzip nope; echo $?", F),
    Case("zcat_missing", "zcat nope.gz; echo $?", F),
    Case("gzip_dir", "gzip d; echo $?", F),
    Case("gzip_has_suffix", "gzip a; gzip a.gz; echo $?", F),
    Case("gzip_exists", "gzip -k a; gzip a; echo $?; ls", F),
    Case("gzip_force", "gzip -k a; gzip -f a; echo $?; ls", F),
    Case("gunzip_unknown_suffix", "gunzip b.txt; echo $?", F),
    Case("gunzip_not_gzip", "cp b.txt c.gz; gunzip c.gz; echo $?; ls", F),
    Case("zcat_not_gzip", "zcat b.txt; echo $?", F),
    Case("gzip_bad_option", "gzip -x; echo $?", F),
    Case("gzip_quiet_exists", "gzip -k a; gzip -q a; echo $?", F),
    Case("gzip_permission", "gzip secret; echo $?", F, user=1000),
    Case("gzip_concatenated", "(gzip -c a; gzip -c b.txt) | zcat | tail -n 1", F),
    Case("gzip_truncated", "gzip -c a | head -c 20 | gunzip > /dev/null; echo $?", F),
    Case("gzip_levels", "gzip -1 -c a | gunzip | wc -c; gzip -9 -c a | gunzip | wc -c", F),
]


@pytest.mark.parametrize("case", GZIP, ids=Case.id)
def test_gzip(case: Case) -> None:
    assert_same(case)
