"""An agent's tool loop written for Daytona's SDK: only its import line names K.

    .venv/bin/python examples/daytona_agent.py
"""

from kshell.compat.daytona import Daytona, SessionExecuteRequest

daytona = Daytona()
sandbox = daytona.create()
try:
    sandbox.fs.create_folder("app", "755")
    sandbox.fs.upload_file(b"def add(a, b):\n    return a + b\n", "app/calc.py")
    print("defs:", sandbox.process.exec("grep -c def app/calc.py").result.strip())
    print("matches:", [(m.file.rsplit("/", 1)[1], m.line) for m in sandbox.fs.find_files("app", "return")])
    sandbox.fs.replace_in_files(["app/calc.py"], "a + b", "b + a")
    print("now:", sandbox.fs.download_file("app/calc.py").decode().splitlines()[1].strip())

    sandbox.process.create_session("work")  # a shell that keeps its state between commands
    sandbox.process.execute_session_command("work", SessionExecuteRequest(command="cd app && export STAGE=test"))
    answer = sandbox.process.execute_session_command("work", SessionExecuteRequest(command="echo $STAGE in $PWD"))
    print("session:", answer.exit_code, answer.output.strip())

    failed = sandbox.process.exec("ls nowhere")
    print("failed:", failed.exit_code, failed.result.strip())
finally:
    daytona.delete(sandbox)
