"""diff and patch against GNU diffutils and GNU patch: normal and unified hunks byte for byte
(GNU's own algorithm, checked also on many random inputs), recursive comparisons, messages and
statuses; patches written by `diff -u` and by git applied alike."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest
from differential import Case, Dir, File, assert_same

from kshell.tools.data.diff import changes, normal, split, unified

A = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n"
B = "one\n2\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven\n"
F = {
    "a": A, "b": B, "same": A, "c": "x\ny\n", "nonl": "x\ny", "empty": "",
    "d1/": Dir(), "d1/f": "f\n1\n", "d1/only1": "o\n", "d1/s/": Dir(), "d1/s/k": "k\n", "d1/sub/": Dir(),
    "d2/": Dir(), "d2/f": "f\n2\n", "d2/only2": "p\n", "d2/s/": Dir(), "d2/s/k": "K\n", "d2/sub": "file\n",
    "bin1": b"a\0b\n", "bin2": b"a\0c\n", "secret": File("s\n", 0o200),
}

DIFF = [
    Case("diff_same", "diff a same; echo $?", F),
    Case("diff_normal", "diff a b; echo $?", F),
    Case("diff_unified", "diff -u --label a --label b a b", F),
    Case("diff_unified_dates", "touch -d '2024-03-04 05:06:07.5' a b; diff -u a b", F),
    Case("diff_U1", "diff -U1 --label x --label y a b", F),
    Case("diff_U0", "diff -U 0 --label x --label y a b", F),
    Case("diff_unified_eq", "diff --unified=2 --label x --label y a b", F),
    Case("diff_nonl_normal", "diff c nonl; echo $?", F),
    Case("diff_nonl_unified", "diff -u --label c --label n c nonl", F),
    Case("diff_empty", "diff empty a; diff -u --label e --label a empty a", F),
    Case("diff_brief", "diff -q a b; echo $?; diff -q a same; echo $?", F),
    Case("diff_identical", "diff -s a same", F),
    Case("diff_missing", "diff a nope; echo $?", F),
    Case("diff_missing_first", "diff nope a; echo $?", F),
    Case("diff_new_file", "diff -N a nope; echo $?", F),
    Case("diff_new_file_u", "diff -uN --label a --label nope a nope; echo $?", F),
    Case("diff_dirs", "diff d1 d2; echo $?", F),
    Case("diff_dirs_r", "diff -r d1 d2; echo $?", F),
    Case("diff_dirs_rq", "diff -rq d1 d2; echo $?", F),
    Case("diff_dirs_rN", "rm d2/sub; diff -r -N d1 d2; echo $?", F),
    Case("diff_dirs_ru", "rm -r d1/sub d2/sub; touch -d @0 d1/f d2/f d1/s/k d2/s/k; diff -ru d1 d2", F),
    Case("diff_exclude", "diff -r -x s -x 'only*' d1 d2; echo $?", F),
    Case("diff_dev_null", "diff -u --label e --label a /dev/null a | head -n 4; diff a /dev/null | tail -n 1", F),
    Case("diff_file_dir", "cp d1/f f; diff f d2; echo $?", F),
    Case("diff_file_dir_missing", "diff a d1; echo $?", F),
    Case("diff_stdin", "printf 'one\\n' | diff - a | head -n 3", F),
    Case("diff_binary", "diff bin1 bin2; echo $?", F),
    Case("diff_binary_text", "diff -a bin1 bin2 | tr '\\000' @", F),
    Case("diff_bad_option", "diff -j a b; echo $?", F),
    Case("diff_bad_long", "diff --frobnicate a b; echo $?", F),
    Case("diff_bad_context", "diff -U x a b; echo $?", F),
    Case("diff_missing_operand", "diff a; echo $?; diff; echo $?", F),
    Case("diff_extra_operand", "diff a b c; echo $?", F),
    Case("diff_permission", "diff secret a; echo $?", F, user=1000),
    Case("diff_repeated", "printf 'a\\nb\\na\\nb\\na\\n' > x; printf 'b\\na\\nb\\na\\nb\\n' > y; diff x y", F),
    Case("diff_many_hunks", "seq 1 100 > x; seq 1 100 | sed -e 's/^5$/five/' -e '/^50$/d' -e '90a\\\nnew' > y;"
         " diff x y; diff -u --label x --label y x y", F),
    Case("diff_ignore_space", "printf 'a b\\nX\\n c  d \\nq\\n' > p; printf 'ab\\nx\\n c d\\nq\\n' > q;"
         " diff -w p q; echo $?; diff -b p q; echo $?; diff -i p q; echo $?; diff -iw p q; echo $?;"
         " diff -qw p q; echo $?; diff -ib -u --label p --label q p q", F),
    Case("diff_process_substitution", "diff <(sort a) <(sort b); echo $?; sort b | diff -u --label a --label - a -", F),
    Case("diff_pipe_wc", "seq 1 1000 > x; seq 1 3 1000 > y; diff x y | wc -l; diff -u x y | tail -n 3", F),
]

# context (-c, -C N, --context[=N]) and ed script (-e) output, and conflicting styles
MANY = ("seq 1 100 > x; seq 1 100 | sed -e 's/^5$/five/' -e '/^50$/d' -e '90a\\\nnew' -e '/^30$/s/$/\\n./' > y; "
        "touch -d @0 x y; ")
DIFF_STYLES = [
    Case("diff_context", "diff -c --label a --label b a b; echo $?; touch -d @86400 a b; diff -c a b", F),
    Case("diff_context_many", MANY + "diff -c x y; diff -C1 x y; diff --context=0 x y; diff --context x y | head -5", F),
    Case("diff_context_sides", "diff -c --label c --label n c nonl; diff -C0 --label e --label a empty a; "
         "diff -c --label a --label e a empty; seq 1 9 > x; sed 3d x > y; diff -c --label x --label y x y; "
         "diff -c --label y --label x y x", F),
    Case("diff_ed", "diff -e a b; echo $?; diff --ed a same; echo $?; " + MANY + "diff -e x y; diff -e y x; "
         "diff -e empty a | head -3", F),
    Case("diff_forward_ed", "diff -f a b; echo $?; diff --forward-ed a same; echo $?; " + MANY + "diff -f x y; "
         "diff -f y x; diff -f empty a | head -3; diff -f a empty; diff -f c nonl; echo $?; diff -e nonl c; echo $?; "
         "printf 'x\\nz' > nz; diff -f c nz; echo $?; diff -e --label L --label R c nz; echo $?; seq 1 10 > s1; "
         "seq 1 10 | sed '2,4d;7c\\\nx\\\n.' > s2; diff -f s1 s2; diff -f -e a b; echo $?; diff -rf d1 d2; echo $?", F),
    Case("diff_ed_applied", MANY + "diff -e x y > s.ed; cp x z; patch z s.ed; cmp z y && echo same; "
         "diff -c x y > c.diff; cp x w; patch w c.diff; cmp w y && echo same", F),
    Case("diff_recursive_context", "rm -r d1/sub d2/sub; touch -d @0 d1/f d2/f d1/s/k d2/s/k; diff -rc d1 d2; "
         "diff -re d1 d2; echo $?", F),
    Case("diff_side_by_side", "printf 'a\\nb\\nc\\n' > y1; printf 'a\\nB\\nc\\nd\\n' > y2; diff -y y1 y2; echo $?; "
         "diff -y -W 20 y1 y2; diff -y --suppress-common-lines y1 y2; diff -y --left-column y1 y2; diff -y y1 y1; "
         "echo $?; diff --side-by-side --width=30 -t a b; diff -y -u y1 y2; echo $?; diff -W 0 -y y1 y2; echo $?", F),
    Case("diff_ignore_blank_matching", "printf 'a\\n\\nb\\nc\\n' > B1; printf 'a\\nb\\n\\nc\\nX\\n' > B2; "
         "diff -B B1 B2; echo $?; printf 'a\\n\\nb\\n' > B3; printf 'a\\nb\\n\\n' > B4; diff -B B3 B4; echo $?; "
         "diff -B -u --label 1 --label 2 B1 B2; echo $?; printf 'a\\n#x\\nb\\n' > I1; printf 'a\\n#y\\nb\\n' > I2; "
         "printf 'a\\n#y\\nc\\n' > I3; diff -I '^#' I1 I2; echo $?; diff -I '^#' I1 I3; echo $?; "
         "diff --ignore-matching-lines='^#' -c --label 1 --label 3 I1 I3; diff -I 'x\\|y' I1 I2; echo $?; "
         "seq 1 20 > S1; seq 1 20 | sed 's/^3$//; s/^15$/f/' > S2; diff -B -U1 --label 1 --label 2 S1 S2", F),
    Case("diff_conflicting_styles", "diff -u -c a b; echo $?; diff -e --normal a b; echo $?; diff -u -U1 "
         "--label a --label b a b | head -3; diff -C x a b; echo $?", F),
]


@pytest.mark.parametrize("case", DIFF + DIFF_STYLES, ids=Case.id)
def test_diff(case: Case) -> None:
    assert_same(case)


class _Out:
    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.parts.append(data)


def _random_pair(rnd: random.Random, size: int) -> tuple[bytes, bytes]:
    k = rnd.choice([2, 3, 4, 6, 10, 26])
    letters = "abcdefghijklmnopqrstuvwxyz"
    a = [rnd.choice(letters[:k]) + "\n" for _ in range(rnd.randint(0, size))]
    b = list(a)
    for _ in range(rnd.randint(0, max(6, size // 10))):
        op = rnd.random()
        if op < 0.4 and b:
            del b[rnd.randrange(len(b))]
        elif op < 0.8:
            b.insert(rnd.randint(0, len(b)), rnd.choice(letters[: k + 1]) + "\n")
        elif b:
            b[rnd.randrange(len(b))] = rnd.choice(letters) + "\n"
    if rnd.random() < 0.2:
        a = [rnd.choice(letters[:k]) + "\n" for _ in range(rnd.randint(0, 15))]
    ea, eb = "".join(a).encode(), "".join(b).encode()
    if rnd.random() < 0.15:
        ea = ea.rstrip(b"\n")
    if rnd.random() < 0.15:
        eb = eb.rstrip(b"\n")
    return ea, eb


@pytest.mark.parametrize("seed", range(4))
def test_diff_hunks_match_gnu_on_random_inputs(seed: int, tmp_path: Path) -> None:
    """GNU's hunks, byte for byte, on random small and larger inputs (normal and unified)."""
    rnd = random.Random(seed)
    pa, pb = tmp_path / "A", tmp_path / "B"
    for _ in range(150):
        a, b = _random_pair(rnd, rnd.choice([8, 20, 60, 300]))
        pa.write_bytes(a)
        pb.write_bytes(b)
        ctx = rnd.choice([None, 0, 1, 3, 5])
        args = ["diff"] if ctx is None else ["diff", f"-U{ctx}", "--label", "A", "--label", "B"]
        real = subprocess.run([*args, str(pa), str(pb)], capture_output=True).stdout
        la, lb = split(a), split(b)
        script = changes(la, lb, ctx or 0)
        out = _Out()
        if ctx is None:
            normal(out, la, lb, script)  # type: ignore[arg-type]
        elif script:
            out.write(b"--- A\n+++ B\n")
            unified(out, la, lb, script, ctx)  # type: ignore[arg-type]
        assert b"".join(out.parts) == real, (a, b, ctx)


