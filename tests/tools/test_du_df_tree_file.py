"""du, tree and file against GNU coreutils, tree 2.1 and Debian's file; df against the VFS's
own statfs figures (a host df reports the host's disk, so there is no peer to compare with).

du walks directories in readdir order, which differs between ext4 and the VFS: cases with
several entries in one directory sort the output."""

from __future__ import annotations

import gzip
import re

import pytest
from differential import Case, Dir, File, Link, assert_same, require_tools, run_k

ELF64_EXEC = b"\x7fELF\x02\x01\x01" + b"\0" * 9 + b"\x02\x00\x3e\x00\x01\x00\x00\x00" + b"\0" * 40
ELF64_DYN = b"\x7fELF\x02\x01\x01" + b"\0" * 9 + b"\x03\x00\x3e\x00\x01\x00\x00\x00" + b"\0" * 40
ELF64_REL = b"\x7fELF\x02\x01\x01" + b"\0" * 9 + b"\x01\x00\x3e\x00\x01\x00\x00\x00" + b"\0" * 40

T = {
    "a.txt": "x" * 5000,
    "b.txt": "y" * 100,
    "e.txt": "",
    "big.txt": "z" * 1500000,
    "d/": Dir(),
    "d/f.txt": "hello\n",
    "d/sub/": Dir(),
    "d/sub/g.txt": "g" * 9000,
    "d/.hid.txt": "h\n",
    "ro/": Dir(0o300),
    "ro/r.txt": "r\n",
    "ln": Link("a.txt"),
}

DU = [
    Case("du_file", "du a.txt", T), Case("du_files", "du a.txt b.txt e.txt", T),
    Case("du_all_files", "du -a d | grep txt | sort -k2", T),
    Case("du_human", "du -h a.txt big.txt", T), Case("du_bytes", "du -b a.txt b.txt e.txt", T),
    Case("du_bytes_human", "du -bh big.txt a.txt", T), Case("du_apparent", "du --apparent-size a.txt big.txt", T),
    Case("du_k_m", "du -k big.txt; du -m big.txt", T), Case("du_total", "du -c a.txt b.txt", T),
    Case("du_total_human", "du -ch a.txt big.txt", T), Case("du_summarize_file", "du -s big.txt", T),
    Case("du_depth_zero_file", "du -d 0 a.txt", T),
    Case("du_max_depth_files", "du -a --max-depth=1 d | grep txt | sort", T),
    Case("du_missing", "du nope; echo $?", T), Case("du_missing_and_file", "du nope b.txt; echo $?", T),
    Case("du_bad_option", "du -q; echo $?", T), Case("du_bad_depth", "du --max-depth=x d; echo $?", T),
    Case("du_s_and_a", "du -sa d; echo $?", T), Case("du_s_and_depth", "du -s --max-depth=1 d; echo $?", T),
    Case("du_permission", "du ro 2>&1 >/dev/null; echo $?", T, user=1000),
    Case("du_link_not_followed_b", "du -b ln", T), Case("du_link_blocks", "du ln", T),
    Case("du_dir", "du d", T), Case("du_dir_all", "du -a d | sort -k2", T),
    Case("du_dir_summarize", "du -s d .", T), Case("du_dir_human", "du -sh d", T),
    Case("du_dir_bytes", "du -b d/sub", T), Case("du_dir_depth", "du --max-depth=1 d | sort -k2", T),
    Case("du_dir_total", "du -c d a.txt", T), Case("du_dir_d0", "du -d 0 d", T),
    Case("du_dir_apparent_all", "du -ab d | sort -k2", T),
    Case("du_dir_then_parent", "du -s d/sub d", T), Case("du_dir_twice", "du d d", T),
    Case("du_hard_link_once", "ln a.txt hard; du -c a.txt hard b.txt", T),
    Case("du_repeated_operand", "du a.txt a.txt", T),
]
TREE_SEED = {"a": "1\n", "B": "2\n", "d/": Dir(), "d/e/": Dir(), "d/f": "3\n", ".h/": Dir(), ".h/g": "",
             "l": Link("a"), "ld": Link("d"), "broken": Link("nope"), "ro/": Dir(0o300), "ro/x": ""}
