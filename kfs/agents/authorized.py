"""Authorized keys: OpenSSH `authorized_keys` lines stored per agent in KState.

A line is validated when added (the key parses, every option is one K honours) and stored
verbatim under `authorized/NAME/<seq>` in the "keys" database. The SSH server loads an agent's
lines at the start of authentication and lets asyncssh enforce them (`from=`, `principals=`,
`cert-authority`, `command=`, `no-pty`); `environment="K_MODE=readonly"` is the one environment
option, the key's restricted mode (a floor its sessions cannot lower). Public keys are not
secrets; nothing here holds one.
"""

from __future__ import annotations

import errno
import json
import time
from dataclasses import dataclass

import asyncssh

from kfs.accounts import agent_record, authorized_prefix
from kfs.agents.records import find_agent_in
from kfs.journal import append_event
from kfs.kstate import KState, Txn
from kfs.kstate.schema import U64
from kfs.vfs.policy import MODES

# Options that mean something for K. Port, agent and X11 forwarding are never offered, so the
# no-* forms of them are accepted as no-ops; anything else is refused rather than ignored.
SUPPORTED_OPTIONS = frozenset(
    {
        "from",
        "command",
        "no-pty",
        "cert-authority",
        "principals",
        "no-port-forwarding",
        "no-agent-forwarding",
        "no-x11-forwarding",
        "no-user-rc",
        "environment",  # only environment="K_MODE=...": the key's restricted mode (kfs.vfs.policy)
    }
)


@dataclass(frozen=True, slots=True)
class AuthorizedKey:
    """One stored line, with what `keys list` shows about it."""

    seq: int
    line: str
    key_type: str
    fingerprint: str  # SHA256:... of the key (the CA's key for cert-authority lines)
    options: str
    comment: str
    added: int


def _split_unquoted(text: str, sep: str, maxsplit: int = -1) -> list[str]:
    """Split on `sep` outside double quotes (authorized_keys quoting; \\" escapes a quote)."""
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and quoted and i + 1 < len(text):
            current.append(text[i : i + 2])
            i += 2
            continue
        if ch == '"':
            quoted = not quoted
        if not quoted and (ch == sep or (sep == " " and ch == "\t")) and maxsplit != 0:
            if current or sep != " ":
                parts.append("".join(current))
                current = []
                maxsplit -= 1
            i += 1
            continue
        current.append(ch)
        i += 1
    if quoted:
        raise ValueError("unterminated quoted string in key options")
    parts.append("".join(current))
    return parts


def _looks_like_key_type(token: str) -> bool:
    return token.startswith(("ssh-", "ecdsa-", "sk-", "rsa-")) or token.endswith("@openssh.com")


def parse_key_line(line: str) -> tuple[str, str, str, str, str]:
    """Validate one authorized_keys line; returns (options, key type, base64, comment, fingerprint).

    Raises ValueError with the reason when the line is not one K accepts.
    """
    line = line.strip()
    if not line or line.startswith("#"):
        raise ValueError("empty line or comment: no key")
    fields = _split_unquoted(line, " ", 1)
    options = ""
    if not _looks_like_key_type(fields[0]):
        options = fields[0]
        if len(fields) < 2:
            raise ValueError("no key after the options")
        rest = fields[1].strip()
    else:
        rest = line
    parts = rest.split(None, 2)
    if len(parts) < 2:
        raise ValueError("expected 'TYPE BASE64 [COMMENT]' after the options")
    key_type, b64 = parts[0], parts[1]
    comment = parts[2] if len(parts) > 2 else ""
    names = set()
    for opt in _split_unquoted(options, ",") if options else []:
        name = opt.split("=", 1)[0].lower()
        if name not in SUPPORTED_OPTIONS:
            raise ValueError(
                f"option {name!r} is not supported by K (supported: {', '.join(sorted(SUPPORTED_OPTIONS))})"
            )
        if name == "environment":
            value = opt.split("=", 1)[1].strip('"') if "=" in opt else ""
            var, _, mode = value.partition("=")
            if var != "K_MODE" or mode not in MODES:
                raise ValueError(f"option 'environment' sets only K_MODE here ({'|'.join(MODES)}), not {value!r}")
        names.add(name)
    if "principals" in names and "cert-authority" not in names:
        raise ValueError("option 'principals' only applies to cert-authority lines")
    try:
        key = asyncssh.import_public_key(f"{key_type} {b64}")
        asyncssh.import_authorized_keys(line)
    except (asyncssh.KeyImportError, ValueError) as e:
        raise ValueError(f"not a valid OpenSSH public key line: {e}") from None
    if key_type.endswith("-cert-v01@openssh.com"):
        raise ValueError("a certificate is not an authorized key: add its CA with cert-authority")
    return options, key_type, b64, comment, key.get_fingerprint("sha256")


