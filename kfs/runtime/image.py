"""The image: what a computer boots with, declared once in a folder (docs/image.md).

    image/
      komputer.toml      the declarations; every path in it is relative to this folder
      hosts/api/...      static files a virtual host serves
      handlers.py        Python a host's `handler = "handlers:echo"` names

`load(folder)` reads and checks the folder: a mistake is an `ImageError` naming the file and
line, raised before anything is stored. `apply` stores the checked image as a new version and
makes it the one in force, in one transaction with its `image.apply` event; `rollback` puts an
earlier version back in force. Every version stays (`versions`), with its files: a session
reads the image in force when it starts and needs nothing from the folder after `apply`.

Keys (database "keys"): `image/<v>` the version's record (JSON), `image-file/<v>/<path>` each
stored file's bytes, `image-current` the version in force (u64).
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from kfs.journal import append_event
from kfs.kstate import KState, Txn
from kfs.kstate.schema import U64
from kfs.runtime.drives import (
    HOST_SYSTEM,
    KINDS,
    RESERVED,
    is_home,
    memory_bound,
    parse_size,
    size_text,
    tree_of,
    under,
)

if TYPE_CHECKING:
    from pathlib import Path

PREFIX = b"image/"
FILE_PREFIX = b"image-file/"
CURRENT = b"image-current"
MANIFEST = "komputer.toml"
MAX_BYTES = 64 << 20  # what one image may store, its files together
HANDLER_TIMEOUT = 10.0  # seconds an image's Python may take to import, when it is checked
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")
_HANDLER = re.compile(r"([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*):([A-Za-z_][A-Za-z0-9_]*)\Z")

# what each section may hold: key -> the type its value must have (a tuple: any of them)
_SECTIONS: dict[str, dict[str, Any]] = {
    "image": {"name": str, "description": str},
    "network": {"allow": list},
}
_HOST_KEYS = {"files": str, "json": dict, "text": dict, "redirects": dict, "handler": str}
_AGENT_KEYS = {"hosts": list, "network": (bool, list)}
_SECRET_KEYS = {"description": str, "agents": list}
_COMMAND_KEYS = {"handler": str, "markdown": str, "description": str}
_HOOK_KEYS = {"on": str, "handler": str, "agents": list}
_CRON_KEYS = {"name": str, "every": str, "command": str, "agent": str}
_DRIVE_KEYS = {"path": str, "kind": str, "max_bytes": (int, str), "agent_max_bytes": (int, str), "source": str,
               "readonly": bool, "handler": str}
# the keys each kind of drive takes beyond path and kind, and why the others are not for it
_DRIVE_KIND_KEYS = {
    "memory": (("max_bytes", "agent_max_bytes"), "a memory drive starts empty at every server start"),
    "host": (("source", "readonly"), "a host drive has the room of its directory"),
    "python": (("handler", "readonly"), "a python drive's files are its handler's"),
}
_MODEL_KEYS = {"protocol": str, "model": str, "base_url": str, "key": str, "settings": dict}
MODEL_PROTOCOLS = ("anthropic", "openai-chat", "openai-responses", "deepseek", "deepseek-anthropic", "minimax",
                   "openai-compatible")  # kshell.agent.models.config makes each
_NAMED = ("hosts", "agents", "secrets", "commands", "drives", "models")  # sections of [section.NAME] tables
HOOK_EVENTS = ("command", "write", "session_start", "session_end")
_FRONT_MATTER_KEYS = {"readonly": bool, "mode": str, "description": str}
_EVERY = re.compile(r"(\d+)(s|m|h|d)\Z")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


class ImageError(ValueError):
    """A mistake in an image: `where` is `file:line` (or the file alone)."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where


class Image:
    """A checked image: `spec` the declarations (JSON-able), `files` what it stores (path -> bytes)."""

    __slots__ = ("spec", "files", "source")

    def __init__(self, spec: dict[str, Any], files: dict[str, bytes], source: str) -> None:
        self.spec = spec
        self.files = files
        self.source = source  # the folder it was read from, for the record

    def digest(self) -> str:
        """What tells two images apart: their declarations and files."""
        import hashlib
        import json

        h = hashlib.sha256(json.dumps(self.spec, sort_keys=True).encode())
        for rel in sorted(self.files):
            h.update(b"\0" + rel.encode() + b"\0" + hashlib.sha256(self.files[rel]).digest())
        return h.hexdigest()


