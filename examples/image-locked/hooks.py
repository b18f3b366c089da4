"""The write hook of the locked example image: it answers allow or deny for each write."""


def no_writes_to_locked(ctx):
    """Nothing is written under a `locked` folder."""
    if "/locked/" in ctx.path + "/":
        return "deny", "locked folders are read-only in this image"
    return "allow"
