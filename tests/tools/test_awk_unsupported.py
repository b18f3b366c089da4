"""gawk-only variables that would change results are refused, never silently ignored."""

from __future__ import annotations

import pytest
from differential import run_k


@pytest.mark.parametrize("name", ["IGNORECASE", "FIELDWIDTHS", "FPAT"])
def test_assigning_a_gawk_only_variable_fails_precisely(name: str) -> None:
    out, err, status = run_k(f"echo 'a b' | awk 'BEGIN {{ {name} = 1 }} {{ print $1 }}'", {})
    assert status == 2
    assert f"`{name}' is a gawk extension that this awk does not support" in err.decode()
    assert out == b""
