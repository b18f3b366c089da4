"""tar against GNU tar: create, list and extract (c x t, -f -z -v -C, old-style clusters),
messages and statuses; and archives crossing over: what K's tar writes real tar reads, and
what real tar writes K's tar reads (plain and gzip).

GNU tar archives a directory in the disk's order, which is arbitrary; K's tar in name order,
so the listings of archives a case creates are sorted before they are compared."""

from __future__ import annotations

import base64
import io
import subprocess
import tarfile
from pathlib import Path

import pytest
from differential import SEED_MTIME, Case, Dir, File, Link, assert_same, run_k

F = {
    "d/": Dir(), "d/a": "hello\n", "d/s/": Dir(0o750), "d/s/b": File("yo\n", 0o600), "d/l": Link("a"),
    "top.txt": "top\n", "out/": Dir(), "secret": File("s\n", 0o200), "junk": "not a tar\n",
}

TAR = [
    Case("tar_create_list", "tar cf x.tar d top.txt; echo $?; tar tf x.tar | sort", F),
    Case("tar_create_list_v", "tar cf x.tar top.txt d/a; tar tvf x.tar", F),
    Case("tar_create_verbose", "tar cvf x.tar d | sort; echo $?", F),
    Case("tar_create_stdout_verbose", "tar cvf - top.txt 2>err | tar tf -; cat err", F),
    Case("tar_list_v_dir", "tar cf x.tar d/s; tar -tvf x.tar", F),
    Case("tar_list_symlink", "tar cf x.tar d/l; tar tvf x.tar | sed 's/ 20[0-9-]* [0-9:]* / DATE /'", F),
    Case("tar_gzip", "tar czf x.tgz d; echo $?; tar tzf x.tgz | sort; tar tf x.tgz | sort; gunzip -c x.tgz | tar tf - | sort", F),
    Case("tar_extract", "tar cf x.tar d top.txt; rm -r d top.txt; tar xf x.tar; echo $?;"
         " find d top.txt | sort; cat d/a; stat -c '%a %Y %n' d d/s d/s/b top.txt | sort -k3", F),
    Case("tar_extract_C", "tar czf x.tgz d; tar xzf x.tgz -C out; find out | sort; readlink out/d/l", F),
    Case("tar_extract_C_first", "tar -C out -xf /dev/null; echo $?; tar cf x.tar d/a; tar -C out -xvf x.tar; cat out/d/a", F),
    Case("tar_create_C", "tar -C d -cf x.tar a s; tar tf x.tar | sort", F),
    Case("tar_extract_verbose", "tar cf x.tar top.txt d/a; rm top.txt; tar xvf x.tar", F),
    Case("tar_extract_member", "tar cf x.tar d top.txt; tar xf x.tar -C out top.txt; ls out", F),
    Case("tar_extract_overwrite", "tar cf x.tar top.txt; echo changed > top.txt; tar xf x.tar; cat top.txt", F),
    Case("tar_pipe", "tar cf - d | tar xf - -C out; echo $?; cat out/d/s/b", F),
    Case("tar_long_options", "tar --create --gzip --file=x.tgz top.txt; tar --list --file x.tgz", F),
    Case("tar_leading_slash", "tar cf x.tar \"$HOME/top.txt\"; echo $?; tar tf x.tar | sed 's,^[a-z].*/top.txt$,REL,'", F),
    Case("tar_missing_member", "tar cf x.tar top.txt nope; echo $?; tar tf x.tar", F),
    Case("tar_missing_archive", "tar tf nope.tar; echo $?; tar xf nope.tar; echo $?", F),
    Case("tar_not_in_archive", "tar cf x.tar top.txt; tar tf x.tar zz; echo $?; tar xf x.tar zz; echo $?", F),
    Case("tar_not_a_tar", "tar tf junk; echo $?", F),
    Case("tar_z_not_gzip", "tar cf x.tar top.txt; tar tzf x.tar; echo $?", F),
    Case("tar_empty_create", "tar cf x.tar; echo $?", F),
    Case("tar_no_mode", "tar f x.tar; echo $?; tar; echo $?", F),
    Case("tar_two_modes", "tar -c -t -f x.tar top.txt; echo $?", F),
    Case("tar_bad_option", "tar -q; echo $?; tar --frob; echo $?", F),
    Case("tar_C_missing", "tar cf x.tar top.txt; tar xf x.tar -C nope; echo $?", F),
    Case("tar_extract_as_user", "tar cf x.tar d; tar xf x.tar -C out; echo $?; stat -c '%a %Y %n' out/d out/d/s out/d/s/b"
         " out/d/a | sort -k3; cat out/d/s/b", F, user=1000),
    Case("tar_extract_over_symlink", "tar cf x.tar d/l; rm d/l; ln -s top.txt d/l; tar xvf x.tar; readlink d/l", F),
    Case("tar_verbose_twice", "tar cf x.tar top.txt; tar -tvvf x.tar", F),
    Case("tar_dot_members", "tar -czf x.tgz -C d . && tar tzf x.tgz | sort", F),
    Case("tar_trailing_slash", "tar cf x.tar d/ ./top.txt && tar tf x.tar | sort", F),
    Case("tar_missing_default_archive", "tar tf x.tar; echo $?", F),
    Case("tar_permission", "tar cf x.tar secret top.txt; echo $?; tar tf x.tar", F, user=1000),
]

