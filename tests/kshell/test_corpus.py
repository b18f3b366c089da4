"""The differential corpus: every case in tests/kshell/corpus/*.sh, run by bash and by the K shell.

Bash is the oracle. Each case runs once as `bash -c SCRIPT bash ARGS...` in a fresh temp
directory `<tmp>/home/agent` seeded with the case's files, and once by `kshell.Shell` on a fresh
KState whose `/home/agent` holds the same files; stdout, stderr and exit status must be equal.
Bash's output has its temp root `<tmp>` removed, so both shells see `/home/agent`; K's output has
its name prefix (`k: ` at a line start) replaced by bash's (`bash: `). A second test runs each case under bash
alone and checks the status the case declares, so the corpus cannot rot.

Case format (Oils-spec-test-like), one case per `#### name` header:

    #### name of the case
    script lines ...
    ## status: N                  bash's (and K's) exit status; default 0
    ## args: a 'b c'              positional parameters (shell words, split with shlex)
    ## seed: a.ts b.ts dir/ d/c   empty files, and directories (a trailing /), to pre-create
    ## file: PATH [MODE]          a file with content: the lines up to `## end` (octal MODE)
                                  (seed and file take shell words: 'with space.txt')
    ## stdin:                     standard input: the lines up to `## end`
    ## tools: mkdir basename      external tools the case needs (bash gets the host's; K its own)
    ## k-differs: REASON          a deliberate difference; K is checked against the k-* blocks:
    ## k-stdout:  ... ## end      K's stdout (else: bash's)
    ## k-stderr:  ... ## end      K's stderr, a regular expression matched in full (else: bash's)
    ## k-status: N                K's status (else: bash's)
    ## bash: skip REASON          bash does not run the case (it would not end, for example)
    ## k-limits: NAME=VALUE ...   K runs with these kshell.limits.Limits fields lowered

A block's lines are taken verbatim; a block ends at `## end`. Script lines never start with `## `.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parent / "corpus"
HOME = "/home/agent"
K_NAME = "k"  # K's $0 and message prefix; bash's is "bash"
BASH_TIMEOUT = 20.0
ENV = {"LC_ALL": "C", "PS4": "+ ", "TERM": "dumb", "USER": "agent", "LOGNAME": "agent"}
SHELL_LINKS = ("bash", "sh")  # the only programs on bash's PATH: K has them as builtins


@dataclass
class Case:
    file: str
    name: str
    line: int
    script: str = ""
    status: int = 0
    args: list[str] = field(default_factory=list)
    seed: list[str] = field(default_factory=list)
    files: dict[str, tuple[bytes, int]] = field(default_factory=dict)
    stdin: bytes = b""
    tools: list[str] = field(default_factory=list)
    k_differs: str | None = None
    k_stdout: bytes | None = None
    k_stderr: str | None = None
    k_status: int | None = None
    bash_skip: str | None = None
    k_limits: dict[str, float] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"corpus/{self.file}::{self.name}"


_BLOCKS = {"file", "stdin", "k-stdout", "k-stderr"}


def parse_corpus_file(path: Path) -> list[Case]:
    """Cases of one corpus file, in order; a malformed directive raises ValueError."""
    cases: list[Case] = []
    lines = path.read_text(encoding="utf-8").split("\n")
    case: Case | None = None
    script: list[str] = []
    i = 0

    def finish() -> None:
        if case is not None:
            while script and not script[-1].strip():
                script.pop()
            case.script = "\n".join(script) + "\n"
            cases.append(case)

    while i < len(lines):
        line = lines[i]
        if line.startswith("#### "):
            finish()
            case = Case(file=path.name, name=line[5:].strip(), line=i + 1)
            script = []
            i += 1
            continue
        if case is None:
            i += 1
            continue
        if line.startswith("## ") or line == "##":
            key, _, value = line[3:].partition(":")
            key, value = key.strip(), value.strip()
            if key in _BLOCKS:
                body: list[str] = []
                i += 1
                while i < len(lines) and lines[i] != "## end":
                    body.append(lines[i])
                    i += 1
                if i == len(lines):
                    raise ValueError(f"{path.name}:{case.line}: block {key!r} has no '## end'")
                text = "\n".join(body) + "\n" if body else ""
                if key == "file":
                    parts = shlex.split(value)
                    mode = int(parts[1], 8) if len(parts) > 1 else 0o644
                    case.files[parts[0]] = (text.encode(), mode)
                elif key == "stdin":
                    case.stdin = text.encode()
                elif key == "k-stdout":
                    case.k_stdout = text.encode()
                else:
                    case.k_stderr = text
            elif key == "status":
                case.status = int(value)
            elif key == "args":
                case.args = shlex.split(value)
            elif key == "seed":
                case.seed = shlex.split(value)
            elif key == "tools":
                case.tools = value.split()
            elif key == "k-differs":
                case.k_differs = value
            elif key == "k-status":
                case.k_status = int(value)
            elif key == "k-limits":
                for item in value.split():
                    lname, _, lvalue = item.partition("=")
                    case.k_limits[lname] = float(lvalue) if "." in lvalue else int(lvalue)
            elif key == "bash":
                if not value.startswith("skip"):
                    raise ValueError(f"{path.name}:{i + 1}: '## bash:' takes 'skip REASON'")
                case.bash_skip = value[4:].strip() or "no reason given"
            else:
                raise ValueError(f"{path.name}:{i + 1}: unknown directive {key!r}")
            i += 1
            continue
        script.append(line)
        i += 1
    finish()
    return cases


def load_corpus() -> list[Case]:
    cases: list[Case] = []
    for path in sorted(CORPUS.glob("*.sh")):
        cases.extend(parse_corpus_file(path))
    return cases


CASES = load_corpus()
_IDS = [c.id for c in CASES]

# The external tool set (cat, grep, mkdir, basename, ...) lands tool by tool: a seed example that
# uses a tool not registered yet is expected to fail on K (strict, so that it is noticed when it passes).
def _missing_tools(tools) -> list[str]:
    from kshell.tools import registry

    known = registry()
    return [t for t in tools if t not in known]


def _k_params() -> list:
    params = []
    for case in CASES:
        marks = []
        if case.tools and _missing_tools(case.tools):
            marks.append(pytest.mark.xfail(
                strict=True, reason=f"needs the external tools {' '.join(case.tools)} (tool-set issue)"))
        params.append(pytest.param(case, id=case.id, marks=marks))
    return params


# -- running bash ----------------------------------------------------------------------------


@dataclass
class Outcome:
    stdout: bytes
    stderr: bytes
    status: int


def _seed_host(home: Path, case: Case) -> None:
    for name in case.seed:
        target = home / name
        if name.endswith("/"):
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(b"")
    for name, (content, mode) in case.files.items():
        target = home / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        target.chmod(mode)


def run_bash(bash: str, case: Case, tmp: Path) -> Outcome:
    """Run the case under bash in `<tmp>/home/agent`, with `<tmp>` removed from its output."""
    root = Path(os.path.realpath(tmp))
    home = root / HOME.lstrip("/")
    home.mkdir(parents=True)
    bindir = root / "bin"
    bindir.mkdir()
    for name in SHELL_LINKS:
        (bindir / name).symlink_to(bash)
    for tool in case.tools:
        found = shutil.which(tool)
        if found is None:
            pytest.fail(f"{case.id} needs the host tool {tool!r}: install it")
        (bindir / tool).symlink_to(found)
    _seed_host(home, case)
    env = dict(ENV, HOME=str(home), PATH=str(bindir))
    proc = subprocess.run(
        [bash, "-c", case.script, "bash", *case.args],
        input=case.stdin, capture_output=True, cwd=home, env=env, timeout=BASH_TIMEOUT,
        preexec_fn=lambda: os.umask(0o022),
    )
    prefix = str(root).encode()
    return Outcome(_from_bash(proc.stdout, prefix), _from_bash(proc.stderr, prefix), proc.returncode)


# Bash 5.2 under -c names the source of a function body "environment" in its messages
# (`environment: line 1: cd: x: No such file or directory`); from a file it says the file's name.
# K says its own name, as for any other line of a -c script: a deliberate difference, made here
# once rather than in every case that fails inside a function.
_BASH_FUNC_SOURCE = re.compile(rb"(?m)^environment: line ")


def _from_bash(data: bytes, root: bytes) -> bytes:
    return _BASH_FUNC_SOURCE.sub(b"bash: line ", data.replace(root, b""))


@pytest.fixture(scope="session")
def bash_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory shared by the xdist workers of one run: each case's bash outcome is computed
    once, by whichever of its two tests comes first."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    path = root / "bash-outcomes"
    path.mkdir(exist_ok=True)
    return path


def bash_outcome(bash: str, case: Case, tmp: Path, cache: Path) -> Outcome:
    key = hashlib.sha256(repr((bash, case.script, case.args, case.seed, case.files, case.stdin,
                                case.tools)).encode()).hexdigest()
    entry = cache / f"{key}.json"
    if entry.exists():
        data = json.loads(entry.read_text())
        return Outcome(data["stdout"].encode("latin-1"), data["stderr"].encode("latin-1"), data["status"])
    out = run_bash(bash, case, tmp)
    partial = cache / f"{key}.{os.getpid()}.tmp"
    partial.write_text(json.dumps({"stdout": out.stdout.decode("latin-1"),
                                   "stderr": out.stderr.decode("latin-1"), "status": out.status}))
    partial.replace(entry)
    return out


# -- running K ---------------------------------------------------------------------------------


def run_k(case: Case, tmp: Path) -> Outcome:
    """Run the case by the K shell on a fresh KState whose /home/agent holds the case's files."""
    try:
        import kshell
    except ImportError as exc:  # the interpreter is not there yet: a failure, not a skip
        pytest.fail(f"kshell cannot be imported: {exc}")
    if not hasattr(kshell, "Shell"):
        pytest.fail("kshell.Shell does not exist yet")
    from kfs.kstate import KState
    from kfs.vfs import ROOT as ROOT_CRED
    from kfs.vfs import VFS, PathFS

    state = KState(tmp / "kstate", create=True)
    try:
        vfs = VFS(state, by="corpus")
        root_fs = PathFS(vfs, cred=ROOT_CRED, cwd="/", home=HOME)
        root_fs.mkdir(HOME, parents=True)
        root_fs.mkdir("/bin", parents=True)
        fs = PathFS(vfs, cred=ROOT_CRED, cwd=HOME, home=HOME)
        for name in case.seed:
            path = f"{HOME}/{name}"
            if name.endswith("/"):
                fs.mkdir(path.rstrip("/"), parents=True)
            else:
                parent = path.rsplit("/", 1)[0]
                if not fs.exists(parent):
                    fs.mkdir(parent, parents=True)
                fs.write_file(path, b"")
        for name, (content, mode) in case.files.items():
            path = f"{HOME}/{name}"
            parent = path.rsplit("/", 1)[0]
            if not fs.exists(parent):
                fs.mkdir(parent, parents=True)
            fs.write_file(path, content)
            fs.chmod(path, mode)
        env = dict(ENV, HOME=HOME, PATH="/bin", PWD=HOME)
        kwargs = {}
        if case.k_limits:
            from kshell.limits import Limits

            kwargs["limits"] = Limits(**case.k_limits)
        shell = kshell.Shell(fs, name=K_NAME, env=env, **kwargs)
        result = shell.run(case.script, stdin=case.stdin, args=list(case.args))
    finally:
        state.close()
    return Outcome(_as_bash(result.stdout), _as_bash(result.stderr), result.status)