@pytest.mark.parametrize("seed", range(2))
def test_diff_context_and_ed_match_gnu_on_random_inputs(seed: int, tmp_path: Path) -> None:
    """`diff -c`, `-C N` and `-e` in the K shell write GNU's output byte for byte on random
    inputs (last lines without a newline among them); K's patch applies each back."""
    from differential import run_k

    rnd = random.Random(200 + seed)
    files: dict[str, File] = {}
    script, real = [], []
    for n in range(30):
        a, b = _random_pair(rnd, rnd.choice([10, 40, 200]))
        (tmp_path / "A").write_bytes(a)
        (tmp_path / "B").write_bytes(b)
        style = rnd.choice(["-c", "-C0", "-C1", "-C5", "-e"])
        labels = [] if style == "-e" else ["--label", f"a{n}", "--label", f"a{n}"]
        real.append(subprocess.run(["diff", style, *labels, str(tmp_path / "A"), str(tmp_path / "B")],
                                   capture_output=True).stdout)
        files[f"a{n}"] = File(a)
        files[f"b{n}"] = File(b)
        script.append(f"diff {style} {' '.join(labels)} a{n} b{n} | tee p{n}; echo =====; patch -s a{n} p{n} >&2;"
                      f" [ -s p{n} ] && {{ cmp -s a{n} b{n} || [ {style} = -e ] || echo FAILED{n} >&2; }}")
    r = run_k("\n".join(script), files)
    assert r.stdout.split(b"=====\n")[:-1] == real
    assert b"FAILED" not in r.stderr, r.stderr