TREE = [
    Case("tree_default", "tree", TREE_SEED), Case("tree_all", "tree -a", TREE_SEED),
    Case("tree_level", "tree -L 1", TREE_SEED), Case("tree_dirs", "tree -d", TREE_SEED),
    Case("tree_dirs_level", "tree -d -L 1 .", TREE_SEED), Case("tree_subdir", "tree d", TREE_SEED),
    Case("tree_two_roots", "tree d .h", TREE_SEED), Case("tree_file_root", "tree a; echo $?", TREE_SEED),
    Case("tree_missing", "tree nope; echo $?", TREE_SEED), Case("tree_full_path", "tree -f d", TREE_SEED),
    Case("tree_noreport", "tree --noreport d", TREE_SEED),
    Case("tree_bad_long", "tree --bogus; echo $?", TREE_SEED), Case("tree_bad_short", "tree -k; echo $?", TREE_SEED),
    Case("tree_level_missing", "tree -L; echo $?", TREE_SEED), Case("tree_level_zero", "tree -L 0; echo $?", TREE_SEED),
    Case("tree_level_bad", "tree -L x; echo $?", TREE_SEED), Case("tree_cluster_level", "tree -aL 1", TREE_SEED),
    Case("tree_permission", "tree; echo $?", TREE_SEED, user=1000),
    Case("tree_empty_dir", "tree d/e", TREE_SEED),
    Case("tree_symlink_root", "tree ld", TREE_SEED), Case("tree_all_dirs", "tree -ad", TREE_SEED),
    Case("tree_dot", "tree -L 2 -a .", TREE_SEED), Case("tree_dashdash", "tree -- d", TREE_SEED),
]
FILE_SEED = {
    "empty": "", "dir/": Dir(), "sl": Link("ascii"), "bad": Link("nope"),
    "ascii": "hello world\n", "utf": "h\u00e9llo\n", "iso": b"\xe9t\xe9\n", "crlf": "a\r\nb\r\n", "cr": "a\rb\r",
    "noeol": "no end", "long": "x" * 400 + "\n", "esc": "a\x1b[1mb\n", "bom": b"\xef\xbb\xbfhi\n",
    "obj.json": '{"a": [1, 2], "b": "c"}\n', "arr": "[1,2]", "badjson": "{bad json\n",
    "s.sh": File("#!/bin/sh\necho hi\n", 0o755), "b": "#!/bin/bash\necho\n", "envb": "#!/usr/bin/env bash\nx\n",
    "py": "#!/usr/bin/env python3\nprint()\n", "foo": "#!/usr/bin/foo\nx\n", "ush": "#!/bin/sh\n\u00e9\n",
    "bin": b"\x00\x01\x02\x03", "elf_exec": ELF64_EXEC, "elf_dyn": ELF64_DYN, "elf_rel": ELF64_REL,
    "g.gz": gzip.compress(b"hello", mtime=0),
    "named.gz": b"\x1f\x8b\x08\x08\x25\x7f\x93\x65\x02\x03name.txt\x00" + gzip.compress(b"hello", mtime=0)[10:],
    "secret": File("s\n", 0o200),
}
FILE = [
    Case("file_empty", "file empty", FILE_SEED), Case("file_dir", "file dir", FILE_SEED),
    Case("file_symlink", "file sl bad", FILE_SEED), Case("file_deref", "file -L sl", FILE_SEED),
    Case("file_ascii", "file ascii", FILE_SEED), Case("file_utf8", "file utf", FILE_SEED),
    Case("file_iso", "file iso", FILE_SEED), Case("file_crlf_cr", "file crlf cr", FILE_SEED),
    Case("file_noeol_long", "file noeol long", FILE_SEED), Case("file_escapes_bom", "file esc bom", FILE_SEED),
    Case("file_json", "file obj.json arr badjson", FILE_SEED),
    Case("file_scripts", "file s.sh b envb py foo ush", FILE_SEED),
    Case("file_binary", "file bin", FILE_SEED),
    Case("file_elf", "file elf_exec elf_dyn elf_rel", FILE_SEED),
    Case("file_gzip", "file g.gz named.gz", FILE_SEED),
    Case("file_brief", "file -b ascii dir", FILE_SEED), Case("file_stdin", "file - < ascii", FILE_SEED),
    Case("file_mime", "file -i ascii utf obj.json g.gz dir empty bin s.sh sl", FILE_SEED),
    Case("file_mime_type", "file --mime-type ascii obj.json", FILE_SEED),
    Case("file_missing", "file nope; echo $?", FILE_SEED),
    Case("file_no_operand", "file; echo $?", FILE_SEED), Case("file_bad_option", "file -x; echo $?", FILE_SEED),
    Case("file_permission", "file secret; echo $?", FILE_SEED, user=1000),
    Case("file_many_aligned", "file empty ascii obj.json dir", FILE_SEED),
    Case("file_deref_broken", "file -L bad", FILE_SEED), Case("file_no_deref", "file -h sl", FILE_SEED),
    Case("file_brief_mime", "file -b -i ascii", FILE_SEED), Case("file_stdin_empty", "file - < /dev/null", FILE_SEED),
    Case("file_mixed_terminators", "printf 'a\\r\\nb\\nc\\n' > m; file m", FILE_SEED),
    Case("file_backspace", "printf 'a\\bb\\n' > m; file m", FILE_SEED),
    Case("file_exec_text", "file -b s.sh", FILE_SEED),
]