class _Manifest:
    """komputer.toml's text, to name the line a key is on."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.lines = text.splitlines()

    def where(self, table: str, key: str | None = None) -> str:
        """`file:line` of `key` in `[table]` (dotted, as written in the header or inline)."""
        header = re.compile(r"\s*\[\[?\s*" + r"\s*\.\s*".join(re.escape(p) for p in table.split("."))
                            + r"\s*\]\]?\s*(#.*)?$")
        parent, _, last = table.rpartition(".")
        start = next((i for i, line in enumerate(self.lines) if header.match(line)), None)
        if start is None and parent:  # an inline table or dotted key: `api = {...}` under [parent]
            return self.where(parent, last)
        if start is None:
            return str(self.path)
        if key is None:
            return f"{self.path}:{start + 1}"
        assign = re.compile(r'\s*(?:"' + re.escape(key) + r'"|' + re.escape(key) + r")\s*=")
        for i in range(start + 1, len(self.lines)):
            if self.lines[i].lstrip().startswith("["):
                break
            if assign.match(self.lines[i]):
                return f"{self.path}:{i + 1}"
        return f"{self.path}:{start + 1}"


def load(folder: str | os.PathLike[str], *, check_handlers: bool = True,
         state_dir: str | os.PathLike[str] | None = None) -> Image:
    """Read and check the image in `folder` (module docstring); ImageError on any mistake.
    `state_dir`: the state it is for, which no host drive may show."""
    import tomllib
    from pathlib import Path

    root = Path(folder).resolve()
    path = root / MANIFEST
    try:
        _contained(root, path)
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ImageError(str(root), f"no {MANIFEST} (an image is a folder holding one)") from None
    except OSError as e:
        raise ImageError(str(path), e.strerror or str(e)) from None
    try:
        text = raw.decode()
        data = tomllib.loads(text)
    except UnicodeDecodeError as e:
        raise ImageError(str(path), f"not UTF-8 text ({e.reason} at byte {e.start})") from None
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(e))
        where = f"{path}:{m.group(1)}" if m else str(path)
        raise ImageError(where, f"malformed TOML: {message}" + (f" (column {m.group(2)})" if m else "")) from None
    manifest = _Manifest(path, text)
    files: dict[str, bytes] = {}
    spec: dict[str, Any] = {"name": root.name, "description": "", "network": [], "hosts": {}, "agents": {},
                            "secrets": {}, "commands": {}, "hooks": [], "crons": [], "drives": {}}
    for section, value in data.items():
        if section in _SECTIONS:
            _check_table(manifest, section, value, _SECTIONS[section])
        elif section in _NAMED:
            if not isinstance(value, dict):
                raise ImageError(manifest.where(section), f"[{section}] must hold tables ([{section}.NAME])")
        elif section in ("hooks", "crons"):
            if not isinstance(value, list):
                raise ImageError(manifest.where(section), f"{section} are an array of tables ([[{section}]])")
        else:
            known = ", ".join(sorted([*_SECTIONS, *_NAMED, "hooks", "crons"]))
            raise ImageError(manifest.where(section), f"unknown section [{section}] (expected one of {known})")
    spec["name"] = data.get("image", {}).get("name", root.name)
    spec["description"] = data.get("image", {}).get("description", "")
    spec["network"] = _strings(manifest, "network", "allow", data.get("network", {}).get("allow", []))
    for name, host in data.get("hosts", {}).items():
        spec["hosts"][_name(manifest, "hosts", name)] = _host(manifest, root, name, host, files)
    for name, agent in data.get("agents", {}).items():
        table = f"agents.{name}"
        _check_table(manifest, table, agent, _AGENT_KEYS)
        entry: dict[str, Any] = {}
        if "hosts" in agent:
            entry["hosts"] = _strings(manifest, table, "hosts", agent["hosts"])
            for host in entry["hosts"]:
                if host not in spec["hosts"]:
                    raise ImageError(manifest.where(table, "hosts"), f"no host {host!r} in [hosts]")
        if "network" in agent:
            network = agent["network"]
            entry["network"] = network if isinstance(network, bool) else _strings(manifest, table, "network", network)
        spec["agents"][_name(manifest, "agents", name)] = entry
    for name, secret in data.get("secrets", {}).items():
        table = f"secrets.{name}"
        _check_table(manifest, table, secret, _SECRET_KEYS)
        spec["secrets"][_name(manifest, "secrets", name)] = {
            "description": secret.get("description", ""),
            "agents": _strings(manifest, table, "agents", secret.get("agents", [])) or None}
    for name, command in data.get("commands", {}).items():
        spec["commands"][_name(manifest, "commands", name)] = _command(manifest, root, name, command, files)
    for i, hook in enumerate(data.get("hooks", []), 1):
        spec["hooks"].append(_hook(manifest, root, i, hook))
    for i, cron in enumerate(data.get("crons", []), 1):
        spec["crons"].append(_cron(manifest, i, cron, spec["crons"]))
    for name, drive in data.get("drives", {}).items():
        spec["drives"][_name(manifest, "drives", name)] = _drive(manifest, root, name, drive, spec["drives"],
                                                                 state_dir)
    for name, model in data.get("models", {}).items():
        spec.setdefault("models", {})[_name(manifest, "models", name)] = _model(manifest, name, model)
    _store_python(root, files)
    size = sum(len(v) for v in files.values())
    if size > MAX_BYTES:
        raise ImageError(str(root), f"stores {size} bytes, more than {MAX_BYTES} allowed")
    if check_handlers:
        _check_handlers(manifest, root, spec)
    return Image(spec, files, str(root))


def of_record(state: KState, record: dict[str, Any] | None) -> Image:
    """The image in force as an Image again (its declarations and stored files); an empty one
    without a record."""
    if record is None:
        spec: dict[str, Any] = {"name": "", "description": "", "network": [], "hosts": {}, "agents": {},
                                "secrets": {}, "commands": {}, "hooks": [], "crons": [], "drives": {}}
        return Image(spec, {}, "")
    files = {rel: read_file(state, record["version"], rel) for rel in record["files"]}
    return Image(json.loads(json.dumps(record["spec"])), files, record["source"])


def with_drives(image: Image, drives: dict[str, dict[str, Any]], files: dict[str, bytes], *,
                state_dir: str | os.PathLike[str] | None = None) -> Image:
    """`image` with more drives (name -> the keys a [drives.NAME] table has), each checked as
    komputer.toml's are, a drive of the same name replaced; `files`: modules their python
    handlers import, stored with the image (kshell.sdk's boot(drives=...))."""
    import tempfile
    from pathlib import Path

    stored = {**image.files, **files}
    spec = json.loads(json.dumps(image.spec))
    with tempfile.TemporaryDirectory(prefix="k-image-") as folder:
        root = Path(folder).resolve()
        for rel, data in stored.items():  # a python drive's handler is looked for among them
            if rel.endswith(".py"):
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_bytes(data)
        manifest = _Manifest(root / MANIFEST, "")
        for name, drive in drives.items():
            earlier = {k: v for k, v in spec["drives"].items() if k != name}
            spec["drives"][_name(manifest, "drives", name)] = _drive(manifest, root, name, drive, earlier,
                                                                    state_dir)
    return Image(spec, stored, image.source)


def _model(manifest: _Manifest, name: str, model: Any) -> dict[str, Any]:
    """A model the agent loop may use (docs/agent.md): its protocol, the provider's model
    name, a base URL, and its API key as a secret's handle (never the key itself)."""
    table = f"models.{name}"
    _check_table(manifest, table, model, _MODEL_KEYS)
    if model.get("protocol") not in MODEL_PROTOCOLS:
        raise ImageError(manifest.where(table, "protocol"),
                         f"protocol must be one of {', '.join(MODEL_PROTOCOLS)}")
    if not model.get("model"):
        raise ImageError(manifest.where(table), f"model {name!r}: give model (the provider's name for it)")
    if model["protocol"] == "openai-compatible" and not model.get("base_url"):
        raise ImageError(manifest.where(table), f"model {name!r}: an openai-compatible model needs base_url")
    return dict(model)


def _check_table(manifest: _Manifest, table: str, value: Any, keys: dict[str, Any]) -> None:
    if not isinstance(value, dict):
        raise ImageError(manifest.where(table), f"[{table}] must be a table")
    for key, item in value.items():
        want = keys.get(key)
        if want is None:
            raise ImageError(manifest.where(table, key),
                             f"unknown key {key!r} in [{table}] (expected {', '.join(keys)})")
        kinds = want if isinstance(want, tuple) else (want,)
        if not isinstance(item, kinds):
            names = " or ".join({"str": "string", "dict": "table", "bool": "boolean", "int": "integer"}.get(
                t.__name__, t.__name__) for t in kinds)
            article = "an" if names[0] in "aeiou" else "a"
            raise ImageError(manifest.where(table, key), f"{key} must be {article} {names}")


def _strings(manifest: _Manifest, table: str, key: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ImageError(manifest.where(table, key), f"{key} must be a list of non-empty strings")
    return list(value)


def _name(manifest: _Manifest, section: str, name: str) -> str:
    if not _NAME.match(name):
        raise ImageError(manifest.where(f"{section}.{name}"),
                         f"{section[:-1]} name {name!r}: letters, digits, '.', '_' and '-' only, up to 64")
    return name


def _host(manifest: _Manifest, root: Path, name: str, host: Any, files: dict[str, bytes]) -> dict[str, Any]:
    """A virtual host's routes: static files (read now, stored with the image), JSON values,
    texts, redirects, and a handler for every other path."""

    table = f"hosts.{name}"
    _check_table(manifest, table, host, _HOST_KEYS)
    routes: dict[str, Any] = {}
    if "files" in host:
        folder = _inside(manifest, root, table, "files", host["files"])
        if not folder.is_dir():
            raise ImageError(manifest.where(table, "files"), f"{host['files']}: no such directory in the image")
        for full in _walk(root, folder):
            rel = full.relative_to(root).as_posix()
            files[rel] = _contained(root, full).read_bytes()
            url = "/" + full.relative_to(folder).as_posix()
            routes[url] = {"file": rel}
            if full.name == "index.html":
                routes[url[: -len("index.html")] or "/"] = {"file": rel}
    for kind in ("json", "text", "redirects"):
        for url, value in host.get(kind, {}).items():
            if not url.startswith("/"):
                raise ImageError(manifest.where(table, kind), f"{kind}: path {url!r} must start with '/'")
            if kind == "text" and not isinstance(value, str) or kind == "redirects" and not isinstance(value, str):
                raise ImageError(manifest.where(table, kind), f"{kind}: {url} must map to a string")
            routes[url] = {kind.rstrip("s") if kind == "redirects" else kind: value}
    out: dict[str, Any] = {"routes": routes}
    if "handler" in host:
        out["handler"] = _handler(manifest, root, table, host["handler"])
    if not routes and "handler" not in out:
        raise ImageError(manifest.where(table), f"host {name!r} serves nothing (give files, json, text, "
                                                "redirects or handler)")
    return out


def _command(manifest: _Manifest, root: Path, name: str, command: Any, files: dict[str, bytes]) -> dict[str, Any]:
    """A command agents run by name: Python (`handler`) or a markdown runbook (`markdown`)."""
    table = f"commands.{name}"
    _check_table(manifest, table, command, _COMMAND_KEYS)
    if ("handler" in command) == ("markdown" in command):
        raise ImageError(manifest.where(table), f"command {name!r}: give handler or markdown (one of them)")
    out: dict[str, Any] = {"description": command.get("description", "")}
    if "handler" in command:
        out["handler"] = _handler(manifest, root, table, command["handler"])
        return out
    path = _inside(manifest, root, table, "markdown", command["markdown"])
    if not path.is_file():
        raise ImageError(manifest.where(table, "markdown"), f"{command['markdown']}: no such file in the image")
    rel = path.relative_to(root).as_posix()
    files[rel] = path.read_bytes()
    options, script = markdown_command(files[rel].decode("utf-8", "replace"), str(path))
    out.update(markdown=rel, options=options, script=script)
    out["description"] = out["description"] or options.get("description", "")
    return out


def markdown_command(text: str, where: str) -> tuple[dict[str, Any], str]:
    """A markdown command's options (its front matter: `key: value` lines between `---` lines)
    and script (its ```sh / ```bash / ``` code blocks, in order); ImageError names the line."""
    lines = text.splitlines()
    options: dict[str, Any] = {}
    body_start = 0
    if lines and lines[0].strip() == "---":
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
        if end is None:
            raise ImageError(f"{where}:1", "front matter opened with --- is never closed")
        for i in range(1, end):
            line = lines[i].strip()
            if not line or line.startswith("#"):
                continue
            key, sep, value = line.partition(":")
            key, value = key.strip(), value.strip()
            want = _FRONT_MATTER_KEYS.get(key)
            if not sep or want is None:
                raise ImageError(f"{where}:{i + 1}", f"unknown front matter {line!r} "
                                                     f"(expected {', '.join(_FRONT_MATTER_KEYS)})")
            if want is bool:
                if value not in ("true", "false"):
                    raise ImageError(f"{where}:{i + 1}", f"{key}: expected true or false")
                options[key] = value == "true"
            else:
                options[key] = value.strip("\"'")
        if options.get("mode", "readonly") not in ("full", "limited", "plan", "readonly"):
            raise ImageError(where, f"mode {options['mode']!r}: expected readonly, plan, limited or full")
        body_start = end + 1
    script: list[str] = []
    fence: str | None = None
    for line in lines[body_start:]:
        stripped = line.strip()
        if fence is None and stripped.startswith("```"):
            fence = stripped[3:].strip().split(" ")[0] if stripped[3:].strip() else ""
            if fence not in ("", "sh", "bash", "shell", "console"):
                fence = "skip:" + fence
            continue
        if fence is not None and stripped == "```":
            fence = None
            continue
        if fence is not None and not fence.startswith("skip:"):
            script.append(line)
    if not script:
        raise ImageError(where, "no ```sh code block: a markdown command runs its code blocks")
    return options, "\n".join(script) + "\n"


def _hook(manifest: _Manifest, root: Path, index: int, hook: Any) -> dict[str, Any]:
    table = f"hooks.{index}"
    where = _nth(manifest, "hooks", index)
    if not isinstance(hook, dict):
        raise ImageError(where, "a hook is a table")
    for key in hook:
        if key not in _HOOK_KEYS:
            raise ImageError(where, f"unknown key {key!r} in hook {index} (expected {', '.join(_HOOK_KEYS)})")
    if hook.get("on") not in HOOK_EVENTS:
        raise ImageError(where, f"hook {index}: on = {hook.get('on')!r}: expected one of {', '.join(HOOK_EVENTS)}")
    if "handler" not in hook:
        raise ImageError(where, f"hook {index}: no handler")
    m = _HANDLER.match(str(hook["handler"]))
    if m is None or _module_file(root, m.group(1)) is None:
        raise ImageError(where, f"hook {index}: handler {hook['handler']!r}: expected module:function of the image")
    agents = hook.get("agents")
    if agents is not None and not (isinstance(agents, list) and all(isinstance(a, str) for a in agents)):
        raise ImageError(where, f"hook {index}: agents must be a list of strings")
    return {"on": hook["on"], "handler": hook["handler"], "agents": agents, "index": index, "table": table}


def _cron(manifest: _Manifest, index: int, cron: Any, earlier: list[dict[str, Any]]) -> dict[str, Any]:
    where = _nth(manifest, "crons", index)
    if not isinstance(cron, dict):
        raise ImageError(where, "a cron is a table")
    for key, value in cron.items():
        if key not in _CRON_KEYS:
            raise ImageError(where, f"unknown key {key!r} in cron {index} (expected {', '.join(_CRON_KEYS)})")
        if not isinstance(value, str) or not value:
            raise ImageError(where, f"cron {index}: {key} must be a non-empty string")
    for key in ("every", "command", "agent"):
        if key not in cron:
            raise ImageError(where, f"cron {index}: no {key}")
    m = _EVERY.match(cron["every"])
    if m is None or int(m.group(1)) == 0:
        raise ImageError(where, f"cron {index}: every = {cron['every']!r}: expected a period such as 1s, 5m, 2h, 1d")
    name = cron.get("name", f"cron{index}")
    if not _NAME.match(name) or any(c["name"] == name for c in earlier):
        raise ImageError(where, f"cron {index}: name {name!r} is not a new name of letters, digits, '.', '_', '-'")
    return {"name": name, "every": int(m.group(1)) * _UNITS[m.group(2)], "command": cron["command"],
            "agent": cron["agent"]}


def _drive(manifest: _Manifest, root: Path, name: str, drive: Any, earlier: dict[str, Any],
           state_dir: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """A drive (kfs.runtime.drives): a path of the tree mounted from memory, bounded by
    max_bytes, from a host directory (source, readonly or not), or from the image's Python
    (handler, readonly or not). Its path is absolute and in normal form, nests with no
    other drive's (one path, one backing), and hides none of K's own trees nor a home; a
    host drive shows no system tree of the host, nor the state; the memory drives together
    fit in the host's memory."""
    table = f"drives.{name}"
    _check_table(manifest, table, drive, _DRIVE_KEYS)
    for key in ("path", "kind"):
        if key not in drive:
            raise ImageError(manifest.where(table), f"drive {name!r}: no {key}")
    kind, path = drive["kind"], drive["path"]
    if kind not in KINDS:
        raise ImageError(manifest.where(table, "kind"), f"kind = {kind!r}: expected {', '.join(KINDS)}")
    if not path.startswith("/") or path.startswith("//") or posixpath.normpath(path) != path:
        raise ImageError(manifest.where(table, "path"),
                         f"path {path!r}: expected an absolute path in normal form (no '.', '..', '//' or "
                         "trailing '/')")
    if path == "/":
        raise ImageError(manifest.where(table, "path"), "path '/': a drive is mounted at a path of the tree, "
                                                        "not over all of it")
    top = tree_of(path, RESERVED)
    if top is not None:
        raise ImageError(manifest.where(table, "path"), f"path {path}: K shows its own files under {top}")
    if is_home(path):
        raise ImageError(manifest.where(table, "path"), f"path {path}: a drive there would hide "
                         + ("the agents' homes" if path == "/home" else "a home") + " (a path under a home is fine)")
    for other, seen in earlier.items():
        if under(path, seen["path"]) or under(seen["path"], path):
            why = "is the path of" if path == seen["path"] else f"nests with {seen['path']}, the path of"
            raise ImageError(manifest.where(table, "path"), f"path {path} {why} drive {other!r}")
    out: dict[str, Any] = {"path": path, "kind": kind}
    keys, why = _DRIVE_KIND_KEYS[kind]
    for key in drive:
        if key not in ("path", "kind", *keys):
            raise ImageError(manifest.where(table, key), f"{key} is not for {kind} drives ({why})")
    if kind == "memory":
        if "max_bytes" not in drive:
            raise ImageError(manifest.where(table), f"memory drive {name!r}: no max_bytes (its size, such as \"64M\")")
        try:
            out["max_bytes"] = parse_size(drive["max_bytes"])
        except ValueError:
            raise ImageError(manifest.where(table, "max_bytes"), f"max_bytes = {drive['max_bytes']!r}: expected a "
                                                                 "size such as 64M (bytes, or K, M, G)") from None
        bound = memory_bound()
        total = out["max_bytes"] + sum(d["max_bytes"] for d in earlier.values() if d["kind"] == "memory")
        if total > bound:
            whose = "" if total == out["max_bytes"] else f" (with the memory drives before it, {size_text(total)})"
            raise ImageError(manifest.where(table, "max_bytes"),
                             f"max_bytes = {drive['max_bytes']!r}{whose}: more than this host's memory "
                             f"({size_text(bound)}), which holds every memory drive")
        if "agent_max_bytes" in drive:
            try:
                out["agent_max_bytes"] = share = parse_size(drive["agent_max_bytes"])
            except ValueError:
                raise ImageError(manifest.where(table, "agent_max_bytes"),
                                 f"agent_max_bytes = {drive['agent_max_bytes']!r}: expected a size such as 16M "
                                 "(bytes, or K, M, G)") from None
            if share > out["max_bytes"]:
                raise ImageError(manifest.where(table, "agent_max_bytes"),
                                 f"agent_max_bytes = {drive['agent_max_bytes']!r}: more than the drive's max_bytes "
                                 f"({size_text(out['max_bytes'])})")
        return out
    if kind == "python":
        if "handler" not in drive:
            raise ImageError(manifest.where(table), f"python drive {name!r}: no handler (the image's class that "
                                                    "serves its files, as module:Class)")
        out.update(handler=_handler(manifest, root, table, drive["handler"], "Class"),
                   readonly=drive.get("readonly", False))
        return out
    if "source" not in drive:
        raise ImageError(manifest.where(table), f"host drive {name!r}: no source (the host directory it shows)")
    source = drive["source"]
    if not source.startswith("/"):
        raise ImageError(manifest.where(table, "source"), f"source {source!r}: expected an absolute path of the host")
    if not os.path.isdir(source):
        raise ImageError(manifest.where(table, "source"), f"source {source}: no such directory on this host")
    _host_source(manifest.where(table, "source"), source, state_dir)
    out.update(source=posixpath.normpath(source), readonly=drive.get("readonly", False))
    return out


def _host_source(where: str, source: str, state_dir: str | os.PathLike[str] | None) -> None:
    """Refuse a host drive's source that would hand agents (as their own uids) the whole
    host, one of its system trees, or the state itself; links are followed first."""
    real = os.path.realpath(source)
    shown = source if real == posixpath.normpath(source) else f"{source} (that is, {real})"
    if real == "/":
        raise ImageError(where, f"source {shown}: a host drive may not show the host's whole tree")
    tree = tree_of(real, HOST_SYSTEM)
    if tree is not None:
        raise ImageError(where, f"source {shown}: a host drive may not show the host's system tree {tree}")
    if state_dir is not None:
        state = os.path.realpath(state_dir)
        if under(state, real) or under(real, state):
            raise ImageError(where, f"source {shown}: a host drive may not show the state ({state}), "
                                    "which holds every agent's files")


def _nth(manifest: _Manifest, array: str, index: int) -> str:
    """`file:line` of the index-th `[[array]]` header."""
    seen = 0
    for i, line in enumerate(manifest.lines):
        if re.match(r"\s*\[\[\s*" + re.escape(array) + r"\s*\]\]", line):
            seen += 1
            if seen == index:
                return f"{manifest.path}:{i + 1}"
    return str(manifest.path)


def _handler(manifest: _Manifest, root: Path, table: str, text: str, what: str = "function") -> str:
    m = _HANDLER.match(text)
    if m is None:
        raise ImageError(manifest.where(table, "handler"), f"handler {text!r}: expected module:{what}")
    module = m.group(1)
    if _module_file(root, module) is None:
        raise ImageError(manifest.where(table, "handler"),
                         f"handler {text!r}: no {_module_files(module)[0]} in the image")
    return text


def _module_files(module: str) -> tuple[str, str]:
    base = module.replace(".", "/")
    return f"{base}.py", f"{base}/__init__.py"


def _module_file(root: Path, module: str) -> Path | None:
    """The image's file of `module`, or None; one reached by a link out of the folder is refused."""
    for candidate in _module_files(module):
        if (root / candidate).is_file():
            return _contained(root, root / candidate)
    return None


def _inside(manifest: _Manifest, root: Path, table: str, key: str, rel: str) -> Path:
    """`rel` resolved in the image folder; an absolute path or one leading out is refused."""
    target = (root / rel).resolve()
    if os.path.isabs(rel) or not (target == root or root in target.parents):
        raise ImageError(manifest.where(table, key), f"{rel}: paths stay inside the image folder")
    return _contained(root, root / rel)


def _contained(root: Path, path: Path) -> Path:
    """`path` of the folder (named as it is written there), refused when it resolves out of
    the folder, through a link of its own or of a directory above it: what the image stores
    is read from the folder alone, never from the files of the host a link would reach."""
    target = path.resolve()
    if target != root and root not in target.parents:
        raise ImageError(str(path), f"leads out of the image folder (to {target}): an image's paths, "
                                    "links included, stay inside its folder")
    return target


def _walk(root: Path, folder: Path, keep: Callable[[str], bool] | None = None) -> Iterator[Path]:
    """The files under `folder`, sorted; a link to a directory is not followed (os.walk's way).
    Without `keep`, every one is served (a host's files): such a link is checked by
    `_contained`, since what it shows would be missing; with it, only the directories it
    accepts are walked, and a link not followed is not read."""
    from pathlib import Path

    for dirpath, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if keep is None or keep(d))
        for name in dirs if keep is None else ():
            if os.path.islink(os.path.join(dirpath, name)):
                _contained(root, Path(dirpath) / name)
        for name in sorted(names):
            yield Path(dirpath) / name


def _store_python(root: Path, files: dict[str, bytes]) -> None:
    """Every .py file of the image: handlers import their siblings."""
    for full in _walk(root, root, lambda d: not d.startswith(".") and d != "__pycache__"):
        if full.name.endswith(".py"):
            files[full.relative_to(root).as_posix()] = _contained(root, full).read_bytes()


_CHECK = r"""
import importlib, json, sys, traceback
root, wanted = sys.argv[1], json.loads(sys.argv[2])
sys.path.insert(0, root)
sys.dont_write_bytecode = True
for text in wanted:
    module, _, name = text.partition(":")
    print(json.dumps({"importing": text}), flush=True)
    try:
        mod = importlib.import_module(module)
    except BaseException as e:
        frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename.startswith(root + "/")]
        where = (frames[-1].filename[len(root) + 1:] + ":" + str(frames[-1].lineno)) if frames else ""
        if isinstance(e, SyntaxError) and e.filename and e.filename.startswith(root + "/"):
            where = e.filename[len(root) + 1:] + ":" + str(e.lineno)
        print(json.dumps({"handler": text, "where": where, "error": type(e).__name__ + ": " + str(e)}))
        sys.exit(0)
    if not callable(getattr(mod, name, None)):
        print(json.dumps({"handler": text, "where": "", "error": f"{module} has no function {name}"}))
        sys.exit(0)
print("{}")
"""


def _check_handlers(manifest: _Manifest, root: Path, spec: dict[str, Any]) -> None:
    """Import the image's handlers in a separate Python (bounded in time): one that raises,
    hangs or is missing is reported where it is, before the image is stored."""
    import json
    import subprocess
    import sys

    wanted = {host["handler"]: f"hosts.{name}" for name, host in spec["hosts"].items() if "handler" in host}
    wanted |= {c["handler"]: f"commands.{name}" for name, c in spec["commands"].items() if "handler" in c}
    wanted |= {h["handler"]: h["table"] for h in spec["hooks"]}
    wanted |= {d["handler"]: f"drives.{name}" for name, d in spec["drives"].items() if d["kind"] == "python"}
    if not wanted:
        return
    try:
        done = subprocess.run([sys.executable, "-I", "-c", _CHECK, str(root), json.dumps(list(wanted))],
                              capture_output=True, text=True, timeout=HANDLER_TIMEOUT, cwd=root)
    except subprocess.TimeoutExpired as e:
        partial = (e.stdout.decode() if isinstance(e.stdout, bytes) else e.stdout or "").strip().splitlines()
        hung = json.loads(partial[-1])["importing"] if partial else next(iter(wanted))
        raise ImageError(str(root / _module_files(hung.partition(":")[0])[0]),
                         f"handler {hung!r}: importing it did not finish within {HANDLER_TIMEOUT:g} s") from None
    lines = [line for line in done.stdout.strip().splitlines() if not line.startswith('{"importing"')]
    result = json.loads(lines[-1]) if lines else {"handler": next(iter(wanted)), "where": "",
                                                  "error": done.stderr.strip()[-500:] or "the check failed"}
    if result:
        table = wanted[result["handler"]]
        where = str(root / result["where"]) if result["where"] else (
            _nth(manifest, "hooks", int(table.split(".")[1])) if table.startswith("hooks.")
            else manifest.where(table, "handler"))
        raise ImageError(where, f"handler {result['handler']!r}: {result['error']}")


# -- versions in KState ------------------------------------------------------------------------

def _record_key(version: int) -> bytes:
    return PREFIX + U64.pack(version)


def _summary(record: dict[str, Any]) -> dict[str, Any]:
    return {"version": record["version"], "name": record["spec"]["name"], "source": record["source"]}


def apply(state: KState, image: Image, *, by: str) -> int:
    """Store `image` as a new version and put it in force: one transaction, with its event."""
    import json


    def body(txn: Txn) -> int:
        version = txn.incr(b"next_image")
        record = {"version": version, "spec": image.spec, "source": image.source, "applied": time.time(),
                  "by": by, "files": sorted(image.files), "size": sum(len(v) for v in image.files.values()),
                  "digest": image.digest()}
        txn.put("keys", _record_key(version), json.dumps(record, separators=(",", ":")).encode())
        for rel, data in image.files.items():
            txn.put("keys", FILE_PREFIX + U64.pack(version) + rel.encode(), data)
        previous = txn.get("keys", CURRENT)
        txn.put("keys", CURRENT, U64.pack(version))
        append_event(txn, "image.apply", **_summary(record), by=by,
                     previous=U64.unpack(previous)[0] if previous else None)
        return version

    return state.write(body)


def rollback(state: KState, version: int | None = None, *, by: str) -> int:
    """Put `version` (default: the one applied before the version in force) back in force."""
    import json


    def body(txn: Txn) -> int:
        raw = txn.get("keys", CURRENT)
        current = U64.unpack(raw)[0] if raw else None
        target = version
        if target is None:
            older = [v for v in _versions(txn) if current is None or v < current]
            if not older:
                raise LookupError("no earlier image to roll back to")
            target = older[-1]
        record = txn.get("keys", _record_key(target))
        if record is None:
            raise LookupError(f"no image version {target}")
        txn.put("keys", CURRENT, U64.pack(target))
        append_event(txn, "image.rollback", **_summary(json.loads(record)), by=by, previous=current)
        return target

    return state.write(body)


def _versions(txn: Txn) -> list[int]:
    return [U64.unpack(bytes(k[len(PREFIX):]))[0] for k in txn.scan_keys("keys", PREFIX)]


def versions(state: KState) -> tuple[list[dict[str, Any]], int | None]:
    """Every stored version's record (oldest first) and the version in force (None: none)."""
    import json

    with state.read() as txn:
        raw = txn.get("keys", CURRENT)
        records = [json.loads(txn.get("keys", _record_key(v)) or b"{}") for v in _versions(txn)]
    return records, (U64.unpack(raw)[0] if raw else None)


def current(state: KState) -> dict[str, Any] | None:
    """The record of the image in force, or None (what `komputer sh` asks at every start:
    json is imported only when there is one). Its `state` is the state's uuid: the image's
    code loaded in a process is that state's version (kshell.image.code)."""
    with state.read() as txn:
        raw = txn.get("keys", CURRENT)
        if raw is None:
            return None
        record = txn.get("keys", _record_key(U64.unpack(raw)[0]))
    if record is None:
        return None
    import json

    return {**json.loads(record), "state": state.fs_uuid}


def read_file(state: KState, version: int, rel: str) -> bytes:
    """A file stored with an image version (FileNotFoundError when it has none such)."""
    with state.read() as txn:
        data = txn.get("keys", FILE_PREFIX + U64.pack(version) + rel.encode())
    if data is None:
        raise FileNotFoundError(rel)
    return bytes(data)