# --------------------------------------------------------------------------- patch

N = "".join(f"{i}\n" for i in range(1, 31))
N2 = N.replace("\n3\n", "\nx\n").replace("\n25\n", "\ny\n")
P = {
    "m": N, "m2": N2, "w/": Dir(), "w/m": N, "w2/": Dir(), "w2/m": N2, "sub/": Dir(), "sub/m": N,
    "nl": "a\nb", "nl2": "a\nc\n",
}
MK = "diff -u m m2 > p.diff; "

PATCH = [
    Case("patch_stdin", MK + "patch < p.diff; echo $?; cmp m m2 && echo same; ls", P),
    Case("patch_i", MK + "patch -i p.diff; echo $?; cmp m m2 && echo same", P),
    Case("patch_backup", MK + "patch -b < p.diff; echo $?; ls m*; cmp m.orig sub/m && echo kept", P),
    Case("patch_no_backup", MK + "(echo new; cat sub/m) > m; patch --no-backup-if-mismatch < p.diff; ls m*", P),
    Case("patch_file_operand", MK + "cp m other; patch other p.diff; echo $?; cmp other m2 && echo same", P),
    Case("patch_reverse", MK + "patch < p.diff; patch -R < p.diff; echo $?; cmp m sub/m && echo back", P),
    Case("patch_dry_run", MK + "patch --dry-run < p.diff; echo $?; cmp m sub/m && echo untouched", P),
    Case("patch_p1", "diff -ru w w2 > p.diff; patch -p1 < p.diff; echo $?; cmp m m2 && echo same", P),
    Case("patch_p0", "diff -u w/m w2/m > p.diff; patch -p0 < p.diff; echo $?; cmp w/m m2 && echo same", P),
    Case("patch_basename", "diff -u w/m w2/m > p.diff; patch < p.diff; echo $?; cmp m m2 && echo same", P),
    Case("patch_offset", MK + "(echo new; cat sub/m) > m; patch < p.diff; echo $?; ls m*; head -n 4 m", P),
    Case("patch_fuzz", MK + "sed -i 's/^23$/Q/' m; patch < p.diff; echo $?; ls m*", P),
    Case("patch_failed", MK + "sed -i 's/^24$/Q/;s/^26$/Q/;s/^23$/Q/' m; patch < p.diff; echo $?; ls m*; cat m.rej", P),
    Case("patch_failed_after_offset", MK + "(echo a; echo b; echo c; cat sub/m) | sed 's/^25$/Q/' > m; patch < p.diff; echo $?;"
         " cat m.rej", P),
    Case("patch_failed_dry", MK + "sed -i 's/^24$/Q/;s/^26$/Q/;s/^23$/Q/' m; patch --dry-run < p.diff; echo $?; ls m*", P),
    Case("patch_reversed_detected", MK + "cp m2 m; patch < p.diff; echo $?; ls m*", P),
    Case("patch_unreversed_detected", MK + "patch -R --dry-run < p.diff; echo $?", P),
    Case("patch_no_newline", "diff -u nl nl2 > p.diff; patch nl < p.diff; cat nl; patch -R nl < p.diff; cat -A nl", P),
    Case("patch_new_file", "diff -uN none m > p.diff; patch < p.diff; echo $?; cmp none m && echo created", P),
    Case("patch_create", "diff -uN none m > p.diff; mv m keep; patch < p.diff; echo $?; ls; cmp keep m && echo same", P),
    Case("patch_delete_file", "diff -uN m none > p.diff; patch < p.diff; echo $?; ls m 2>&1", P),
    Case("patch_empty_result_kept", "diff -u --label m --label m m /dev/null > p.diff; patch < p.diff; echo $?;"
         " wc -c m; patch -R < p.diff; cmp m sub/m && echo back", P),
    Case("patch_missing_target", MK + "rm m; patch < p.diff; echo $?", P),
    Case("patch_wrong_p", "diff -u w/m w2/m > p.diff; patch -p3 < p.diff; echo $?", P),
    Case("patch_missing_patch_file", "patch -i nope; echo $?", P),
    Case("patch_garbage", "echo garbage | patch; echo $?", P),
    Case("patch_empty", "patch < /dev/null; echo $?", P),
    Case("patch_bad_option", "patch --frobnicate < /dev/null; echo $?", P),
    Case("patch_two_files", "cp w2/m w/n; cp m w2/n; touch -d @0 w/* w2/*; diff -ru w w2 > p.diff;"
         " cp w/n n; patch -p1 < p.diff; echo $?; head -n 3 n; cmp m m2 && echo same", P),
    Case("patch_git_diff", "printf 'diff --git a/m b/m\\nindex 1234567..89abcde 100644\\n' > p.diff;"
         " diff -u m m2 | sed -e 's,^--- m.*,--- a/m,' -e 's,^+++ m2.*,+++ b/m,' >> p.diff;"
         " patch < p.diff; echo $?; cmp m m2 && echo same", P),
    Case("patch_git_new_and_deleted", "printf 'diff --git a/gone b/gone\\ndeleted file mode 100644\\nindex 01e79c3..0000000\\n"
         "--- a/gone\\n+++ /dev/null\\n@@ -1,2 +0,0 @@\\n-1\\n-2\\ndiff --git a/n b/n\\nnew file mode 100644\\n"
         "index 0000000..3e75765\\n--- /dev/null\\n+++ b/n\\n@@ -0,0 +1 @@\\n+new\\n' > p.diff; printf '1\\n2\\n' > gone;"
         " patch -p1 < p.diff; echo $?; ls; cat n; patch -p1 < p.diff; echo $?", P),
]