@pytest.mark.parametrize("case", DU, ids=Case.id)
def test_du_matches_gnu_on_files(case: Case) -> None:
    assert_same(case)


@pytest.mark.parametrize("case", TREE, ids=Case.id)
def test_tree_matches_tree(case: Case) -> None:
    require_tools("tree")
    assert_same(case)


@pytest.mark.parametrize("case", FILE, ids=Case.id)
def test_file_matches_file(case: Case) -> None:
    require_tools("file")
    assert_same(case)


def test_du_directory_counts_itself_and_its_files() -> None:
    r = run_k("du d; du -s d; du -b d/sub", T)
    assert r.stdout == b"16\td/sub\n28\td\n28\td\n13096\td/sub\n"


def test_du_counts_hard_links_once() -> None:
    r = run_k("ln a.txt hard; du -c a.txt hard; du a.txt a.txt", T)
    assert r.stdout == b"8\ta.txt\n8\ttotal\n8\ta.txt\n"


def _df(script: str, files=None):
    return run_k(script, files or {})


def test_df_header_and_kfs_row() -> None:
    r = _df("df")
    lines = r.stdout.splitlines(keepends=True)
    assert lines[0].split() == [b"Filesystem", b"1K-blocks", b"Used", b"Available", b"Use%", b"Mounted", b"on"]
    assert lines[1].startswith(b"kfs ") and lines[1].endswith(b" /\n")
    assert r.status == 0