# GNU tar's options agents use beyond c/x/t: exclusion, name lists, stripping, standard output,
# old files, wildcards, ownership and times written, formats; and their usage errors
G = {**F, "d/x.log": "log\n", "d/.git/": Dir(), "d/.git/HEAD": "ref\n", "d/s/c.log": "c\n", "list": "top.txt\nd/a\n"}
TAR_OPTIONS = [
    Case("tar_exclude_glob", "tar cf x.tar --exclude='*.log' d; tar tf x.tar | sort", G),
    Case("tar_exclude_component", "tar cf x.tar --exclude=s d top.txt; tar tf x.tar | sort", G),
    Case("tar_exclude_path", "tar cf x.tar --exclude=d/s d; tar tf x.tar | sort", G),
    Case("tar_exclude_vcs", "tar cf x.tar --exclude-vcs d; tar tf x.tar | sort", G),
    Case("tar_exclude_on_list", "tar cf x.tar d; tar tf x.tar --exclude='*.log' | sort", G),
    Case("tar_exclude_from", "printf '*.log\\n.git\\n' > ex; tar cf x.tar -X ex d; tar tf x.tar | sort", G),
    Case("tar_files_from", "tar cf x.tar -T list; tar tf x.tar; cat list | tar cf y.tar -T -; tar tf y.tar", G),
    Case("tar_files_from_null", "printf 'top.txt\\0d/a\\0' > l0; tar cf x.tar --null -T l0; tar tf x.tar", G),
    Case("tar_strip_components", "tar cf x.tar d; tar xf x.tar -C out --strip-components=1; find out | sort; "
         "rm -r out/*; tar xf x.tar -C out --strip-components 2; find out | sort", G),
    Case("tar_to_stdout", "tar cf x.tar d/a top.txt; tar xOf x.tar; tar -xf x.tar -O d/a; tar xvOf x.tar", G),
    Case("tar_auto_compress", "tar caf x.tar.gz d/a; gzip -t x.tar.gz && echo gz; tar caf x.tgz d/a; tar tf x.tgz; "
         "tar caf x.tar.bz2 d/a; tar tjf x.tar.bz2; od -An -c -N3 x.tar.bz2", G),
    Case("tar_keep_old_files", "tar cf x.tar top.txt; echo new > top.txt; tar xkf x.tar; echo $?; cat top.txt; "
         "tar xf x.tar --skip-old-files; echo $?; cat top.txt; tar xf x.tar --overwrite; cat top.txt", G),
    Case("tar_touch", "tar cf x.tar top.txt; tar xmf x.tar -C out; [ $(stat -c %Y out/top.txt) -gt 1000000000 ] "
         "&& echo touched", G),
    Case("tar_wildcards", "tar cf x.tar d; tar tf x.tar --wildcards '*.log' | sort; tar xf x.tar -C out "
         "--wildcards 'd/s/*'; find out | sort; tar tf x.tar '*.log'; echo $?; tar tf x.tar --no-wildcards '*.log'", G),
    Case("tar_dereference", "tar chf x.tar d/l; tar tvf x.tar | cut -c1-10", G),
    Case("tar_no_recursion", "tar cf x.tar --no-recursion d d/a; tar tf x.tar", G),
    Case("tar_remove_files", "cp -r d e; tar cf x.tar --remove-files e; echo $?; ls e; tar tf x.tar | sort", G),
    Case("tar_owner_group", "tar cf x.tar --owner=0 --group=0 --numeric-owner top.txt; tar tvf x.tar | cut -d' ' -f2; "
         "tar cf y.tar --owner=root:5 --group=wheel:7 top.txt; tar tvf y.tar --numeric-owner | cut -d' ' -f2; "
         "tar tvf y.tar | cut -d' ' -f2; tar cf z.tar --owner=nosuch --group=nog top.txt; tar tvf z.tar | cut -d' ' -f2", G),
    Case("tar_mtime", "tar cf x.tar --mtime='2024-01-02 03:04:05' top.txt; tar tvf x.tar | cut -d' ' -f4-; "
         "tar cf y.tar --mtime=@0 --sort=name top.txt d/a; tar tvf y.tar | cut -d' ' -f4-", G),
    Case("tar_format", "tar --format=ustar -cf x.tar top.txt; tar tf x.tar; tar --format=posix -cf y.tar top.txt; "
         "tar tf y.tar", G),
    Case("tar_option_errors", "tar cf x.tar --strip-components=x top.txt; echo $?; tar cf x.tar --sort=foo top.txt; "
         "echo $?; tar cf x.tar --format=foo top.txt; echo $?; tar cf x.tar -T nope; echo $?; "
         "tar cf x.tar -X nope top.txt; echo $?", G),
    Case("tar_same_permissions_as_user", "tar cf x.tar d; umask 077; tar xf x.tar -C out; stat -c '%a %n' out/d/a; "
         "rm -r out/d; tar xpf x.tar -C out; stat -c '%a %n' out/d/a", G, user=1000),
]