# GNU patch's options agents use beyond -p -R -i -b --dry-run
BAD3 = "sed -i 's/^24$/Q/;s/^26$/Q/;s/^23$/Q/' m; "
PATCH_OPTIONS = [
    Case("patch_forward", MK + "cp m2 m; patch -N < p.diff; echo $?; ls m*; rm m.rej; patch -N --dry-run < p.diff; "
         "echo $?; ls m*", P),
    Case("patch_force", MK + "cp m2 m; patch -f < p.diff; echo $?; ls m*", P),
    Case("patch_batch", MK + "cp m2 m; patch -t < p.diff; echo $?; ls m*; cmp m sub/m && echo reversed; "
         "patch -R -t < p.diff; echo $?; cmp m sub/m && echo still", P),
    Case("patch_silent", MK + "patch -s < p.diff; echo $?; cp sub/m m; " + BAD3 + "patch --quiet < p.diff; echo $?", P),
    Case("patch_output", MK + "patch -o out < p.diff; echo $?; cmp out m2 && echo same; cmp m sub/m && echo untouched; "
         "patch -o - < p.diff | head -3", P),
    Case("patch_reject_file", MK + BAD3 + "patch -r rej < p.diff; echo $?; ls; patch -R -r - m < p.diff; echo $?; ls", P),
    Case("patch_remove_empty", "diff -u m /dev/null > p.diff; sed -i '1s/.*/--- m/;2s/.*/+++ m/' p.diff; "
         "patch -E < p.diff; echo $?; ls m", P),
    Case("patch_fuzz_factor", MK + "sed -i 's/^23$/Q/' m; patch -F0 < p.diff; echo $?; ls m*; patch -F x < p.diff; "
         "echo $?", P),
    Case("patch_ignore_whitespace", MK + "sed -i 's/^2$/2 /;s/^26$/  26/' m; patch -l < p.diff; echo $?; ls m*; "
         "cat -A m | sed -n '1,4p;24,27p'; cp sub/m m; sed -i 's/^2$/2 /;s/^27/27\\t/' m; patch -l < p.diff; "
         "cat -A m | sed -n '1,4p;24,28p'", P),
    Case("patch_directory", MK + "mkdir -p dd e; cp m dd/m; patch -d dd < p.diff; echo $?; cmp dd/m m2 && echo same; "
         "cp m e/m; patch -d e -i ../p.diff; echo $?; patch -d nodir < p.diff; echo $?", P),
    Case("patch_backup_names", MK + "patch -b -z .bak < p.diff; ls m*; cp sub/m m; patch -b -B old/ < p.diff; echo $?; "
         "ls old", P),
    Case("patch_noop_options", MK + "patch -u --binary < p.diff; echo $?", P),
    Case("patch_version_control", MK + "patch -b -V numbered < p.diff; patch -R -b -V numbered < p.diff; ls m*; "
         "cmp m.~1~ sub/m && cmp m.~2~ m2 && echo kept; patch -b -V existing < p.diff; ls m*; rm m.~*; "
         "patch -R -b -V existing < p.diff; ls m*; patch -b --version-control=t < p.diff; ls m*; rm m.*; "
         "patch -R -b -V never < p.diff; patch -b -V none < p.diff; ls m*; patch -V numbered -R < p.diff; ls m*; "
         "patch -b -V numbered -z .bak < p.diff; ls m*; patch -b -V bogus < p.diff; echo $?; patch -V n < p.diff; "
         "echo $?", P),
    Case("patch_version_control_env", MK + "VERSION_CONTROL=numbered patch -b < p.diff; ls m*; rm m.~*; "
         "PATCH_VERSION_CONTROL=simple VERSION_CONTROL=t patch -R -b < p.diff; ls m*; rm m.orig; "
         "SIMPLE_BACKUP_SUFFIX=.x patch -b < p.diff; ls m*; VERSION_CONTROL=bad patch -R -b < p.diff; echo $?; "
         "PATCH_VERSION_CONTROL=e patch -R -b < p.diff; echo $?", P),
    Case("patch_merge", "printf 'a\\nb\\nc\\nd\\ne\\nf\\ng\\nh\\ni\\nj\\n' > o; sed 's/^b$/X/;s/^i$/Y\\nZ/' o > n; "
         "diff -u --label f --label f o n > m.diff; sed 's/^b$/Q/' o > f; patch --merge < m.diff; "
         "echo $?; cat f; ls f*; sed 's/^b$/Q/' o > f; patch --merge=diff3 f m.diff; echo $?; cat f; cp o f; "
         "patch --merge < m.diff; echo $?; cat f; sed 's/^b$/X/' o > f; patch --merge < m.diff; echo $?; cat f; "
         "seq 1 12 > f; patch --merge < m.diff; echo $?; cat f; patch --merge=bad f m.diff; echo $?", P),
    Case("patch_ifdef", MK + "patch -D FOO < p.diff; echo $?; cat m; cp sub/m m; patch --ifdef=BAR -R m2 p.diff; "
         "sed -n '1,8p' m2; printf '1\n2\n3\n' > i1; printf '0\n1\n3\n' > i2; diff -u i1 i2 > i.diff; "
         "patch -D X -o - i1 i.diff; diff i1 i2 > n.diff; patch -D Y i1 n.diff; cat i1", P),
]


