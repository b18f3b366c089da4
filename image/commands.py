"""Commands of the example image: each takes a context (args, input, write, error, exec,
secret) and returns the exit status."""


def greet(ctx):
    """`greet NAME...`: hello to each, then where the agent is, found by running `pwd`."""
    if not ctx.args:
        ctx.error("usage: greet NAME...\n")
        return 2
    for name in ctx.args:
        ctx.write(f"hello, {name}\n")
    where = ctx.exec("pwd")
    ctx.write(f"(from {where.stdout.decode().strip()})\n")
    return 0
