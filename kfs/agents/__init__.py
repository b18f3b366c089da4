"""Agents: who may log in to K, with which keys, and the SSH server's durable records.

Agent records, their authorized keys (OpenSSH authorized_keys lines), the host key, agent
sessions with their leases, and the audit events of logins all live in KState, so that the
SSH server never speaks LMDB: it calls this package and the VFS.
"""

from kfs.agents.audit import record_event, record_events
from kfs.agents.authorized import AuthorizedKey, add_key, list_keys, parse_key_line, remove_key
from kfs.agents.hostkey import host_key
from kfs.agents.records import (
    Agent,
    add_agent,
    ensure_agent,
    find_agent,
    find_agent_by_uid,
    list_agents,
    remove_agent,
)
from kfs.agents.sessions import (
    BadSessionName,
    LeaseHeld,
    SessionRecord,
    acquire_session,
    keep_session,
    release_session,
    renew_lease,
    renew_leases,
    resumed_env,
    save_session,
)

__all__ = [
    "Agent",
    "AuthorizedKey",
    "BadSessionName",
    "LeaseHeld",
    "SessionRecord",
    "acquire_session",
    "add_agent",
    "add_key",
    "ensure_agent",
    "find_agent",
    "find_agent_by_uid",
    "host_key",
    "keep_session",
    "list_agents",
    "list_keys",
    "parse_key_line",
    "record_event",
    "record_events",
    "release_session",
    "remove_agent",
    "resumed_env",
    "remove_key",
    "renew_lease",
    "renew_leases",
    "save_session",
]