# Context diffs (`diff -c`, a side left out when it is only context), normal diffs and ed
# scripts (`diff`, `diff -e`: applied only to a file named on the command line), as GNU patch
# applies them; rejects of context and normal diffs in context format, line numbers of a
# failed hunk moved by what the hunks before it added (unified too)
CTX = ("*** m\n--- m\n***************\n*** 1,6 ****\n  1\n  2\n! 3\n  4\n  5\n  6\n--- 1,6 ----\n  1\n  2\n! x\n"
       "  4\n  5\n  6\n***************\n*** 22,28 ****\n  22\n  23\n  24\n! 25\n  26\n  27\n  28\n--- 22,28 ----\n"
       "  22\n  23\n  24\n! y\n  26\n  27\n  28\n")
CTX1 = ("*** m\t2024-01-02 03:04:05.000000000 +0000\n--- m3\t2024-01-02 03:04:05.000000000 +0000\n***************\n"
        "*** 10,11 ****\n--- 10,12 ----\n  10\n+ ten\n  11\n***************\n*** 19,21 ****\n  19\n- 20\n  21\n"
        "--- 20,21 ----\n")
M3 = N.replace("\n10\n", "\n10\nten\n").replace("\n20\n", "\n")
ED = "20d\n10a\nten\n.\n"
Q = {**P, "c.diff": CTX, "c1.diff": CTX1, "m3": M3, "e.diff": ED, "dots.ed": "1a\n..\n.\ns/.//\na\nend\n.\n",
     "bad.ed": "40d\n", "new.ed": "0a\nfirst\n.\n", "nl": "a\nb"}