# Changing an archive in place: -r appends, -u appends what is newer than its archived copy
# (an archived directory's entries looked at one by one), --delete drops every copy of a member
# (also on a pipe), -A appends other archives; GNU's refusals of compressed archives and of -f -
OLD = SEED_MTIME - 86400
U = {"d/": Dir(OLD), "d/a": File("a\n", mtime=OLD), "d/s/": Dir(OLD), "d/s/c": File("c\n", mtime=OLD),
     "b": File("b\n", mtime=OLD), "n": "new\n"}
TAR_UPDATE = [
    Case("tar_append", "tar cf x.tar b; tar rvf x.tar n d/s; echo $?; tar tvf x.tar; wc -c < x.tar; "
         "tar rf x.tar b; tar tf x.tar", U),
    Case("tar_append_new_archive", "tar rf new.tar b; echo $?; tar tf new.tar; tar uf new2.tar n; echo $?; "
         "tar tf new2.tar; tar --append --file=x.tar n; tar tf x.tar", U),
    Case("tar_update_newer", "tar cf x.tar d b; touch -d 2030-01-01 d/s/c; tar uvf x.tar d b; echo $?; "
         "tar tf x.tar | sort | uniq -c; tar uf x.tar d; tar tf x.tar | wc -l", U),
    Case("tar_update_new_member", "tar cf x.tar b; tar -u -v -f x.tar b n d/s; echo $?; tar tf x.tar; "
         "touch -d 2030-01-01 b; tar --update -f x.tar b; tar tf x.tar", U),
    Case("tar_update_missing_file", "tar cf x.tar b; tar uf x.tar b nope; echo $?; tar tf x.tar", U),
    Case("tar_delete", "tar cf x.tar b d/s n; tar rf x.tar b; tar --delete -v -f x.tar b; echo $?; tar tf x.tar; "
         "wc -c < x.tar; tar --delete -f x.tar d/s; tar tf x.tar; tar --delete --file=x.tar n; tar tf x.tar; "
         "wc -c < x.tar", U),
    Case("tar_delete_missing", "tar cf x.tar b; tar --delete -f x.tar nope b; echo $?; tar tf x.tar; "
         "tar --delete -f x.tar; echo $?", U),
    Case("tar_delete_wildcards", "tar cf x.tar b d/s n; tar --delete -f x.tar 'd/*'; echo $?; "
         "tar --delete --wildcards -f x.tar 'd/*'; echo $?; tar tf x.tar", U),
    Case("tar_delete_pipe", "tar cf - b d/s n | tar --delete -f - d/s/c | tar tf -", U),
    Case("tar_concatenate", "tar cf x.tar b; tar cf y.tar n; tar cf z.tar d/a; tar Af x.tar y.tar z.tar; echo $?; "
         "tar tf x.tar; wc -c < x.tar; tar --concatenate -f x.tar nope.tar; echo $?; tar --catenate -f new.tar y.tar; tar tf new.tar; wc -c < new.tar", U),
    Case("tar_update_refused", "tar czf x.tgz b; tar rf x.tgz n; echo $?; tar -rzf x.tgz n; echo $?; "
         "tar --delete -zf x.tgz b; echo $?; tar -u -j -f x.tbz b; echo $?; tar tzf x.tgz; "
         "tar cf - b | tar rf - n; echo $?; tar -A -f - b; echo $?", U),
    Case("tar_append_absolute", "tar cf x.tar b; tar rf x.tar \"$HOME/n\"; echo $?; tar tf x.tar | sed 's,^[a-z].*/n$,REL,'", U),
]


