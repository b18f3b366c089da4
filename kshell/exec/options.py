"""The shell's `set -o` options: which have a letter (kept in `sh.opts` by letter) and which
have none, and whether one is on. The interpreter's state; `set`, `shopt` and `[[ -o ]]` read it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

# the `set -o` options that have a letter
LONG_OPTIONS = {
    "errexit": "e", "nounset": "u", "xtrace": "x", "noglob": "f", "noclobber": "C",
    "allexport": "a", "notify": "b", "noexec": "n", "verbose": "v", "hashall": "h",
    "braceexpand": "B", "physical": "P", "monitor": "m", "keyword": "k", "functrace": "T",
    "errtrace": "E", "onecmd": "t", "privileged": "p", "histexpand": "H",
}
# and those that have none: pipefail is the interpreter's flag, interactive-comments is the
# shopt interactive_comments, the others are kept in `sh.opts` under their names
LONG_ONLY = ("emacs", "history", "ignoreeof", "interactive-comments", "nolog", "pipefail",
             "posix", "vi")

SET_O_NAMES = tuple(sorted((*LONG_OPTIONS, *LONG_ONLY)))  # the order bash lists them in
# the shopt options, in the order `shopt` lists them
SHOPTS = ("autocd", "assoc_expand_once", "cdable_vars", "cdspell", "checkhash", "checkjobs",
          "checkwinsize", "cmdhist", "compat31", "compat32", "compat40", "compat41", "compat42",
          "compat43", "compat44", "complete_fullquote", "direxpand", "dirspell", "dotglob",
          "execfail", "expand_aliases", "extdebug", "extglob", "extquote", "failglob",
          "force_fignore", "globasciiranges", "globskipdots", "globstar", "gnu_errfmt",
          "histappend", "histreedit", "histverify", "hostcomplete", "huponexit",
          "inherit_errexit", "interactive_comments", "lastpipe", "lithist", "localvar_inherit",
          "localvar_unset", "login_shell", "mailwarn", "no_empty_cmd_completion", "nocaseglob",
          "nocasematch", "noexpand_translation", "nullglob", "patsub_replacement", "progcomp",
          "progcomp_alias", "promptvars", "restricted_shell", "shift_verbose", "sourcepath",
          "varredir_close", "xpg_echo")


def option_is_set(sh: Interp, name: str) -> bool:
    """Whether the `set -o` option `name` is on (False for a name that is no option)."""
    if name in LONG_OPTIONS:
        return LONG_OPTIONS[name] in sh.opts
    if name == "pipefail":
        return sh.pipefail
    if name == "interactive-comments":
        return "interactive_comments" in sh.shopts
    return name in LONG_ONLY and name in sh.opts
