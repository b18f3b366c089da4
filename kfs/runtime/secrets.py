"""Secrets: values an operator gives the image's trusted code (image commands, hooks, crons)
and never the agent: its shell, its delegated programs, events, receipts and logs see only
handles (names).

A value is stored in KState encrypted (AES-256-GCM, the name bound in as associated data),
with a key kept outside the state directory, so that a copy of the state's files shows no value
in the clear. The key file: $KOMPUTER_SECRET_KEY when set, else
~/.config/komputer/secret-keys/<state uuid>.key (made 0600, in a 0700 folder, on first use).
A backup of the state does not hold it: keep the key file with your other credentials.

Keys (database "keys"): `secret/<name>` -> {"name", "nonce", "value" (ciphertext, base64),
"agents" (who may know of the handle; null: every agent), "set", "by"}.
"""

from __future__ import annotations

import base64
import json
import os
import re
import time
from pathlib import Path
from typing import Any

from kfs.journal import append_event
from kfs.kstate import KState, Txn

PREFIX = b"secret/"
KEY_ENV = "KOMPUTER_SECRET_KEY"
MAX_VALUE = 64 << 10
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}\Z")


class SecretError(ValueError):
    """A refused secret operation (bad name, missing secret, unreadable key)."""


def key_path(state: KState) -> Path:
    """Where the state's secret key is kept (module docstring)."""
    configured = os.environ.get(KEY_ENV)
    if configured:
        return Path(configured)
    return Path.home() / ".config" / "komputer" / "secret-keys" / f"{state.fs_uuid}.key"


def _key(state: KState, *, create: bool) -> bytes:
    path = key_path(state)
    try:
        key = path.read_bytes()
    except FileNotFoundError:
        if not create:
            raise SecretError(f"no secret key at {path} (it is made by the first `secrets set`)") from None
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        key = os.urandom(32)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(key)
    except OSError as e:
        raise SecretError(f"cannot read the secret key {path}: {e.strerror}") from None
    if len(key) != 32:
        raise SecretError(f"{path} is no secret key (32 bytes expected, {len(key)} found)")
    return key


def check_name(name: str) -> str:
    if not _NAME.match(name):
        raise SecretError(f"secret name {name!r}: a letter or '_' first, then letters, digits, '_', '.', '-' "
                          "(up to 64)")
    return name


def put(state: KState, name: str, value: bytes, *, by: str, agents: list[str] | None = None) -> None:
    """Store (or replace) a secret; its `secret.set` event names it, never its value."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    check_name(name)
    if len(value) > MAX_VALUE:
        raise SecretError(f"secret {name}: {len(value)} bytes, more than {MAX_VALUE} allowed")
    nonce = os.urandom(12)
    sealed = AESGCM(_key(state, create=True)).encrypt(nonce, value, name.encode())
    record = {"name": name, "nonce": base64.b64encode(nonce).decode(), "value": base64.b64encode(sealed).decode(),
              "agents": agents or None, "set": time.time(), "by": by}

    def body(txn: Txn) -> None:
        replaced = txn.get("keys", PREFIX + name.encode()) is not None
        txn.put("keys", PREFIX + name.encode(), json.dumps(record, separators=(",", ":")).encode())
        append_event(txn, "secret.set", secret=name, by=by, replaced=replaced, agents=agents or None)

    state.write(body)


def remove(state: KState, name: str, *, by: str) -> None:
    def body(txn: Txn) -> None:
        if not txn.delete("keys", PREFIX + name.encode()):
            raise SecretError(f"no secret {name}")
        append_event(txn, "secret.remove", secret=name, by=by)

    state.write(body)


def handles(state: KState, agent: str | None = None) -> list[dict[str, Any]]:
    """The secrets' names (and who may know of them, when they were set), never their values;
    with `agent`, only those that agent may know of."""
    with state.read() as txn:
        records = [json.loads(v) for _, v in txn.scan("keys", PREFIX)]
    return [{k: r[k] for k in ("name", "agents", "set", "by")} for r in records
            if agent is None or r["agents"] is None or agent in r["agents"]]


def reveal(state: KState, name: str) -> bytes:
    """A secret's value: for the image's trusted code only (never the agent's shell)."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    with state.read() as txn:
        raw = txn.get("keys", PREFIX + name.encode())
    if raw is None:
        raise SecretError(f"no secret {name}")
    record = json.loads(raw)
    try:
        return AESGCM(_key(state, create=False)).decrypt(base64.b64decode(record["nonce"]),
                                                         base64.b64decode(record["value"]), name.encode())
    except InvalidTag:
        raise SecretError(f"secret {name}: the key at {key_path(state)} does not open it") from None
