"""The K shell: a bash-shaped shell whose builtins run on the K virtual filesystem.

    from kshell import Shell, Result, Limits
    Shell(path_fs).run("echo hi") -> Result(stdout=b"hi\\n", stderr=b"", status=0)
"""

from kshell.limits import LimitExceeded, Limits
from kshell.session import Result, Shell

__all__ = ["LimitExceeded", "Limits", "Result", "Shell"]
