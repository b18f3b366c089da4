"""Random mutations of valid scripts and random text: the interpreter never lets anything but a
clean shell error out (no "internal error", no Python traceback) and always finishes within
its bounds."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from interp_support import KWorld
from test_interp_builtins import ECHO_PRINTF, READ, TESTS, VARIABLES
from test_interp_commands import CONTROL, FUNCTIONS, PIPELINES, REDIRECTIONS
from test_interp_expansion import ARITHMETIC, ARRAYS, PARAMETERS, SPLITTING_GLOBBING

from kshell import Limits
from tests.hang import HANG

SEEDS = (PARAMETERS + ARRAYS + ARITHMETIC + SPLITTING_GLOBBING + CONTROL + FUNCTIONS + REDIRECTIONS
         + PIPELINES + ECHO_PRINTF + READ + TESTS + VARIABLES)
ALPHABET = list("$(){}[]<>|&;'\"\\`*?!#=+-~%^,:/ \n\tax0123") + ["$((", "${", "<<", "<(", "((",
                                                                 "[[", "]]", "fi", "done", "esac"]
LIMITS = Limits(loop_iterations=3000, wall_time=3.0, recursion_depth=60, brace_words=2000,
                output_bytes=200_000, variable_bytes=200_000)


@st.composite
def mutated(draw) -> str:
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, len(text)))
        kind = draw(st.integers(0, 2))
        if kind == 0:
            end = min(len(text), pos + draw(st.integers(1, 6)))
            text = text[:pos] + text[end:]
        elif kind == 1:
            text = text[:pos] + draw(st.sampled_from(ALPHABET)) + text[pos:]
        else:
            end = min(len(text), pos + draw(st.integers(1, 12)))
            text = text[:pos] + text[pos:end] + text[pos:]
    return text


class _World:
    def __init__(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.world = KWorld(Path(self.tmp.name))


_world: _World | None = None


def _shell_run(script: str) -> tuple[bytes, bytes, int, float]:
    global _world
    if _world is None:
        _world = _World()
    shell = _world.world.shell(limits=LIMITS)
    start = time.monotonic()
    r = shell.run(script)
    return r.stdout, r.stderr, r.status, time.monotonic() - start


def _check(script: str) -> None:
    _, err, status, elapsed = _shell_run(script)
    assert b"internal error" not in err, (script, err)
    assert b"Traceback" not in err, (script, err)
    assert 0 <= status <= 255
    assert elapsed < HANG, script  # a hang guard (LIMITS end a runaway long before), not a speed claim


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated())
def test_mutated_scripts_fail_cleanly(script: str) -> None:
    _check(script)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(ALPHABET), max_size=30))
def test_random_shell_text_fails_cleanly(pieces: list[str]) -> None:
    _check("".join(pieces))
