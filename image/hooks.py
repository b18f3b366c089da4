"""Hooks of the example image: each takes a context and answers allow, deny or ask. It has no
write hook: one gives every session rules on written paths, which the ssh delegation remote cannot
keep (examples/image-locked has one)."""


def ask_before_push(ctx):
    """`git push` waits for an operator's `komputer decide`."""
    if ctx.argv[:2] == ["git", "push"]:
        return "ask", "pushing leaves the computer"
    return None