_K_PREFIX = re.compile(rb"(?m)^" + re.escape(K_NAME.encode()) + rb": ")


def _as_bash(data: bytes) -> bytes:
    """K's messages with bash's name: `k: line 1: ...` -> `bash: line 1: ...`, at line starts.

    Both streams: `2>&1` and `$(... 2>&1)` carry messages into stdout. (No corpus case prints a
    line of its own starting with `k: `.)"""
    return _K_PREFIX.sub(b"bash: ", data)


# -- the tests ---------------------------------------------------------------------------------


def _show(label: str, data: bytes) -> str:
    text = data.decode("utf-8", "backslashreplace")
    return f"--- {label} ---\n{text}" + ("" if text.endswith("\n") or not text else "\n(no newline at end)\n")


def _report(case: Case, want: Outcome, got: Outcome, what: str) -> str:
    return (f"{case.id} (line {case.line}): {what} differs\n--- script ---\n{case.script}"
            + _show("bash stdout", want.stdout) + _show("K stdout", got.stdout)
            + _show("bash stderr", want.stderr) + _show("K stderr", got.stderr)
            + f"--- status: bash {want.status}, K {got.status} ---")


@pytest.mark.parametrize("case", CASES, ids=_IDS)
def test_bash_agrees_with_the_corpus(case: Case, bash: str, bash_cache: Path, tmp_path: Path) -> None:
    """Bash itself ends each case with the status the case declares (the corpus cannot rot)."""
    if case.bash_skip:
        assert case.k_differs, f"{case.id}: '## bash: skip' needs '## k-differs' and K's expectations"
        return
    got = bash_outcome(bash, case, tmp_path, bash_cache)
    assert got.status == case.status, (
        f"{case.id}: bash exits {got.status}, the case says {case.status}\n"
        + _show("bash stdout", got.stdout) + _show("bash stderr", got.stderr))


