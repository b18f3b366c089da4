"""Hooks of the example image: each takes a context and answers allow, deny or ask."""


def no_writes_to_locked(ctx):
    """Nothing is written under a `locked` folder."""
    if "/locked/" in ctx.path + "/":
        return "deny", "locked folders are read-only in this image"
    return "allow"


def ask_before_push(ctx):
    """`git push` waits for an operator's `komputer decide`."""
    if ctx.argv[:2] == ["git", "push"]:
        return "ask", "pushing leaves the computer"
    return None
