"""What the image in force (kfs.runtime.image) puts in a shell session: its virtual hosts the
agent sees and the real network it may reach (curl, wget, /sys/hosts.md), its commands (tools
of the session), and the handles of the secrets the agent may know of (/sys/secrets.md). The
SSH worker binds it for an agent's session, `komputer sh` for root."""

from __future__ import annotations

from typing import Any

from kfs.kstate import KState
from kfs.runtime import image, secrets
from kshell.image.commands import image_commands
from kshell.image.hosts import image_hosts


def image_network(record: dict[str, Any] | None, agent: str) -> bool | list[str]:
    """The real network the image gives `agent`: its `[agents.NAME] network`, else `[network] allow`."""
    if record is None:
        return False
    spec = record["spec"]
    return spec["agents"].get(agent, {}).get("network", spec["network"]) or False


def bind_image(shell: Any, state: KState, record: dict[str, Any] | None, agent: str,
               network: bool | list[str], extra_hosts: dict[str, Any] | None = None) -> None:
    """Bind the image `record` (None: no image) into `shell` (a kshell.Shell) for `agent`;
    `extra_hosts`: the SDK's own virtual hosts (Komputer.boot(hosts=...)), over the image's."""

    def secret(name: str) -> str:  # for the image's code (never the agent's shell)
        return secrets.reveal(state, name).decode("utf-8", "surrogateescape")

    hosts: dict[str, Any] = {}
    if record is not None:
        version = record["version"]

        def read(rel: str) -> bytes:
            return image.read_file(state, version, rel)

        hosts = image_hosts(record, read, agent, secret)
        shell.interp.session.tools.update(image_commands(record, read, agent, secret))
    shell.bind_hosts({**hosts, **(extra_hosts or {})}, network=network)
    declared = {} if record is None else {n: s for n, s in record["spec"]["secrets"].items()
                                          if s["agents"] is None or agent in s["agents"]}
    stored = {h["name"] for h in secrets.handles(state, agent)}
    if declared or stored:
        shell.interp.session.view_files["secrets.md"] = lambda: secrets_markdown(declared, stored)


def secrets_markdown(declared: dict[str, dict[str, Any]], stored: set[str]) -> bytes:
    """/sys/secrets.md: the handles an agent may know of, never a value."""
    lines = ["# Secrets", "",
             "Handles of the secrets this agent may know of. Their values reach only the image's own",
             "code (its commands, hooks and crons), never this shell or the programs it runs.", ""]
    for name in sorted({*declared, *stored}):
        about = declared.get(name, {}).get("description") or ""
        lines.append(f"- `{name}`" + (f": {about}" if about else "") + ("" if name in stored else " (not set)"))
    return ("\n".join(lines) + "\n").encode()