# --transform (--xform): sed's s command on member names (create, list, extract), symlink
# targets unless S, several in order, flags g i x and a number; GNU's errors
X = {"d/": Dir(), "d/a": "a\n", "d/s/": Dir(), "d/s/b": "b\n", "d/l": Link("a"), "o/": Dir()}
TAR_TRANSFORM = [
    Case("tar_transform_create", "tar cf x.tar --transform='s/^d/e/' d; tar tvf x.tar | awk '{print $1, $6, $7, $8}' "
         "| sort -k2", X),
    Case("tar_transform_several", "tar cf y.tar --transform 's,a,Z,g' --xform='s/s/S/' d; tar tf y.tar | sort; "
         "tar tvf y.tar | grep -o 'l -> .*'; tar cf z.tar --xform='s/a/Q/S' d; tar tvf z.tar | grep -o 'l -> .*'", X),
    Case("tar_transform_extract_list", "tar cf x.tar d; tar xf x.tar -C o --transform='s/^d/f/'; find o | sort; "
         "tar tf x.tar --transform='s/d/X/' | sort; tar tf x.tar --transform='s/d/X/' --show-transformed-names | sort; "
         "tar xvf x.tar -C o --xform='s/^d/g/' | sort; tar cf t.tar --transform='s/^d$/top/' d; tar tf t.tar | sort", X),
    Case("tar_transform_flags", "tar cf u.tar --transform='s/D/k/i' d; tar tf u.tar | sort | head -2; "
         "tar cf v.tar --transform='s/\\(s\\)\\/\\(b\\)/\\2-\\1/' d; tar tf v.tar | sort; "
         "tar cf w.tar --transform='s/(s)\\/(b)/\\2_\\1/x' d; tar tf w.tar | sort; "
         "tar cf n.tar --transform='s/[as]/N/2' d; tar tf n.tar | sort; tar cf m.tar --transform='s/^./X/g' d; "
         "tar tf m.tar | sort", X),
    Case("tar_transform_errors", "tar cf w.tar --transform='s/[/x/' d; echo $?; tar cf w.tar --transform='bad' d; "
         "echo $?; tar cf w.tar --transform='s/d/D/q' d; echo $?; tar cf w.tar --transform='s/d/\\1/' d; echo $?; "
         "tar cf w.tar --transform='s/d/e' d; echo $?", X),
]


# -I PROG / --use-compress-program: the archive through a program the K shell runs (K's gzip
# here: K has no bzip2 or xz program, tar's -j and -J compress by themselves); a program that
# cannot be executed on extract, and updating through one, as GNU
TAR_PROGRAM = [
    Case("tar_I_gzip", "tar -I gzip -cf a.tgz d top.txt; echo $?; gzip -dc a.tgz | tar -t | sort; tar -tf a.tgz | sort;"
         " tar -I gzip -tvf a.tgz | wc -l; tar -I 'gzip -q' -xf a.tgz -C out; echo $?; find out | sort", F),
    Case("tar_use_compress_program", "tar --use-compress-program='gzip -9' -cf - top.txt | tar -tzf -; "
         "tar --use-compress-program=gzip -czf x.tgz d/a; tar -xOf x.tgz", F),
    Case("tar_I_cannot_exec", "tar czf a.tgz top.txt; tar -I nosuch -tf a.tgz; echo $?; tar -I 'nosuch -x' -xf a.tgz;"
         " echo $?; tar -I gzip -rf a.tgz top.txt; echo $?; tar --zstd -rf x.tar top.txt; echo $?", F),
]


@pytest.mark.parametrize("case", TAR + TAR_OPTIONS + TAR_UPDATE + TAR_TRANSFORM + TAR_PROGRAM, ids=Case.id)
def test_tar(case: Case) -> None:
    assert_same(case)


# --------------------------------------------------------------------------- crossing over


