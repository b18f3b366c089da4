"""The SSH host key: ed25519, generated once per state and kept in the "secrets" database.

The private key never leaves this module except to the server that signs with it: no event,
receipt or log line carries it (the `hostkey.create` event names only the fingerprint).
"""

from __future__ import annotations

import asyncssh

from kfs.journal import append_event
from kfs.kstate import KState, Txn

HOST_KEY = b"ssh_host_ed25519_key"


def host_key(state: KState) -> asyncssh.SSHKey:
    """The state's host key, generating and storing it on first use (stable across restarts)."""
    with state.read() as txn:
        raw = txn.get("secrets", HOST_KEY)
    if raw is None:
        fresh = asyncssh.generate_private_key("ssh-ed25519", comment="komputer host key")
        pem = fresh.export_private_key("openssh")
        fingerprint = fresh.get_fingerprint("sha256")

        def body(txn: Txn) -> bytes:
            if txn.insert("secrets", HOST_KEY, pem):
                append_event(txn, "hostkey.create", key_type="ssh-ed25519", fingerprint=fingerprint)
                return pem
            stored = txn.get("secrets", HOST_KEY)
            assert stored is not None
            return stored

        raw = state.write(body)
    return asyncssh.import_private_key(raw)
