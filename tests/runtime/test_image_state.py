"""The image on the KState rung: a folder checked before anything is stored (each mistake named
by file and line, the image in force unchanged), versions applied and rolled back in one
transaction with their events, the files kept with each version; secrets, stored so that the
state's files never show a value in the clear; and drives, declared and listed."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kfs.journal import events_since
from kfs.kstate import KState
from kfs.runtime import drives, image, secrets

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "image"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A copy of the repository's example image, to break."""
    return Path(shutil.copytree(EXAMPLE, tmp_path / "img"))


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


def test_the_example_image_loads_with_its_files() -> None:
    loaded = image.load(EXAMPLE)
    spec = loaded.spec
    assert spec["name"] == "example"
    assert set(spec["hosts"]) == {"api", "echo"}
    routes = spec["hosts"]["api"]["routes"]
    assert routes["/hello"] == {"text": "hello from the image\n"}
    assert routes["/status"] == {"json": {"ok": True, "version": 1}}
    assert routes["/old"] == {"redirect": "/hello"}
    assert routes["/"] == routes["/index.html"] == {"file": "hosts/api/index.html"}
    assert spec["hosts"]["echo"]["handler"] == "handlers:echo"
    assert loaded.files["handlers.py"] == (EXAMPLE / "handlers.py").read_bytes()
    assert spec["network"] == ["example.com"]


@pytest.mark.parametrize(("change", "line", "message"), [
    (("name = \"example\"", "name = \"example"), 5, "malformed TOML: Illegal character"),
    (("files = ", "filez = "), 14, "unknown key 'filez' in [hosts.api]"),
    (('"hosts/api"', '"hosts/nope"'), 14, "hosts/nope: no such directory in the image"),
    (('"hosts/api"', '"../../etc"'), 14, "../../etc: paths stay inside the image folder"),
    (("handlers:echo", "handlers:nope"), 21, "handler 'handlers:nope': handlers has no function nope"),
    (("handlers:echo", "handlers echo"), 21, "expected module:function"),
    (('hosts = ["api", "echo"]', 'hosts = ["api", "nope"]'), 25, "no host 'nope' in [hosts]"),
    (('allow = ["example.com"]', 'allow = "example.com"'), 10, "allow must be a list"),
    (("[secrets.api_token]", "[secrets.api_token]\nvalue = 1"), 29, "unknown key 'value' in [secrets.api_token]"),
    (("[image]", "[imag]"), 4, "unknown section [imag]"),
])
def test_a_mistake_is_named_by_file_and_line(folder: Path, change: tuple[str, str], line: int, message: str) -> None:
    edit(folder / "komputer.toml", *change)
    with pytest.raises(image.ImageError) as e:
        image.load(folder)
    assert str(e.value).startswith(f"{folder / 'komputer.toml'}:{line}: "), str(e.value)
    assert message in str(e.value)


def test_duplicate_names_are_refused(folder: Path) -> None:
    manifest = folder / "komputer.toml"
    line = manifest.read_text().count("\n") + 2
    with manifest.open("a") as f:
        f.write('\n[hosts.api]\ntext = { "/x" = "y" }\n')
    with pytest.raises(image.ImageError, match=rf"komputer.toml:{line}: malformed TOML: Cannot declare \('hosts', 'api'\) twice"):
        image.load(folder)


def test_missing_manifest_and_a_host_serving_nothing(tmp_path: Path) -> None:
    with pytest.raises(image.ImageError, match="no komputer.toml"):
        image.load(tmp_path)
    (tmp_path / "komputer.toml").write_text("[hosts.empty]\n")
    with pytest.raises(image.ImageError, match=r"komputer.toml:1: host 'empty' serves nothing"):
        image.load(tmp_path)


