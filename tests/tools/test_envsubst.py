"""envsubst against GNU gettext: $VAR and ${VAR}, unset and unexported variables, what is not a
reference ($$, ${A:-x}, $1), SHELL-FORMAT restricting the variables, -v, and the refusals."""

from __future__ import annotations

import pytest
from differential import Case, assert_same, require_tools

F = {"tpl": "server ${HOST}:$PORT;\nroot $HOME/www; user ${USER}\n$$ ${A:-x} ${A $1A ${} $ \\$A $A_B ${B}x $9\n"}
ENV = "export HOST=example.org PORT=8080 A=1 B=two; NOTEXP=hidden; "
SCRIPTS = [
    ENV + "envsubst < tpl", ENV + "envsubst '$HOST ${PORT}' < tpl", ENV + "envsubst 'x ${A}y' < tpl",
    ENV + "printf '$NOTEXP|$UNSET|${B}\\n' | envsubst", ENV + "envsubst -v '$A ${B} $C $A ${D:-x}'",
    ENV + "printf 'no newline $A' | envsubst", ENV + "envsubst '' < tpl",
    "envsubst a b; echo $?", "envsubst -v; echo $?", "envsubst -x; echo $?",
    "A='$B' B=no; export A B; echo '$A' | envsubst",
]


@pytest.mark.parametrize("case", [Case(s, s, F) for s in SCRIPTS], ids=Case.id)
def test_envsubst(case: Case) -> None:
    require_tools("envsubst")
    assert_same(case)
