"""The image's python drives in a session's worker: the operator's class (kfs.runtime.image
`[drives.NAME] kind = "python"`), loaded from the image's stored files, made once per worker
and mounted (`mount(ctx)`), then served by kfs.drives.python.PythonBacking; `unmount()` is
called when the worker ends (or when a reused worker's next session has another image).

A class that cannot be loaded, made or mounted (it raises, or its mount does not return within
MOUNT_TIMEOUT) leaves the drive mounted over a stand-in that answers every call with EIO, so
`ls /mnt/crm` says "Input/output error" rather than showing an empty directory; the log line
names the file and line that raised, never the exception's message (it may carry a secret).
"""

from __future__ import annotations

import errno
import logging
from collections.abc import Callable
from typing import Any

from kfs.drives.python import Unserved
from kfs.runtime.drives import Drive
from kshell.image.code import HandlerFailed, bounded, loader

MOUNT_TIMEOUT = 30.0  # seconds a drive's mount (connecting, warming caches) or unmount may take
log = logging.getLogger("kshell.drives")


class DriveContext:
    """What a drive's `mount(ctx)` is given: who the session is for, the drive, and secrets."""

    def __init__(self, drive: Drive, agent: str, secret: Callable[[str], str]) -> None:
        self.agent = agent
        self.name = drive.name
        self.path = drive.path
        self.readonly = drive.readonly
        self._secret = secret

    def secret(self, name: str) -> str:
        return self._secret(name)


class PythonDrives:
    """The python drives one worker has mounted, by image version and drive name."""

    def __init__(self) -> None:
        self.version: int | None = None
        self.mounted: dict[str, Any] = {}

    def opener(self, record: dict[str, Any] | None, read: Callable[[str], bytes], agent: str,
               secret: Callable[[str], str]) -> Callable[[Drive], Any]:
        """What kfs.drives.view.mount asks for each python drive of `record` (the image in
        force): its mounted object, made on first use. Objects of another version go first."""
        version = None if record is None else record["version"]
        if version != self.version:
            self.unmount()
            self.version = version

        def obtain(drive: Drive) -> Any:
            found = self.mounted.get(drive.name)
            if found is None:
                assert record is not None
                found = self.mounted[drive.name] = _mounted(drive, record, read, agent, secret)
            return found

        return obtain

    def unmount(self) -> None:
        """Call each mounted object's `unmount()` (bounded; a failure is logged and passed)."""
        mounted, self.mounted = self.mounted, {}
        for name, obj in mounted.items():
            done = getattr(obj, "unmount", None)
            if callable(done):
                try:
                    bounded(f"drive {name} unmount", done, timeout=MOUNT_TIMEOUT)
                except (HandlerFailed, TimeoutError) as e:
                    log.warning("%s", e)


def _mounted(drive: Drive, record: dict[str, Any], read: Callable[[str], bytes], agent: str,
             secret: Callable[[str], str]) -> Any:
    """The drive's object: its class loaded from the image, made, and mounted; the stand-in
    when any of that fails (module docstring)."""
    load = loader(record, read, drive.handler, secret)

    def make() -> Any:
        obj = load()()
        mount = getattr(obj, "mount", None)
        if callable(mount):
            mount(DriveContext(drive, agent, secret))
        return obj

    try:
        return bounded(f"drive {drive.name} ({drive.handler})", make, timeout=MOUNT_TIMEOUT)
    except (HandlerFailed, TimeoutError) as e:
        log.warning("%s", e)
        return Unserved(errno.EIO)