def test_a_handler_that_raises_or_hangs_on_import_is_named(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    handlers = folder / "handlers.py"
    original = handlers.read_text()
    handlers.write_text(original + "\nx = 1 / 0\n")
    with pytest.raises(image.ImageError) as e:
        image.load(folder)
    assert str(e.value).startswith(f"{handlers}:{original.count(chr(10)) + 2}: handler 'handlers:echo': ZeroDivisionError")
    handlers.write_text(original + "\nimport time\ntime.sleep(60)\n")
    monkeypatch.setattr(image, "HANDLER_TIMEOUT", 1.0)
    # the error says the bound ended the wait: had the import been waited for, it would have loaded
    with pytest.raises(image.ImageError, match=r"img/handlers.py: handler 'handlers:echo': importing it did not "
                                               r"finish within 1 s"):
        image.load(folder)


def test_apply_rollback_and_the_image_in_force(state: KState, folder: Path) -> None:
    first = image.apply(state, image.load(EXAMPLE), by="test")
    edit(folder / "komputer.toml", 'name = "example"', 'name = "second"')
    (folder / "hosts/api/new.txt").write_text("new\n")
    second = image.apply(state, image.load(folder), by="test")
    assert (first, second) == (1, 2)
    assert image.current(state)["spec"]["name"] == "second"
    assert image.read_file(state, second, "hosts/api/new.txt") == b"new\n"
    with pytest.raises(FileNotFoundError):
        image.read_file(state, first, "hosts/api/new.txt")
    assert image.rollback(state, by="test") == first
    assert image.current(state)["spec"]["name"] == "example"
    with pytest.raises(LookupError, match="no earlier image"):
        image.rollback(state, by="test")
    assert image.rollback(state, second, by="test") == second
    with pytest.raises(LookupError, match="no image version 9"):
        image.rollback(state, 9, by="test")
    records, in_force = image.versions(state)
    assert [r["version"] for r in records] == [1, 2] and in_force == 2
    kinds = [(e["type"], e.get("version")) for e in events_since(state) if e["type"].startswith("image.")]
    assert kinds == [("image.apply", 1), ("image.apply", 2), ("image.rollback", 1), ("image.rollback", 2)]


def test_a_refused_image_leaves_the_one_in_force(state: KState, folder: Path) -> None:
    image.apply(state, image.load(EXAMPLE), by="test")
    edit(folder / "komputer.toml", "files = ", "filez = ")
    with pytest.raises(image.ImageError):
        image.apply(state, image.load(folder), by="test")
    assert image.versions(state)[1] == 1


def test_secrets_are_sealed_in_the_state(state: KState, tmp_path: Path) -> None:
    planted = b"s3cr3t-planted-value-7f3a"
    secrets.put(state, "token", planted, by="test", agents=["alice"])
    assert secrets.reveal(state, "token") == planted
    assert [h["name"] for h in secrets.handles(state, "alice")] == ["token"]
    assert secrets.handles(state, "bob") == []
    state.close()
    for file in (tmp_path / "state").iterdir():
        assert planted not in file.read_bytes(), file
    reopened = KState(tmp_path / "state")
    try:
        assert secrets.reveal(reopened, "token") == planted
        assert all(planted.decode() not in str(e) for e in events_since(reopened))
        secrets.remove(reopened, "token", by="test")
        with pytest.raises(secrets.SecretError, match="no secret token"):
            secrets.reveal(reopened, "token")
        with pytest.raises(secrets.SecretError, match="secret name '1bad'"):
            secrets.put(reopened, "1bad", b"x", by="test")
    finally:
        reopened.close()


def test_a_secret_needs_its_key(state: KState, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secrets.put(state, "token", b"value", by="test")
    monkeypatch.setenv(secrets.KEY_ENV, str(tmp_path / "other.key"))
    with pytest.raises(secrets.SecretError, match="no secret key at"):
        secrets.reveal(state, "token")
    (tmp_path / "other.key").write_bytes(b"\0" * 32)
    with pytest.raises(secrets.SecretError, match="does not open it"):
        secrets.reveal(state, "token")


def test_commands_hooks_and_crons_of_the_example() -> None:
    spec = image.load(EXAMPLE).spec
    assert spec["commands"]["greet"]["handler"] == "commands:greet"
    inspect = spec["commands"]["inspect"]
    assert inspect["options"]["readonly"] is True and inspect["script"].startswith("ls -la\n")
    assert [(h["on"], h["handler"]) for h in spec["hooks"]] == [("command", "hooks:ask_before_push")]  # no write hook
    locked = image.load(ROOT / "examples" / "image-locked").spec
    assert [(h["on"], h["handler"]) for h in locked["hooks"]] == [("write", "hooks:no_writes_to_locked")]
    assert spec["crons"] == [{"name": "heartbeat", "every": 3600, "command": "date -u >> ~/heartbeat.log",
                              "agent": "agent"}]


@pytest.mark.parametrize(("text", "message"), [
    ('[commands.x]\ndescription = "no code"\n', "komputer.toml:1: command 'x': give handler or markdown"),
    ('[commands.x]\nmarkdown = "nope.md"\n', "komputer.toml:2: nope.md: no such file in the image"),
    ('[[hooks]]\non = "boot"\nhandler = "h:f"\n', "komputer.toml:1: hook 1: on = 'boot': expected one of command"),
    ('[[hooks]]\non = "write"\n', "komputer.toml:1: hook 1: no handler"),
    ('[[crons]]\nevery = "1s"\nagent = "a"\ncommand = "true"\n[[crons]]\nevery = "soon"\nagent = "a"\ncommand = "x"\n',
     "komputer.toml:5: cron 2: every = 'soon': expected a period such as 1s"),
    ('[[crons]]\nname = "t"\nevery = "1s"\nagent = "a"\ncommand = "x"\n'
     '[[crons]]\nname = "t"\nevery = "1s"\nagent = "a"\ncommand = "y"\n', "komputer.toml:6: cron 2: name 't' is not a new name"),
    ('[[crons]]\nevery = "1s"\ncommand = "x"\n', "komputer.toml:1: cron 1: no agent"),
])
def test_commands_hooks_and_crons_mistakes(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "komputer.toml").write_text(text)
    with pytest.raises(image.ImageError) as e:
        image.load(tmp_path)
    assert message in str(e.value), str(e.value)


@pytest.mark.parametrize(("markdown", "message"), [
    ("---\nreadonly: maybe\n---\n```sh\nls\n```\n", "x.md:2: readonly: expected true or false"),
    ("---\ncolour: red\n---\n```sh\nls\n```\n", "x.md:2: unknown front matter 'colour: red'"),
    ("---\nreadonly: true\n```sh\nls\n```\n", "x.md:1: front matter opened with --- is never closed"),
    ("# only words\n\n```python\nprint(1)\n```\n", "x.md: no ```sh code block"),
])
def test_markdown_command_mistakes(tmp_path: Path, markdown: str, message: str) -> None:
    (tmp_path / "komputer.toml").write_text('[commands.x]\nmarkdown = "x.md"\n')
    (tmp_path / "x.md").write_text(markdown)
    with pytest.raises(image.ImageError) as e:
        image.load(tmp_path)
    assert str(e.value).startswith(str(tmp_path / message.split(":")[0])) and message.split(": ", 1)[1] in str(e.value)


DRIVES = '''[drives.scratch]
path = "/mnt/scratch"
kind = "memory"
max_bytes = "64M"

[drives.data]
path = "/mnt/data"
kind = "host"
source = "SOURCE"
readonly = true
'''


def test_drives_are_declared_with_their_backings(tmp_path: Path, state: KState) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "komputer.toml").write_text(DRIVES.replace("SOURCE", str(tmp_path / "src")))
    loaded = image.load(tmp_path)
    assert loaded.spec["drives"] == {
        "scratch": {"path": "/mnt/scratch", "kind": "memory", "max_bytes": 64 << 20},
        "data": {"path": "/mnt/data", "kind": "host", "source": str(tmp_path / "src"), "readonly": True}}
    image.apply(state, loaded, by="test")
    assert drives.of_image(image.current(state)) == [  # by path
        drives.Drive("data", "/mnt/data", "host", source=str(tmp_path / "src"), readonly=True),
        drives.Drive("scratch", "/mnt/scratch", "memory", max_bytes=64 << 20)]
    assert [d.describe() for d in drives.of_image(image.current(state))] == [str(tmp_path / "src"), "max 64M, 32M per agent"]
    assert drives.of_image(None) == [] and drives.of_image({"spec": {}}) == []  # a record from before drives


@pytest.mark.parametrize(("value", "expected"), [
    (4096, 4096), ("64M", 64 << 20), ("1G", 1 << 30), ("512k", 512 << 10), ("10", 10), ("2MiB", 2 << 20)])
def test_drive_sizes(value: object, expected: int) -> None:
    assert drives.parse_size(value) == expected


@pytest.mark.parametrize("value", [0, -1, True, "", "64X", "1.5G", "M", 1.5])
def test_drive_sizes_refused(value: object) -> None:
    with pytest.raises(ValueError):
        drives.parse_size(value)


@pytest.mark.parametrize(("change", "line", "message"), [
    (('path = "/mnt/scratch"', 'path = "mnt/scratch"'), 2, "path 'mnt/scratch': expected an absolute path in normal form"),
    (('path = "/mnt/scratch"', 'path = "/mnt/../scratch"'), 2, "expected an absolute path in normal form"),
    (('path = "/mnt/scratch"', 'path = "/mnt/scratch/"'), 2, "expected an absolute path in normal form"),
    (('path = "/mnt/scratch"', 'path = "/"'), 2, "path '/': a drive is mounted at a path of the tree, not over all of it"),
    (('path = "/mnt/scratch"', 'path = "/dev/shm"'), 2, "path /dev/shm: K shows its own files under /dev"),
    (('path = "/mnt/data"', 'path = "/mnt/scratch"'), 7, "path /mnt/scratch is the path of drive 'scratch'"),
    (('path = "/mnt/data"', 'path = "/mnt/scratch/data"'), 7, "path /mnt/scratch/data nests with /mnt/scratch, the path of drive 'scratch'"),
    (('path = "/mnt/data"', 'path = "/mnt"'), 7, "path /mnt nests with /mnt/scratch, the path of drive 'scratch'"),
    (('kind = "memory"', 'kind = "ram"'), 3, "kind = 'ram': expected memory, host, python"),
    (('max_bytes = "64M"', 'max_bytes = "lots"'), 4, "max_bytes = 'lots': expected a size such as 64M"),
    (('max_bytes = "64M"', 'max_bytes = true'), 4, "max_bytes = True: expected a size such as 64M"),
    (('max_bytes = "64M"', 'max_bytes = 1.5'), 4, "max_bytes must be an integer or string"),
    (('max_bytes = "64M"\n', ''), 1, "memory drive 'scratch': no max_bytes (its size, such as \"64M\")"),
    (('max_bytes = "64M"', 'max_bytes = "64M"\nreadonly = true'), 5, "readonly is not for memory drives"),
    (('readonly = true', 'readonly = true\nmax_bytes = 1'), 11, "max_bytes is not for host drives"),
    (('readonly = true', 'readonly = "yes"'), 10, "readonly must be a boolean"),
    (('source = "SOURCE"', 'source = "SOURCE/nope"'), 9, "/nope: no such directory on this host"),
    (('source = "SOURCE"', 'source = "relative"'), 9, "source 'relative': expected an absolute path of the host"),
    (('source = "SOURCE"\n', ''), 6, "host drive 'data': no source (the host directory it shows)"),
    (('kind = "host"', 'kind = "host"\nsize = 1'), 9, "unknown key 'size' in [drives.data] (expected path, kind, max_bytes"),
    (('[drives.data]', '[drives._data]'), 6, "drive name '_data': letters, digits"),
    (('[drives.data]\npath = "/mnt/data"\n', '[drives.data]\n'), 6, "drive 'data': no path"),
])
def test_drive_mistakes(tmp_path: Path, change: tuple[str, str], line: int, message: str) -> None:
    (tmp_path / "src").mkdir()
    text = DRIVES.replace(*change).replace("SOURCE", str(tmp_path / "src"))
    (tmp_path / "komputer.toml").write_text(text)
    with pytest.raises(image.ImageError) as e:
        image.load(tmp_path)
    assert str(e.value).startswith(f"{tmp_path / 'komputer.toml'}:{line}: "), str(e.value)
    assert message in str(e.value), str(e.value)


PYTHON_DRIVE = '''[drives.crm]
path = "/mnt/crm"
kind = "python"
handler = "crmdrive:CRMDrive"
readonly = true
'''


def test_a_python_drive_names_a_class_of_the_image(tmp_path: Path) -> None:
    (tmp_path / "crmdrive.py").write_text("class CRMDrive:\n    pass\n")
    (tmp_path / "komputer.toml").write_text(PYTHON_DRIVE)
    loaded = image.load(tmp_path)
    assert loaded.spec["drives"] == {
        "crm": {"path": "/mnt/crm", "kind": "python", "handler": "crmdrive:CRMDrive", "readonly": True}}
    assert "crmdrive.py" in loaded.files
    (drive,) = drives.of_image({"spec": loaded.spec})
    assert drive == drives.Drive("crm", "/mnt/crm", "python", handler="crmdrive:CRMDrive", readonly=True)
    assert drive.describe() == "crmdrive:CRMDrive"


@pytest.mark.parametrize(("change", "line", "message"), [
    (('handler = "crmdrive:CRMDrive"\n', ''), 1, "python drive 'crm': no handler (the image's class that serves"),
    (('crmdrive:CRMDrive', 'crmdrive CRMDrive'), 4, "handler 'crmdrive CRMDrive': expected module:Class"),
    (('crmdrive:CRMDrive', 'nope:CRMDrive'), 4, "handler 'nope:CRMDrive': no nope.py in the image"),
    (('readonly = true', 'readonly = true\nsource = "/tmp"'), 6, "source is not for python drives"),
    (('readonly = true', 'max_bytes = 1'), 5, "max_bytes is not for python drives"),
    (('readonly = true', 'readonly = 1'), 5, "readonly must be a boolean"),
    (('crmdrive:CRMDrive', 'crmdrive:Nope'), 4, "handler 'crmdrive:Nope': crmdrive has no"),
])
def test_python_drive_mistakes(tmp_path: Path, change: tuple[str, str], line: int, message: str) -> None:
    (tmp_path / "crmdrive.py").write_text("class CRMDrive:\n    pass\n")
    (tmp_path / "komputer.toml").write_text(PYTHON_DRIVE.replace(*change))
    with pytest.raises(image.ImageError) as e:
        image.load(tmp_path)
    assert str(e.value).startswith(f"{tmp_path / 'komputer.toml'}:{line}: "), str(e.value)
    assert message in str(e.value), str(e.value)


def test_a_python_drive_whose_module_raises_is_named_where_it_raised(tmp_path: Path) -> None:
    (tmp_path / "crmdrive.py").write_text("import os\n1 / 0\n")
    (tmp_path / "komputer.toml").write_text(PYTHON_DRIVE)
    with pytest.raises(image.ImageError) as e:
        image.load(tmp_path)
    assert str(e.value) == (f"{tmp_path / 'crmdrive.py'}:2: handler 'crmdrive:CRMDrive': "
                            "ZeroDivisionError: division by zero")


def test_komputer_drives_lists_the_image_in_force(tmp_path: Path) -> None:
    (tmp_path / "img").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "img" / "komputer.toml").write_text(DRIVES.replace("SOURCE", str(tmp_path / "src")))
    state = str(tmp_path / "state")

    def komputer(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "kshell.cli", *args, "--state", state], capture_output=True,
                              text=True)

    assert komputer("init").returncode == 0
    assert komputer("drives").stderr == "komputer drives: no image applied (`komputer image apply DIR`)\n"
    assert "(2 drives, 0 files)" in komputer("image", "apply", str(tmp_path / "img")).stdout
    listed = komputer("drives")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == [
        "NAME    KIND   PATH         BACKING" + " " * (len(str(tmp_path / "src")) - 7) + " MODE",
        f"data    host   /mnt/data    {tmp_path / 'src'} ro",
        "scratch memory /mnt/scratch max 64M, 32M per agent" + " " * (len(str(tmp_path / "src")) - 22) + " rw"]