PATCH_FORMATS = [
    Case("patch_context", "patch < c.diff; echo $?; cmp m m2 && echo same; patch -R < c.diff; echo $?; "
         "cmp m sub/m && echo back; patch --dry-run m c.diff; echo $?; cmp m sub/m && echo untouched", Q),
    Case("patch_context_offset_fuzz", "(echo a; echo b; cat sub/m) | sed 's/^1$/Q/' > m; patch < c.diff; echo $?; "
         "ls m*; head -n 6 m", Q),
    Case("patch_context_failed", "sed -i 's/^24$/Q/;s/^3$/Q/;s/^4$/Q/' m; patch < c.diff; echo $?; ls m*; cat m.rej; "
         "cp sub/m m; sed -i 's/^24$/Q/;s/^26$/Q/' m; patch -R -r - < c.diff; echo $?", Q),
    Case("patch_context_omitted_sides", "patch m c1.diff; echo $?; cmp m m3 && echo same; patch -R m c1.diff; "
         "cmp m sub/m && echo back; sed -i 's/^10$/Q/;s/^11$/Q/;s/^20$/Q/' m; patch m c1.diff; echo $?; cat m.rej", Q),
    Case("patch_context_reversed_detected", "cp m2 m; patch -t < c.diff; echo $?; cmp m sub/m && echo reversed", Q),
    Case("patch_normal", "diff m m3 > n.diff; patch m n.diff; echo $?; cmp m m3 && echo same; patch -R m < n.diff; "
         "echo $?; cmp m sub/m && echo back; patch < n.diff; echo $?; patch -i n.diff m; cmp m m3 && echo again", Q),
    Case("patch_normal_offset_failed", "diff m m2 > n.diff; (echo a; cat sub/m) > m; patch m < n.diff; echo $?; "
         "head -n 5 m; cp sub/m m; sed -i 's/^25$/Q/' m; diff sub/m m3 > n3.diff; cat n3.diff; "
         "diff sub/m m2 > n2.diff; patch m n2.diff; echo $?; cat m.rej", Q),
    Case("patch_ed", "patch m e.diff; echo $?; cmp m m3 && echo same; cp sub/m m; patch -e m < e.diff; "
         "cmp m m3 && echo forced; cp sub/m m; patch -R m < e.diff; echo $?; cmp m m3 && echo forwards; "
         "cp sub/m m; patch --dry-run m e.diff; echo $?; cmp m sub/m && echo untouched; patch -o out m e.diff; "
         "cmp out m3 && echo out; patch -o - m e.diff | sed -n 10,12p; patch -b m e.diff; ls m*", Q),
    Case("patch_ed_errors", "patch m bad.ed; echo $?; cmp m sub/m && echo untouched; patch < e.diff; echo $?; "
         "patch none new.ed; echo $?; cat none; patch nl dots.ed; echo $?; cat nl; patch nl2 bad.ed; echo $?", Q),
    Case("patch_unified_failed_after_insert", "diff -u sub/m m3 > u.diff; sed -i 's/^21$/Q/' m; patch m u.diff; "
         "echo $?; cat m.rej", Q),
]


