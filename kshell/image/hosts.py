"""The virtual hosts of the image in force (kfs.runtime.image), as a session's HostTable serves
them: static files, JSON values, texts and redirects by path, and a Python handler for the
rest. Handlers are the image's own Python, loaded from the files stored with its version (the
folder it was applied from may be gone: kshell.image.code).
"""

from __future__ import annotations

import mimetypes
from collections.abc import Callable
from typing import Any

from kshell.image.code import HandlerFailed, bounded, loader
from kshell.tools.net.hosts import FetchError, Request, Response

HANDLER_TIMEOUT = 30.0  # seconds a handler may take when curl sets no --max-time


class ImageHost:
    """One virtual host of the image: a callable HostTable serves every path with."""

    def __init__(self, name: str, spec: dict[str, Any], read: Callable[[str], bytes],
                 handler: Callable[[], Callable[[Request], Any]] | None) -> None:
        self.name = name
        self.routes: dict[str, dict[str, Any]] = spec["routes"]
        self.read = read
        self.handler_name: str | None = spec.get("handler")
        self._load = handler
        self._handler: Callable[[Request], Any] | None = None

    def paths(self) -> list[str]:
        """What /sys/hosts.md lists for the host."""
        return sorted(self.routes) + (["any other path (handler)"] if self.handler_name else [])

    def __call__(self, req: Request) -> Any:
        route = self.routes.get(req.path.split("?", 1)[0] or "/")
        if route is not None:
            if "file" in route:
                kind = mimetypes.guess_type(route["file"])[0] or "application/octet-stream"
                if kind.startswith("text/") or kind == "application/json":
                    kind += "; charset=utf-8"
                return Response(200, {"Content-Type": kind}, self.read(route["file"]))
            if "json" in route:
                return route["json"]
            if "text" in route:
                return route["text"]
            return Response(301, {"Location": route["redirect"]}, "")
        if self._load is None:
            return Response(404, {}, "Not Found\n")
        if self._handler is None:
            self._handler = self._load()
        return _call(self.name, self.handler_name or "", self._handler, req)


def _call(host: str, name: str, handler: Callable[[Request], Any], req: Request) -> Any:
    """Run a handler, bounded in time; an exception is a 500 naming where it was raised."""
    timeout = req.timeout or HANDLER_TIMEOUT
    try:
        return bounded(f"the handler {name} of {host}", handler, req, timeout=timeout)
    except HandlerFailed as e:
        return Response(500, {}, f"{host}: {e}\n")
    except TimeoutError:
        raise FetchError(28, f"Operation timed out: the handler of {host} did not answer within {timeout:g} s") from None


def image_hosts(record: dict[str, Any], read: Callable[[str], bytes], agent: str,
                secret: Callable[[str], str]) -> dict[str, ImageHost]:
    """The image's hosts `agent` sees (its `[agents.NAME] hosts`, else all); their handlers
    may read secrets with `secret(name)`."""
    spec = record["spec"]
    visible = spec["agents"].get(agent, {}).get("hosts")
    out: dict[str, ImageHost] = {}
    for name, host in spec["hosts"].items():
        if visible is not None and name not in visible:
            continue
        load = None
        if "handler" in host:
            load = loader(record, read, host["handler"], secret)
        out[name] = ImageHost(name, host, read, load)
    return out