@pytest.mark.parametrize("case", _k_params())
def test_k_matches_bash(case: Case, bash: str, bash_cache: Path, tmp_path: Path) -> None:
    """The K shell prints what bash prints, on both streams, and exits with bash's status."""
    want = None if case.bash_skip else bash_outcome(bash, case, tmp_path / "bash", bash_cache)
    (tmp_path / "k").mkdir()
    got = run_k(case, tmp_path / "k")
    if case.k_differs:
        assert want is not None or (case.k_stdout is not None and case.k_status is not None), (
            f"{case.id}: without bash, the case must give k-stdout and k-status")
        exp_out = case.k_stdout if case.k_stdout is not None else want.stdout  # type: ignore[union-attr]
        exp_status = case.k_status if case.k_status is not None else want.status  # type: ignore[union-attr]
        ref = Outcome(exp_out, (case.k_stderr or "").encode(), exp_status)
        assert got.stdout == exp_out, _report(case, ref, got, f"stdout (k-differs: {case.k_differs})")
        if case.k_stderr is not None:
            text = got.stderr.decode("utf-8", "backslashreplace")
            assert re.fullmatch(case.k_stderr, text, re.S), _report(case, ref, got, "stderr (k-stderr)")
        elif want is not None:
            assert got.stderr == want.stderr, _report(case, want, got, "stderr")
        assert got.status == exp_status, _report(case, ref, got, "status")
        return
    assert want is not None
    assert (got.stdout, got.stderr, got.status) == (want.stdout, want.stderr, want.status), _report(
        case, want, got, "stdout" if got.stdout != want.stdout else "stderr" if got.stderr != want.stderr
        else "status")


def test_corpus_is_large_and_well_formed() -> None:
    """At least 600 cases, unique names per file, every k-differs case with a reason."""
    assert len(CASES) >= 600, f"only {len(CASES)} cases"
    seen: set[str] = set()
    for case in CASES:
        assert case.id not in seen, f"duplicate case {case.id}"
        seen.add(case.id)
        assert case.script.strip(), f"{case.id}: empty script"
        if case.k_differs is not None:
            assert case.k_differs, f"{case.id}: k-differs needs a reason"
        assert not any(line.startswith("## ") for line in case.script.splitlines()), case.id
