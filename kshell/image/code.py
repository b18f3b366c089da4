"""The image's Python (kfs.runtime.image), loaded from the files stored with its version (the
folder it was applied from may be gone): the handlers of hosts, commands and hooks. `import
util` in handlers.py finds the image's util.py, after the standard library and K's own modules.
Every image module has `secret`: `secret("NAME")` is a secret's value (kfs.runtime.secrets),
for the image's code alone.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any

from kfs.runtime.bounded import Overran
from kfs.runtime.bounded import bounded as run_bounded


class _StoredModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves the Python files of one image version as top-level modules (last on the meta
    path, so they never shadow the standard library or K)."""

    def __init__(self, key: tuple[str, int], read: Callable[[str], bytes], names: list[str],
                 secret: Callable[[str], str]) -> None:
        self.key = key
        self.read = read
        self.files = {n for n in names if n.endswith(".py")}
        self.secret = secret
        self.served: set[str] = set()

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        base = fullname.replace(".", "/")
        for rel, package in ((f"{base}/__init__.py", True), (f"{base}.py", False)):
            if rel in self.files:
                spec = importlib.util.spec_from_loader(fullname, self, origin=f"image:{rel}", is_package=package)
                if spec is not None and package:
                    spec.submodule_search_locations = []
                return spec
        return None

    def exec_module(self, module: Any) -> None:
        rel = module.__spec__.origin[len("image:"):]
        code = compile(self.read(rel), rel, "exec")
        self.served.add(module.__name__)
        module.secret = self.secret  # the image's code may read secrets: `secret("NAME")`
        exec(code, module.__dict__)  # noqa: S102 - the operator's image: trusted code


_installed: _StoredModules | None = None
_lock = threading.Lock()


def _modules(key: tuple[str, int], read: Callable[[str], bytes], names: list[str],
             secret: Callable[[str], str]) -> _StoredModules:
    """The finder for `key` (a state's image version); a process that served another forgets
    its modules."""
    global _installed
    with _lock:
        if _installed is not None and _installed.key == key:
            return _installed
        if _installed is not None:
            sys.meta_path.remove(_installed)
            for name in _installed.served:
                sys.modules.pop(name, None)
        _installed = _StoredModules(key, read, names, secret)
        sys.meta_path.append(_installed)
        return _installed


def loader(record: dict[str, Any], read: Callable[[str], bytes], text: str,
           secret: Callable[[str], str]) -> Callable[[], Any]:
    """A function that imports the handler `module:function` of the image `record`
    (kfs.runtime.image.current) on first use."""
    module, _, function = text.partition(":")

    def load() -> Any:
        _modules((record.get("state", ""), record["version"]), read, record["files"], secret)
        return getattr(importlib.import_module(module), function)

    return load




class HandlerFailed(Exception):
    """An image handler raised: `where` is the image file and line (its message is left out:
    it may carry what the handler meant to keep, a secret's value say)."""

    def __init__(self, name: str, error: BaseException) -> None:
        frames = [f for f in traceback.extract_tb(error.__traceback__) if not f.filename.startswith("/")]
        where = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
        super().__init__(f"{name} raised {type(error).__name__}{where}")


def bounded(name: str, fn: Callable[..., Any], *args: Any, timeout: float) -> Any:
    """fn(*args) for at most `timeout` seconds (kfs.runtime.bounded): TimeoutError when it has
    not returned by then, HandlerFailed when it raised."""
    try:
        return run_bounded(fn, *args, timeout=timeout, name=f"image {name}")
    except Overran:
        raise TimeoutError(f"{name} did not return within {timeout:g} s") from None
    except BaseException as e:  # noqa: BLE001 - the handler's failure, said where it was raised
        raise HandlerFailed(name, e) from None
