"""An agent's tool loop written for E2B's SDK: only its import line names K.

    .venv/bin/python examples/e2b_agent.py

The tool calls are what a model asked for, in order; each is carried out in the sandbox and
its answer printed, as the loop would hand it back to the model.
"""

from kshell.compat.e2b import CommandExitException, Sandbox

TOOL_CALLS = [
    ("write_file", {"path": "/home/user/project/scores.csv", "content": "name,score\nada,91\nlin,78\nbob,85\n"}),
    ("run", {"cmd": "cd project && tail -n +2 scores.csv | sort -t, -k2 -nr | head -2"}),
    ("run", {"cmd": "cd project && awk -F, 'NR > 1 {s += $2} END {print s / (NR - 1)}' scores.csv"}),
    ("run", {"cmd": "cat project/missing.txt"}),
    ("list", {"path": "/home/user/project"}),
]


def act(sandbox: Sandbox, name: str, args: dict) -> str:
    if name == "write_file":
        return f"wrote {sandbox.files.write(args['path'], args['content']).path}"
    if name == "run":
        try:
            return sandbox.commands.run(args["cmd"]).stdout.strip().replace("\n", " | ")
        except CommandExitException as e:
            return f"exit {e.exit_code}: {e.stderr.strip()}"
    if name == "list":
        return " ".join(entry.name for entry in sandbox.files.list(args["path"]))
    raise ValueError(name)


with Sandbox.create() as sandbox:
    for name, args in TOOL_CALLS:
        print(f"{name}: {act(sandbox, name, args)}")
    streamed: list[str] = []
    job = sandbox.commands.run("for i in 1 2; do echo tick $i; done", background=True, on_stdout=streamed.append)
    print("job exit:", job.wait().exit_code, "streamed:", "".join(streamed).splitlines())