def test_df_figures_come_from_statfs() -> None:
    r = _df("df; seq 30000 > z; df")
    rows = [line.split() for line in r.stdout.splitlines() if line.startswith(b"kfs")]
    assert len(rows) == 2
    size0, used0, avail0 = (int(x) for x in rows[0][1:4])
    size1, used1, avail1 = (int(x) for x in rows[1][1:4])
    assert size0 == size1 and size0 == used0 + avail0
    assert used1 > used0 and avail1 < avail0
    pct = int(rows[1][4].rstrip(b"%"))
    assert pct == -(-used1 * 100 // (used1 + avail1))


def test_df_columns_align() -> None:
    r = _df("df")
    header, row = r.stdout.splitlines()[:2]
    assert header.index(b"Mounted on") == row.index(b" /") + 1
    assert header.index(b"Use%") + 4 == row.index(b"%") + 1


def test_df_human_readable() -> None:
    r = _df("df -h")
    header, row = r.stdout.splitlines()[:2]
    assert header.split() == [b"Filesystem", b"Size", b"Used", b"Avail", b"Use%", b"Mounted", b"on"]
    assert re.match(rb"kfs +[\d.]+[KMGTPE]? +[\d.]+[KMGTPE]? +[\d.]+[KMGTPE]? +\d+% /$", row)


def test_df_print_type() -> None:
    r = _df("df -T")
    assert r.stdout.splitlines()[0].split()[:2] == [b"Filesystem", b"Type"]
    assert r.stdout.splitlines()[1].split()[:2] == [b"kfs", b"kfs"]


def test_df_file_operand() -> None:
    r = _df("df f", {"f": "x"})
    assert r.status == 0 and len(r.stdout.splitlines()) == 2


def test_df_missing_operand_file() -> None:
    k = assert_same("df nope; echo $?")
    assert k.stdout == b"1\n"


def test_df_bad_option_matches_gnu() -> None:
    assert_same("df --bogus; echo $?")


def test_df_bad_short_option_matches_gnu() -> None:
    assert_same("df -q; echo $?")


def _run_with_quota(script: str, max_bytes: int):
    """Run `script` in a K shell whose VFS has a byte quota of `max_bytes`."""
    import tempfile
    from pathlib import Path

    from kfs.kstate import KState
    from kfs.kstate.schema import U64
    from kfs.vfs import VFS, PathFS
    from kshell import Shell

    with tempfile.TemporaryDirectory(prefix="ktools-df-") as tmp:
        state = KState(Path(tmp) / "state", create=True)
        try:
            state.write(lambda txn: txn.put("meta", b"max_bytes", U64.pack(max_bytes)))
            fs = PathFS(VFS(state, by="test"), cwd="/", home="/", tilde=False)
            return Shell(fs, name="bash", env={"LC_ALL": "C"}).run(script)
        finally:
            state.close()


def test_df_size_is_the_quota() -> None:
    r = _run_with_quota("df", 100 * 1024 * 1024)
    row = r.stdout.splitlines()[1].split()
    assert row[0] == b"kfs" and row[1] == b"102400" and row[-1] == b"/"


def test_df_use_grows_with_stored_bytes() -> None:
    r = _run_with_quota("seq 200000 > f; df", 10 * 1024 * 1024)
    row = r.stdout.splitlines()[1].split()
    used, avail = int(row[2]), int(row[3])
    size = len("".join(f"{i}\n" for i in range(1, 200001)))
    assert used == -(-size // 4096) * 4 or abs(used * 1024 - size) < 8192
    assert used + avail == 10240
    assert row[4] == b"%d%%" % -(-used * 100 // 10240)


def test_df_human_quota() -> None:
    r = _run_with_quota("df -h", 2 * 1024**3)
    row = r.stdout.splitlines()[1].split()
    assert row[1] == b"2.0G" and row[2] == b"0" and row[3] == b"2.0G" and row[4] == b"0%"


def test_df_h_then_k_last_wins() -> None:
    r = _run_with_quota("df -hk", 1024 * 1024)
    assert r.stdout.splitlines()[0].split()[1] == b"1K-blocks"
    assert r.stdout.splitlines()[1].split()[1] == b"1024"


def test_df_row_per_operand() -> None:
    r = _run_with_quota("mkdir d; df / d", 1024 * 1024)
    assert len(r.stdout.splitlines()) == 3


def test_df_missing_among_present() -> None:
    r = _run_with_quota("df / nope; echo $?", 1024 * 1024)
    assert r.stderr == b"df: nope: No such file or directory\n"
    assert r.stdout.splitlines()[-1] == b"1" and len(r.stdout.splitlines()) == 3


def test_df_header_exact_format() -> None:
    r = _run_with_quota("df; df -h", 1024 * 1024)
    lines = r.stdout.splitlines()
    assert lines[0] == b"Filesystem     1K-blocks  Used Available Use% Mounted on"
    assert lines[1] == b"kfs                 1024     0      1024   0% /"
    assert lines[2] == b"Filesystem      Size  Used Avail Use% Mounted on"
    assert lines[3] == b"kfs             1.0M     0  1.0M   0% /"
