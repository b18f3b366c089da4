"""Bounds: every runaway script ends with a clear message and a non-zero status, never a hang
or a crash; concurrent pipelines end as soon as their reader does."""

from __future__ import annotations

from interp_support import run_k

from kshell import Limits


def test_loop_iteration_limit_stops_an_endless_loop() -> None:
    r = run_k("while :; do :; done\necho never", limits=Limits(loop_iterations=1000))
    assert r.stderr == b"bash: line 1: loop iteration limit exceeded (1000)\n"
    assert (r.stdout, r.status) == (b"", 1)


def test_loop_limit_counts_per_top_level_command() -> None:
    r = run_k("for i in {1..80}; do :; done; echo $?\nfor i in {1..80}; do :; done; echo $?\n"
              "for ((;;)); do :; done\necho never", limits=Limits(loop_iterations=100))
    assert (r.stdout, r.status) == (b"0\n0\n", 1)


def test_exit_trap_still_runs_after_a_limit() -> None:
    r = run_k("trap 'echo cleanup' EXIT; while :; do :; done", limits=Limits(loop_iterations=100))
    assert (r.stdout, r.status) == (b"cleanup\n", 1)


def test_wall_time_limit_stops_a_busy_command() -> None:
    r = run_k("while :; do x=1; done", limits=Limits(wall_time=0.5))  # the loop alone never ends
    assert (r.stderr, r.status) == (b"bash: line 1: command exceeded the wall-time limit\n", 1)


def test_wall_time_limit_stops_a_stuck_pipeline() -> None:
    r = run_k("while :; do echo y; done | while :; do read x; done", limits=Limits(wall_time=0.5))
    assert r.stderr.endswith(b": command exceeded the wall-time limit\n") and r.status == 1


def test_pipeline_ends_when_its_reader_ends() -> None:
    """The writer ends by SIGPIPE (141), not by the wall time (a message and status 1; the
    bound only ends a hang, whatever the machine's speed)."""
    r = run_k("while :; do echo y; done | { read a; read b; echo $a$b; }; echo ${PIPESTATUS[@]}",
              limits=Limits(wall_time=60))
    assert (r.stdout, r.stderr, r.status) == (b"yy\n141 0\n", b"", 0)


def test_pipeline_stages_run_concurrently_with_bounded_buffers() -> None:
    script = "for i in {1..20000}; do echo line$i; done | { n=0; while read l; do n=$((n+1)); done; echo $n; }"
    r = run_k(script, limits=Limits(pipeline_buffer=256))
    assert r.stdout == b"20000\n"


def test_recursion_depth_limit_stops_runaway_functions() -> None:
    r = run_k("f() { f; }; f; echo status $?", limits=Limits(recursion_depth=200))
    assert b"maximum function nesting level exceeded (200)" in r.stderr
    assert r.stdout == b""
    assert r.status == 1


def test_default_recursion_depth_is_reached_without_crashing() -> None:
    r = run_k("f() { f; }; f\necho never")
    assert b"maximum function nesting level exceeded (1000)" in r.stderr
    assert (r.stdout, r.status) == (b"", 1)


def test_funcnest_bounds_recursion_as_in_bash() -> None:
    r = run_k("FUNCNEST=20; f() { f; }; f; echo status $?")
    assert r.stderr == b"bash: line 1: f: maximum function nesting level exceeded (20)\n"
    assert r.stdout == b"status 1\n"


def test_deep_legitimate_recursion_works() -> None:
    r = run_k("f() { if (( $1 > 0 )); then f $(( $1 - 1 )); else echo bottom; fi; }; f 300")
    assert r.stdout == b"bottom\n"


def test_output_limit_per_command() -> None:
    r = run_k("while :; do echo yyyyyyyyyyyyyyyy; done", limits=Limits(output_bytes=10000))
    assert b"output exceeds the limit of 10000 bytes" in r.stderr
    assert len(r.stdout) <= 10000
    assert r.status == 1


def test_variable_size_limit() -> None:
    r = run_k("x=a; while :; do x+=$x; done", limits=Limits(variable_bytes=100000))
    assert r.stderr == b"bash: line 1: x: value exceeds the variable size limit of 100000 bytes\n"
    assert r.status == 1


def test_command_substitution_output_is_bounded() -> None:
    r = run_k("x=$(while :; do echo yyyyyyyy; done); echo ${#x}", limits=Limits(variable_bytes=5000))
    assert b"command substitution output exceeds the limit of 5000 bytes" in r.stderr
    assert (r.stdout, r.status) == (b"", 1)


def test_eval_recursion_is_bounded() -> None:
    r = run_k("s='eval \"$s\"'; eval \"$s\"; echo after", limits=Limits(recursion_depth=50))
    assert b"maximum nesting level exceeded" in r.stderr
    assert r.stdout == b"after\n"


def test_source_recursion_is_bounded() -> None:
    r = run_k("echo '. ./self.sh' > self.sh; . ./self.sh; echo after", limits=Limits(recursion_depth=50))
    assert b"maximum nesting level exceeded" in r.stderr
    assert r.stdout == b"after\n"


def test_child_shell_recursion_is_bounded() -> None:
    r = run_k("echo 'sh ./me.sh' > me.sh; sh ./me.sh; echo after", limits=Limits(recursion_depth=30))
    assert b"maximum shell nesting level exceeded" in r.stderr
    assert r.stdout == b"after\n"
