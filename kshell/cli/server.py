"""`komputer serve` (the SSH server alone, for systemd) and `komputer up` (everything, for a
newcomer): both run until SIGINT or SIGTERM and then stop cleanly.

kshell.server (and so asyncio and asyncssh) is imported only when one of them runs."""

from __future__ import annotations

import argparse
import os
import pwd
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from kshell.cli import PROG, AddCommand, state_path
from kshell.delegate.mounts import start_admin_mount, stop_admin_mount

if TYPE_CHECKING:
    from kshell.server.app import KServer
    from kshell.server.computers import ComputerHost
    from kshell.server.config import ServerConfig

UP_AGENT = "agent"


def load_server_config(state_dir: Path, path: str | None) -> ServerConfig:
    from kshell.server.config import load_config

    if path is not None and not Path(path).exists():
        raise FileNotFoundError(2, "No such file or directory", path)
    return load_config(Path(path) if path else state_dir / "komputer.toml")


def _notify_systemd(message: str) -> None:
    """sd_notify for Type=notify units (a no-op outside systemd)."""
    import socket

    addr = os.environ.get("NOTIFY_SOCKET")
    if not addr:
        return
    if addr.startswith("@"):
        addr = "\0" + addr[1:]
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
        s.connect(addr)
        s.sendall(message.encode())


