"""The K SSH server: asyncssh presenting the K shell, SFTP and scp on the VFS.

Split as asyncssh is: `auth` (who gets in, and the connection limits), `session` (exec and
the PTY shell), `sftp` (the file subsystem), `api` (the `komputer-api` subsystem the SDK's
remote sessions use: an agent's own events, forks and counters); `app` ties them to one KState; `workers` runs
each session's shell in a worker process (`kshell.worker`) and relays its bytes. Nothing here
speaks LMDB: records come from `kfs.agents`, files from `kfs.vfs`.
"""

from kshell.server.app import KServer, parse_listen, serve, serve_until_stopped
from kshell.server.config import ServerConfig, load_config

__all__ = ["KServer", "ServerConfig", "load_config", "parse_listen", "serve", "serve_until_stopped"]
