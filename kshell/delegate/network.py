"""The network of a sandbox whose agent has one (`--network on`): the outside, and only it.

The sandbox keeps a network namespace of its own; slirp4netns, run by the worker (root) and
attached to that namespace from outside, gives it a tap device with an address, a default route
and user-mode NAT: the program's connections leave as the server's own sockets. What it must not
reach is the appliance itself: slirp's gateway to the host's loopback is off
(`--disable-host-loopback`), and each of the host's own addresses is a `prohibit` route inside
the namespace (the program has no capability to change routes), so K's SSH port and the host's
other local services stay out of reach, on 127.0.0.1 and on the host's other addresses alike.
slirp's DNS alias is off too (it forwards any port to the host's resolver, which may be on the
host's loopback): names resolve with the host's /etc/resolv.conf, so a host whose only resolver
is on its loopback gives programs no names.

bwrap makes the namespace (and its loopback) and waits on `--block-fd` before it runs the
program; the namespace is wired meanwhile, so the program's first connection already has it.
slirp4netns ends when the sandbox's side of its exit pipe closes.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from shutil import which

from kshell.delegate.mounts import Unavailable

TAP = "tap0"
ADDRESS = "10.0.2.100/24"  # slirp4netns's defaults: 10.0.2.2 the gateway, 10.0.2.3 its DNS
GATEWAY = "10.0.2.2"
MTU = 65520
FIB_TRIE = "/proc/net/fib_trie"


def host_addresses(fib_trie: str = FIB_TRIE) -> list[str]:
    """The host's own IPv4 addresses but loopback's (the local /32 entries of its routing
    table): a connection from the sandbox to one would reach the host's local services."""
    found: list[str] = []
    last = ""
    try:
        with open(fib_trie) as f:
            lines = f.read().splitlines()
    except OSError:
        return found
    for line in lines:
        text = line.strip()
        if text.startswith(("|--", "+--")):
            last = text[3:].strip().split()[0]
        elif text == "/32 host LOCAL" and last and not last.startswith("127.") and last not in found:
            found.append(last)
    return found


def slirp_argv(slirp: str, netns: str, *, exit_fd: int, ready_fd: int) -> list[str]:
    """slirp4netns for the namespace at path `netns`, with neither of its ways to the host:
    the gateway's alias of the host's loopback (`--disable-host-loopback`) nor its DNS alias
    10.0.2.3, which reaches whatever port it is asked on at the host's first nameserver, its
    own loopback on a host with a local resolver (`--disable-dns`)."""
    return [slirp, "--disable-host-loopback", "--disable-dns", f"--mtu={MTU}", "--exit-fd", str(exit_fd),
            "--ready-fd", str(ready_fd), "--netns-type=path", netns, TAP]


class Outside:
    """slirp4netns serving the network namespace of process `pid` (bwrap's child), the
    namespace's tap device configured; `close` ends it."""

    def __init__(self, pid: int) -> None:
        slirp = which("slirp4netns", path="/usr/bin:/bin:/usr/sbin:/sbin")
        ip = which("ip", path="/usr/bin:/bin:/usr/sbin:/sbin")
        nsenter = which("nsenter", path="/usr/bin:/bin:/usr/sbin:/sbin")
        if slirp is None or ip is None or nsenter is None:
            raise Unavailable("a networked sandbox needs slirp4netns, iproute2 and util-linux "
                              "(apt-get install slirp4netns iproute2 util-linux), or --network off")
        netns = f"/proc/{pid}/ns/net"
        exit_r, self.exit_w = os.pipe()
        ready_r, ready_w = os.pipe()
        try:
            # slirp4netns only makes the tap device: bringing up the namespace's loopback (its
            # --configure does) would race bwrap's own set-up of it
            self.proc = subprocess.Popen(
                slirp_argv(slirp, netns, exit_fd=exit_r, ready_fd=ready_w),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                pass_fds=(exit_r, ready_w), start_new_session=True)
        finally:
            os.close(exit_r)
            os.close(ready_w)
        try:
            with os.fdopen(ready_r, "rb") as ready:
                if ready.read(1) != b"1":
                    raise Unavailable(f"slirp4netns could not serve the sandbox's network "
                                      f"(exit status {self.proc.wait(10)})")
            script = [f"link set {TAP} mtu {MTU} up", f"addr add {ADDRESS} dev {TAP}",
                      f"route add default via {GATEWAY} dev {TAP}",
                      *(f"route add prohibit {address}/32" for address in host_addresses())]
            done = subprocess.run([nsenter, f"--net={netns}", ip, "-batch", "-"], input="\n".join(script) + "\n",
                                  capture_output=True, text=True, timeout=30)
            if done.returncode != 0:
                raise Unavailable(f"cannot configure the sandbox's network: {done.stderr.strip()}")
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """End slirp4netns. The sandbox is gone, so nothing is left to forward: it is killed
        rather than left to notice its closed exit pipe (the pipe still ends it if the worker
        itself dies), and reaped by a thread of its own: its exit takes the kernel tens of ms
        (the tap device goes with it), which the command need not wait for."""
        if self.exit_w >= 0:
            os.close(self.exit_w)
            self.exit_w = -1
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()
        threading.Thread(target=self.proc.wait, name="k-slirp-reap", daemon=True).start()