@pytest.mark.parametrize("case", PATCH + PATCH_OPTIONS + PATCH_FORMATS, ids=Case.id)
def test_patch(case: Case) -> None:
    assert_same(case)


@pytest.mark.parametrize("seed", range(2))
def test_patch_round_trips_random_diffs(seed: int, tmp_path: Path) -> None:
    """Real `diff -u` output applied by K's patch (forward and -R) restores each side."""
    from differential import run_k

    rnd = random.Random(100 + seed)
    files: dict[str, File] = {}
    script = []
    for n in range(25):
        a, b = _random_pair(rnd, rnd.choice([10, 40, 200]))
        pa, pb = tmp_path / "A", tmp_path / "B"
        pa.write_bytes(a)
        pb.write_bytes(b)
        ctx = rnd.choice([0, 1, 3])
        d = subprocess.run(["diff", f"-U{ctx}", "--label", f"a{n}", "--label", f"a{n}", str(pa), str(pb)],
                           capture_output=True).stdout
        files[f"a{n}"] = File(a)
        files[f"b{n}"] = File(b)
        files[f"p{n}"] = File(d)
        script.append(f"cp a{n} o{n}; patch a{n} < p{n} >/dev/null; cmp a{n} b{n} || echo FWD{n};"
                      f" patch -R a{n} < p{n} >/dev/null; cmp a{n} o{n} || echo REV{n}")
    r = run_k("\n".join(script), files)
    assert r.stdout == b"" and r.stderr == b"", (r.stdout, r.stderr)