def _decode(key: bytes, value: bytes) -> AuthorizedKey:
    record = json.loads(value)
    return AuthorizedKey(U64.unpack(key[-8:])[0], **record)


def _require_agent(txn: Txn, name: str) -> None:
    if find_agent_in(txn, name) is None:
        raise LookupError(f"no agent named {name} (create it with `komputer agent add {name}`)")


def add_key(state: KState, name: str, line: str) -> AuthorizedKey:
    """Add one authorized_keys line to agent `name`; EEXIST if the same line is there already."""
    options, key_type, _b64, comment, fingerprint = parse_key_line(line)
    line = line.strip()

    def body(txn: Txn) -> AuthorizedKey:
        _require_agent(txn, name)
        last = 0
        for key, value in txn.scan("keys", authorized_prefix(name)):
            existing = _decode(key, value)
            if existing.line == line:
                raise FileExistsError(errno.EEXIST, f"{name} already has this key ({fingerprint})")
            last = existing.seq
        record = {
            "line": line, "key_type": key_type, "fingerprint": fingerprint,
            "options": options, "comment": comment, "added": time.time_ns(),
        }
        raw = json.dumps(record, separators=(",", ":")).encode()
        txn.put("keys", authorized_prefix(name) + U64.pack(last + 1), raw)
        append_event(txn, "keys.add", agent=name, fingerprint=fingerprint, key_type=key_type, options=options)
        return AuthorizedKey(last + 1, **record)

    return state.write(body)


def list_keys(state: KState, name: str) -> list[AuthorizedKey]:
    """The agent's authorized keys in the order they were added (LookupError: no such agent)."""
    with state.read() as txn:
        _require_agent(txn, name)
        return [_decode(k, v) for k, v in txn.scan("keys", authorized_prefix(name))]


def authorized_lines(state: KState, name: str) -> list[str]:
    """The stored lines of an agent, [] for an unknown agent (the server's view)."""
    with state.read() as txn:
        if agent_record(txn, name) is None:
            return []
        return [json.loads(v)["line"] for _, v in txn.scan("keys", authorized_prefix(name))]


def remove_key(state: KState, name: str, which: str) -> list[AuthorizedKey]:
    """Remove the keys matching `which`: a fingerprint (SHA256:...), a list index (1, 2, ...)
    or a comment. Returns what was removed; LookupError when nothing matches."""

    def body(txn: Txn) -> list[AuthorizedKey]:
        _require_agent(txn, name)
        entries = [(k, _decode(k, v)) for k, v in txn.scan("keys", authorized_prefix(name))]
        if which.isdigit():
            index = int(which)
            chosen = [entries[index - 1]] if 1 <= index <= len(entries) else []
        else:
            chosen = [(k, e) for k, e in entries if which in (e.fingerprint, e.comment)]
        if not chosen:
            raise LookupError(f"{name} has no key matching {which!r}")
        for key, entry in chosen:
            txn.delete("keys", key)
            append_event(txn, "keys.remove", agent=name, fingerprint=entry.fingerprint)
        return [e for _, e in chosen]

    return state.write(body)
