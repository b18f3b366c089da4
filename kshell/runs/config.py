"""A run's configuration, `kgent.yaml`: read, checked and resolved (every default filled in), so
that the copy a run keeps (`config.yaml`) says everything the run obeyed, and its fingerprint
(sha256 of the canonical resolved form) changes exactly when what the run obeys does.

YAML, because that is what teams keep their agent profiles in: PyYAML reads it (a dependency
in pyproject.toml since runs came; its C parser when built with libyaml). A mistake is a
`ConfigError` naming the file and the line, raised before anything of the run is made.

    profile: coder              # the profile's id (run.json's profile_id)
    agent: kgent                # the agent whose K tree holds the run (--agent overrides)
    model: local                # one of the image's [models.NAME], or a table of the same keys:
    #   {protocol: openai-compatible, model: llama, base_url: http://127.0.0.1:8080/v1, key: SECRET}
    system: |                   # the system prompt (the run's guard lines are added to it)
      You are a careful engineer.
    deliverables: [report.md]   # required under deliverables/ when the run ends (else review_required)
    delete: false               # may the agent delete files in its sandbox (off by default)
    manifest: {max_files: 20000, max_hash_bytes: 67108864}   # how far a manifest scan goes
    programs: local             # real programs (python3, ...) under the local sandbox; none: K's tools only
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["DEFAULTS", "ConfigError", "fingerprint", "load_config", "resolve_config"]

DEFAULTS: dict[str, Any] = {
    "profile": "default",
    "agent": "kgent",
    "model": None,
    "system": "",
    "deliverables": [],
    "delete": False,
    "manifest": {"max_files": 20_000, "max_hash_bytes": 64 << 20},
    "programs": "local",
}
PROTOCOLS = ("anthropic", "deepseek-anthropic", "openai-chat", "openai-responses", "deepseek", "minimax",
             "openai-compatible")
MODEL_KEYS = {"protocol", "model", "base_url", "key", "settings"}
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")


class ConfigError(ValueError):
    """A configuration K will not run: `where` is FILE:LINE (or FILE), the message says why."""

    def __init__(self, where: str, why: str) -> None:
        super().__init__(f"{where}: {why}")
        self.where = where
        self.why = why


@dataclass(frozen=True, slots=True)
class _Source:
    """Where the configuration came from, to name lines in errors."""

    name: str
    lines: dict[tuple[str, ...], int]  # a key's path -> its 1-based line

    def at(self, *path: str) -> str:
        for n in range(len(path), 0, -1):
            if path[:n] in self.lines:
                return f"{self.name}:{self.lines[path[:n]]}"
        return self.name


def load_config(path: str, text: str | None = None) -> dict[str, Any]:
    """The resolved configuration of the YAML file `path` (its `text` when given)."""
    import yaml

    if text is None:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except FileNotFoundError:
            raise ConfigError(path, "No such file or directory") from None
        except (OSError, UnicodeDecodeError) as e:
            raise ConfigError(path, str(getattr(e, "strerror", None) or e)) from None
    try:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser where PyYAML has it
        node = yaml.compose(text, Loader=loader)
        raw = yaml.load(text, Loader=loader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        why = " ".join(str(p) for p in (getattr(e, "problem", None), getattr(e, "context", None)) if p) or str(e)
        raise ConfigError(f"{path}{line}", f"not valid YAML: {why}") from None
    lines: dict[tuple[str, ...], int] = {}
    _lines(node, (), lines)
    return resolve_config({} if raw is None else raw, _Source(path, lines))


def _lines(node: Any, at: tuple[str, ...], into: dict[tuple[str, ...], int]) -> None:
    import yaml

    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            path = (*at, str(key.value))
            into[path] = key.start_mark.line + 1
            _lines(value, path, into)


def resolve_config(raw: Any, source: _Source | str = "<config>") -> dict[str, Any]:
    """`raw` (a mapping, as YAML gives it) checked, with every default filled in."""
    src = source if isinstance(source, _Source) else _Source(source, {})
    if not isinstance(raw, dict):
        raise ConfigError(src.at(), f"expected a mapping of settings, not {type(raw).__name__}")
    unknown = sorted(set(raw) - set(DEFAULTS))
    if unknown:
        raise ConfigError(src.at(str(unknown[0])), f"unknown setting {unknown[0]!r} "
                                                   f"(known: {', '.join(DEFAULTS)})")
    config = {**DEFAULTS, **raw}
    for key in ("profile", "agent"):
        if not isinstance(config[key], str) or not _NAME.match(config[key]):
            raise ConfigError(src.at(key), f"{key}: expected a name of letters, digits, '.', '_' and '-'")
    if not isinstance(config["system"], str):
        raise ConfigError(src.at("system"), "system: expected text")
    if config["programs"] not in ("local", "none"):
        raise ConfigError(src.at("programs"), "programs: expected local or none")
    if not isinstance(config["delete"], bool):
        raise ConfigError(src.at("delete"), "delete: expected true or false")
    config["model"] = _model(config["model"], src)
    config["deliverables"] = _deliverables(config["deliverables"], src)
    manifest = config["manifest"]
    if not isinstance(manifest, dict) or set(manifest) - set(DEFAULTS["manifest"]):
        raise ConfigError(src.at("manifest"), f"manifest: expected a mapping of {', '.join(DEFAULTS['manifest'])}")
    manifest = {**DEFAULTS["manifest"], **manifest}
    for key, value in manifest.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ConfigError(src.at("manifest", key), f"manifest.{key}: expected a whole number >= 0")
    config["manifest"] = manifest
    return config


def _model(model: Any, src: _Source) -> Any:
    if model is None or (isinstance(model, str) and _NAME.match(model)):
        return model
    if not isinstance(model, dict):
        raise ConfigError(src.at("model"), "model: expected the name of one of the image's models, or a table "
                                           "(protocol, model, base_url, key, settings)")
    unknown = sorted(set(model) - MODEL_KEYS)
    if unknown:
        raise ConfigError(src.at("model", unknown[0]), f"model.{unknown[0]}: unknown (known: "
                                                        f"{', '.join(sorted(MODEL_KEYS))})")
    if model.get("protocol") not in PROTOCOLS:
        raise ConfigError(src.at("model", "protocol"), f"model.protocol: expected one of {', '.join(PROTOCOLS)}")
    if not isinstance(model.get("model"), str) or not model["model"]:
        raise ConfigError(src.at("model", "model"), "model.model: expected the provider's model name")
    if model["protocol"] == "openai-compatible" and not model.get("base_url"):
        raise ConfigError(src.at("model"), "model.base_url: an openai-compatible model needs one")
    if "settings" in model and not isinstance(model["settings"], dict):
        raise ConfigError(src.at("model", "settings"), "model.settings: expected a mapping")
    return {k: model[k] for k in sorted(model)}


def _deliverables(items: Any, src: _Source) -> list[str]:
    if not isinstance(items, list) or not all(isinstance(i, str) and i for i in items):
        raise ConfigError(src.at("deliverables"), "deliverables: expected a list of paths under deliverables/")
    out = []
    for item in items:
        normal = posixpath.normpath(item)
        if normal.startswith(("/", "../")) or normal in ("..", "."):
            raise ConfigError(src.at("deliverables"), f"deliverables: {item}: not a path under deliverables/")
        out.append(normal)
    return out


def canonical(config: dict[str, Any]) -> bytes:
    """The resolved configuration's canonical bytes: sorted keys, no spaces, UTF-8."""
    return json.dumps(config, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def fingerprint(config: dict[str, Any]) -> str:
    """sha256 of the canonical resolved configuration: equal exactly when what a run obeys is."""
    return "sha256:" + hashlib.sha256(canonical(config)).hexdigest()