@pytest.mark.parametrize("seed", range(3))
def test_patch_merge_matches_gnu_on_random_edits(seed: int, tmp_path: Path) -> None:
    """--merge and --merge=diff3 (GNU patch's merge_hunk, locate_merge and bestmatch ported):
    a diff of two random edits of one file applied to a third edit of it, as GNU patch 2.7
    merges it (its reports' line numbers, markers, statuses)."""
    rnd = random.Random(300 + seed)
    files: dict[str, File] = {}
    script = []

    def edit(lines: list[str]) -> list[str]:
        out = list(lines)
        for _ in range(rnd.randint(1, 3)):
            k, op = rnd.randrange(len(out) + 1), rnd.choice("ids")
            if op == "i":
                out.insert(k, rnd.choice("xyzab"))
            elif k < len(out):
                out[k:k + 1] = [] if op == "d" else [rnd.choice("XYZab")]
        return out

    for n in range(12):
        base = [rnd.choice("abcdefgh") for _ in range(rnd.randint(3, 14))]
        (tmp_path / "A").write_text("".join(x + "\n" for x in base))
        (tmp_path / "B").write_text("".join(x + "\n" for x in edit(base)))
        d = subprocess.run(["diff", "-u", "--label", f"f{n}", "--label", f"f{n}", str(tmp_path / "A"),
                            str(tmp_path / "B")], capture_output=True).stdout
        files[f"p{n}"] = File(d)
        files[f"f{n}"] = File("".join(x + "\n" for x in edit(base)))
        script.append(f"patch {rnd.choice(['--merge', '--merge=diff3'])} f{n} < p{n}; echo $?; cat f{n}")
    assert_same(Case(f"merge{seed}", "\n".join(script), files))
