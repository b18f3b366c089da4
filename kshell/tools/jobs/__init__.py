"""The programs of job control: ps, nohup and setsid (kshell.exec.jobcontrol, where the builtins
jobs, kill, wait, fg, bg and disown live too)."""

from kshell.exec.jobcontrol import nohup, ps, setsid

__all__ = ["nohup", "ps", "setsid"]