def _raise_open_files() -> None:
    """Every connection holds a socket and every busy session a worker socket and pidfd:
    the soft limit of 1024 that systemd and shells start with would cap a server at a few
    hundred sessions, so take the hard limit."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        hard = 1 << 20
    if soft != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def cmd_serve(args: argparse.Namespace) -> int:
    import asyncio

    from kfs.kstate import KState
    from kshell.server.app import serve_until_stopped

    state_dir = state_path(args)
    config = load_server_config(state_dir, args.config)
    if args.computers:
        config = replace(config, computers=replace(config.computers, root=args.computers))

    def ready(server: KServer | ComputerHost, addrs: list[tuple[str, int]]) -> None:
        for host, port in addrs:
            print(f"{PROG} serve: listening on {host}:{port} (host key {server.fingerprint})", flush=True)
        _notify_systemd("READY=1")

    _raise_open_files()
    if config.computers.root:  # many computers by key: ssh AGENT+KEY@host (kshell.server.computers)
        from kshell.server.computers import serve_computers_until_stopped

        asyncio.run(serve_computers_until_stopped(config, args.listen, ready=ready))
        print(f"{PROG} serve: stopped", flush=True)
        return 0
    with KState(state_dir, create=True) as state:
        asyncio.run(serve_until_stopped(state, args.listen, config, ready=ready))
    print(f"{PROG} serve: stopped", flush=True)
    return 0


def _invoking_user() -> pwd.struct_passwd:
    """The person who ran the command (through sudo too)."""
    name = os.environ.get("SUDO_USER")
    if name:
        try:
            return pwd.getpwnam(name)
        except KeyError:
            pass
    return pwd.getpwuid(os.getuid())


def _client_key(state_dir: Path) -> tuple[Path, bool]:
    """The public key `agent` logs in with: ~/.ssh/id_ed25519.pub, else a pair made for K."""
    user = _invoking_user()
    own = Path(user.pw_dir) / ".ssh" / "id_ed25519.pub"
    if own.exists():
        return own, False
    private = state_dir / "client" / "id_ed25519"
    if not private.exists():
        import asyncssh

        private.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        key = asyncssh.generate_private_key("ssh-ed25519", comment=f"{user.pw_name}@komputer")
        key.write_private_key(str(private))
        key.write_public_key(str(private) + ".pub")
        os.chmod(private, 0o600)
        if os.getuid() == 0 and user.pw_uid != 0:
            for p in (private.parent, private, Path(str(private) + ".pub")):
                os.chown(p, user.pw_uid, user.pw_gid)
    return Path(str(private) + ".pub"), True


def _default_mountpoint() -> Path:
    return Path("/mnt/komputer") if os.geteuid() == 0 else Path.home() / "komputer"


def cmd_up(args: argparse.Namespace) -> int:
    import asyncio

    from kfs.agents import add_key, ensure_agent, list_keys
    from kfs.agents.authorized import parse_key_line
    from kfs.kstate import KState
    from kfs.vfs import VFS
    from kshell.server.app import serve_until_stopped

    state_dir = state_path(args)
    config = load_server_config(state_dir, args.config)
    pub, generated = _client_key(state_dir)
    with KState(state_dir, create=True) as state:
        agent, created = ensure_agent(VFS(state, by=f"cli:{os.getuid()}"), UP_AGENT)
        line = pub.read_text().strip().splitlines()[0]
        fingerprint = parse_key_line(line)[4]
        if fingerprint not in {k.fingerprint for k in list_keys(state, UP_AGENT)}:
            add_key(state, UP_AGENT, line)
    print(f"{PROG} up: state {state_dir}; agent '{agent.name}' (uid {agent.uid}) {'created' if created else 'exists'}")
    if args.image is not None:
        from kshell.cli.image import apply_folder

        with KState(state_dir, create=True) as state:
            if apply_folder(state, args.image, "up", unless_current=True):
                return 1
    private = str(pub)[: -len(".pub")]
    if generated:
        print(f"{PROG} up: generated a key pair for you: {private} (public {pub})")

    mount_proc = None
    mnt = Path(args.mountpoint) if args.mountpoint else _default_mountpoint()
    if args.no_mount:
        print(f"{PROG} up: FUSE mount skipped (--no-mount)")
    else:
        mount_proc, why = start_admin_mount(state_dir, mnt)
        if mount_proc is None:
            print(f"{PROG} up: FUSE mount not available: {why}")
        else:
            print(f"{PROG} up: FUSE view of the state mounted at {mnt} (agent home: {mnt}/home/{agent.name})")

    def ready(server: KServer, addrs: list[tuple[str, int]]) -> None:
        host, port = addrs[0]
        identity = f"-i {private} " if generated else ""
        opts = f"-p {port} {identity}-o StrictHostKeyChecking=accept-new"
        print(f"{PROG} up: SSH on {host}:{port}, host key {server.fingerprint}")
        print(f"  ssh {opts} {agent.name}@{host}")
        sshfs_identity = f"-o IdentityFile={private} " if generated else ""
        print(f"  sshfs -p {port} {sshfs_identity}-o StrictHostKeyChecking=accept-new "
              f"{agent.name}@{host}: /path/to/mountpoint")
        print(f"{PROG} up: running; Ctrl-C or SIGTERM stops everything", flush=True)

    _raise_open_files()
    try:
        with KState(state_dir, create=True) as state:
            asyncio.run(serve_until_stopped(state, args.listen, config, ready=ready))
    finally:
        if mount_proc is not None:
            stop_admin_mount(mount_proc)
            print(f"{PROG} up: unmounted {mnt}")
    print(f"{PROG} up: stopped", flush=True)
    return 0


def add_commands(add: AddCommand, common: argparse.ArgumentParser) -> None:
    p = add("serve", cmd_serve, "serve the K shell, SFTP and scp over SSH until SIGINT/SIGTERM")
    p.add_argument("--listen", default="127.0.0.1:2222", metavar="HOST:PORT",
        help="address to listen on (default 127.0.0.1:2222; port 0 picks one)")
    p.add_argument("--config", metavar="FILE",
        help="komputer.toml with an [ssh] section (default: STATE/komputer.toml if present)")
    p.add_argument("--computers", metavar="ROOT",
        help="serve the computers under ROOT by key, ssh AGENT+KEY@host (as [computers] root)")
    p = add("up", cmd_up,
            "start K for a newcomer: state, agent 'agent' with your key, FUSE mount, SSH on 127.0.0.1:2222")
    p.add_argument("--listen", default="127.0.0.1:2222", metavar="HOST:PORT")
    p.add_argument("--config", metavar="FILE")
    p.add_argument("--mountpoint", metavar="DIR",
        help="where to mount the FUSE view (default /mnt/komputer for root, ~/komputer otherwise)")
    p.add_argument("--no-mount", action="store_true", help="do not mount the FUSE view")
    p.add_argument("--image", metavar="FOLDER",
                   help="boot with the image in FOLDER (applied when it differs from the image in force)")