@pytest.mark.parametrize("z", ["", "z"])
def test_real_tar_reads_k_archives(z: str, tmp_path: Path) -> None:
    r = run_k(f"tar c{z}f x.tar d top.txt && base64 -w0 x.tar", F)
    assert r.status == 0, r.stderr
    archive = tmp_path / "x.tar"
    archive.write_bytes(base64.b64decode(r.stdout))
    listing = subprocess.run(["tar", f"t{z}vf", str(archive)], capture_output=True, text=True, env={"TZ": "UTC"})
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    assert "-rw-r--r-- root/root         6 2024-01-02 03:04 d/a" in lines
    assert "drwxr-x--- root/root         0 2024-01-02 03:04 d/s/" in lines
    assert any(x.startswith("lrwxrwxrwx root/root") and x.endswith("d/l -> a") for x in lines)
    out = tmp_path / "out"
    out.mkdir()
    done = subprocess.run(["tar", f"x{z}f", str(archive), "-C", str(out)], capture_output=True)
    assert done.returncode == 0, done.stderr
    assert (out / "d/s/b").read_text() == "yo\n"
    assert (out / "d/s/b").stat().st_mode & 0o777 == 0o600
    assert int((out / "d/a").stat().st_mtime) == SEED_MTIME
    assert (out / "d/l").readlink() == Path("a")


@pytest.mark.parametrize("z", ["", "z"])
def test_k_reads_real_archives(z: str, tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "p" / "q").mkdir(parents=True)
    (src / "p" / "f").write_bytes(b"data\n" * 100)
    (src / "p" / "q" / "g").write_text("g\n")
    (src / "p" / "q" / "g").chmod(0o640)
    (src / "p" / "ln").symlink_to("f")
    subprocess.run(["touch", "-h", "-d", "@1704164645", *map(str, src.glob("p/**/*")), str(src / "p")], check=True)
    made = subprocess.run(["tar", f"c{z}f", "-", "--sort=name", "-C", str(src), "p"], capture_output=True, check=True)
    files = {"a.tar": File(made.stdout), "out/": Dir()}
    r = run_k(f"tar t{z}vf a.tar; tar x{z}f a.tar -C out; echo $?; cat out/p/q/g; stat -c '%a %s %Y' out/p/q/g out/p/f;"
              " readlink out/p/ln", files)
    assert r.stderr == b""
    with tarfile.open(fileobj=io.BytesIO(made.stdout)) as tf:
        names = [m.name for m in tf]
    listed = [x.rsplit(" ", 1)[-1] if "->" not in x else x.split(" -> ")[0].rsplit(" ", 1)[-1]
              for x in r.stdout.decode().splitlines()[: len(names)]]
    assert [n.rstrip("/") for n in listed] == names
    rest = r.stdout.decode().splitlines()[len(names):]
    assert rest == ["0", "g", "640 2 1704164645", "644 500 1704164645", "f"]


# what GNU tar 1.34 prints when the program of -I, --zstd or a zstd archive (known by its
# magic) cannot run (probed with a PATH without zstd or the program): the real host has zstd,
# K has no zstd program and no delegation here
CANNOT_EXEC = ("tar (child): {0}: Cannot exec: No such file or directory\n"
               "tar (child): Error is not recoverable: exiting now\n"
               "tar: Child returned status 2\ntar: Error is not recoverable: exiting now\n")
NOT_FOUND = "/bin/sh: 1: {0}: not found\ntar: Child returned status 127\ntar: Error is not recoverable: exiting now\n"
ZSTD_TAR = bytes.fromhex("28b52ffd")  # a zstd frame's magic, all GNU tar looks at before it runs zstd -d


@pytest.mark.parametrize(("script", "err", "out"), [
    ("tar -I nosuch -cf - top.txt | wc -c; echo ${PIPESTATUS[@]}", NOT_FOUND.format("nosuch"), "0\n2 0\n"),
    ("tar --use-compress-program='nosuch -9' -cf x.tar top.txt; echo $?; wc -c < x.tar", NOT_FOUND.format("nosuch"),
     "2\n0\n"),
    ("tar --zstd -cf - top.txt | wc -c; echo ${PIPESTATUS[@]}", NOT_FOUND.format("zstd"), "0\n2 0\n"),
    ("tar -caf x.tar.zst top.txt; echo $?; tar -caf x.tzst top.txt; echo $?",
     NOT_FOUND.format("zstd") * 2, "2\n2\n"),
    ("tar cf x.tar top.txt; tar --zstd -tf x.tar; echo $?", CANNOT_EXEC.format("zstd"), "2\n"),
    ("tar -xf z.tar.zst; echo $?; tar -tvf z.tar.zst; echo $?", CANNOT_EXEC.format("zstd") * 2, "2\n2\n"),
])
def test_tar_program_that_cannot_run(script: str, err: str, out: str) -> None:
    r = run_k(script, {**F, "z.tar.zst": File(ZSTD_TAR + b"\0" * 60)})
    assert (r.stdout.decode(), r.stderr.decode(), r.status) == (out, err, 0)
