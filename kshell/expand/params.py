"""`${...}` parameter expansion: every operator form bash offers, applied to scalars, array
elements and whole arrays (`${a[@]#p}` applies per element)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from kshell.core.errors import AbortCommand, expansion_failure
from kshell.core.variables import NameRef
from kshell.expand import charset
from kshell.expand import pattern as pat
from kshell.expand.fields import QUO, Fields
from kshell.syntax.ast import Literal, ParamExp, PrefixNames, Word
from kshell.syntax.parts import decode_ansi_c
from kshell.syntax.printer import assoc_key_text, quote_dq, quote_q, word_text

if TYPE_CHECKING:
    from kshell.expand.shell import Shell

_UNSET = None


class WordExpanders(NamedTuple):
    """kshell.expand.words's expansions an operator's word needs (`${x:-word}`, `${x/p/r}`),
    handed in by words with each call: words imports this module, so this one cannot import it."""

    parts: Callable[[Shell, Sequence, Fields, bool], None]
    string: Callable[[Shell, Word], str]
    pattern: Callable[[Shell, Word], str]
    pieces: Callable[[Shell, Word], list[tuple[str, int]]]


def _lookup(sh: Shell, part: ParamExp) -> tuple[str | list[str] | None, bool, bool]:
    """(value, is_list, star). value None means unset; a list comes from `@`/`*` forms;
    `star` says a list is `*` (joined when quoted), also through `${!ref}` with ref='a[*]'."""
    name = part.name
    sub = part.subscript
    if part.indirect:
        if sub == "@" or sub == "*":
            if not sh.is_valid_name(name):
                return None, True, sub == "*"
            return sh.array_keys(name), True, sub == "*"
        var = sh.vars.table.get(name)
        if var is not None and type(var.value) is NameRef:
            return str(var.value), False, False  # `${!ref}`: the name a reference holds
        if isinstance(sub, Word):  # `${!a[1]}`: through the element's value
            ref = sh.get_element_word(name, sub)
            return (None, False, False) if ref is None else _lookup_ref(sh, ref)
        ref = sh.get_param_or_none(name)
        if ref is None:  # bash 5.2: an error whether or not `set -u` is on
            sh.error(f"{name}: invalid indirect expansion")
            raise AbortCommand(1)
        return _lookup_ref(sh, ref)
    if sub is None:
        if name == "@" or name == "*":
            return sh.positional_list(), True, name == "*"
        return sh.get_param_or_none(name), False, False
    if sub == "@" or sub == "*":
        values = sh.array_values(name)
        return values, True, sub == "*"
    return sh.get_element_word(name, sub), False, False


def _lookup_ref(sh: Shell, ref: str) -> tuple[str | list[str] | None, bool, bool]:
    if ref in ("@", "*"):
        return sh.positional_list(), True, ref == "*"
    if "[" in ref and ref.endswith("]"):
        name, _, key = ref[:-1].partition("[")
        if key in ("@", "*"):
            return sh.array_values(name), True, key == "*"
        return sh.get_element_text(name, key), False, False
    if not (sh.is_valid_name(ref) or ref.isdigit() or len(ref) == 1 and ref in "#?$!-0"):
        sh.error(f"{ref}: invalid variable name")
        raise AbortCommand(1)
    return sh.get_param_or_none(ref), False, False


def _display_name(part: ParamExp) -> str:
    sub = part.subscript
    if sub is None:
        return part.name
    if isinstance(sub, str):
        return f"{part.name}[{sub}]"
    return f"{part.name}[{word_text(sub)}]"


def _arg_fields(sh: Shell, word: Word | None, b: Fields, quoted: bool, words: WordExpanders) -> None:
    if word is None:
        return
    if not word.parts and quoted:
        b.force()
    if quoted:
        words.parts(sh, word.parts, b, True)
        return
    for part in word.parts:  # unquoted operand text is split like an expansion result
        if type(part) is Literal:
            b.add_split(part.text)
        else:
            words.parts(sh, (part,), b, False)


def _arg_string(sh: Shell, word: Word | None, words: WordExpanders) -> str:
    return "" if word is None else words.string(sh, word)


def _replacement(sh: Shell, word: Word | None, words: WordExpanders) -> str | list[str | None]:
    """`${x/p/r}`'s r: a string, or with `shopt patsub_replacement` (bash 5.2's default) and
    an unquoted `&` in it, the pieces around each such `&` (None), which stands for the
    matched text; a quoted or backslashed `&` is itself."""
    if word is None:
        return ""
    if "patsub_replacement" not in sh.shopts:
        return _arg_string(sh, word, words)
    pieces = words.pieces(sh, word)
    if not any(kind != QUO and "&" in text for text, kind in pieces):
        return "".join(text for text, _ in pieces)
    template: list[str | None] = []
    for text, kind in pieces:
        if kind == QUO:
            template.append(text)
            continue
        for i, chunk in enumerate(text.split("&")):
            if i:
                template.append(None)
            template.append(chunk)
    return template


def _arg_pattern(sh: Shell, word: Word | None, words: WordExpanders) -> str:
    return "" if word is None else words.pattern(sh, word)


def _emit(sh: Shell, b: Fields, value: str | list[str], is_list: bool, quoted: bool,
          star: bool) -> None:
    if is_list:
        values = value if isinstance(value, list) else [value]
        if quoted and star:
            b.add(sh.ifs_join(values), QUO)
        else:
            b.add_list(values, quoted, star)
        return
    if quoted:
        b.add(value, QUO)  # type: ignore[arg-type]
    else:
        b.add_split(value)  # type: ignore[arg-type]


def expand_param(sh: Shell, part: ParamExp, b: Fields, quoted: bool, words: WordExpanders) -> None:
    op = part.op
    value, is_list, star = _lookup(sh, part)
    if part.length:
        if is_list:
            if not value and part.subscript in ("@", "*") and not part.indirect \
                    and sh.options_u() and not sh.array_is_set(part.name):
                _unbound(sh, part.name)  # bash 5.2: `declare -a a; ${#a[@]}` too
            count = len(value) if value is not None else 0  # type: ignore[arg-type]
            text = str(count)
        else:
            if value is None and sh.options_u() and not part.name.isdigit() or (
                    value is None and sh.options_u() and part.name.isdigit()):
                _unbound(sh, _display_name(part))
            text = value or ""  # type: ignore[assignment]
            text = str(len(text) if text.isascii() or sh.utf8_locale() else charset.byte_length(text))
        _emit(sh, b, text, False, quoted, False)
        return
    if not op:
        if value is None:
            if sh.options_u() and not is_list:
                _unbound(sh, _display_name(part))
            value = ""
        if star and not quoted and part.indirect and part.subscript == "*":
            # unquoted `${!a[*]}`: bash joins the keys (with a space if IFS is null) and
            # splits the result as a plain word, so IFS='' leaves one field
            b.add_split((sh.ifs[:1] or " ").join(value))  # type: ignore[arg-type]
            return
        _emit(sh, b, value, is_list, quoted, star)
        return
    if op in (":-", "-", ":=", "=", ":?", "?", ":+", "+"):
        if is_list:
            # bash tests a list as one string: "${*:-x}" the IFS-joined elements, an
            # indirect "${!ref:-x}" only whether there are elements (a bash quirk), others
            # whether there is more than one element or a non-empty one
            if op[0] != ":" or quoted and part.indirect:
                present = bool(value)
            elif quoted and star:
                present = sh.ifs_join(value) != ""  # type: ignore[arg-type]
            else:
                present = bool(value) and (len(value) > 1 or value[0] != "")  # type: ignore[index, arg-type]
        else:
            present = value is not None and (op[0] != ":" or value != "")
        kind = op[-1]
        if kind == "-":
            if present:
                _emit(sh, b, value, is_list, quoted, star)  # type: ignore[arg-type]
            else:
                _arg_fields(sh, part.arg, b, quoted, words)
            return
        if kind == "+":
            if present:
                _arg_fields(sh, part.arg, b, quoted, words)
            return
        if kind == "=":
            if present:
                _emit(sh, b, value, is_list, quoted, star)  # type: ignore[arg-type]
                return
            if part.indirect or part.name in "@*#?$!-" or part.name.isdigit():
                sh.error(f"${part.name}: cannot assign in this way")
                raise AbortCommand(1)
            text = _arg_string(sh, part.arg, words)
            if isinstance(part.subscript, Word):
                sh.set_element(part.name, sh.element_key(part.name, part.subscript), text)
            else:
                sh.assign_scalar(part.name, text)
            _emit(sh, b, text, False, quoted, False)
            return
        # ? and :?
        if present:
            _emit(sh, b, value, is_list, quoted, star)  # type: ignore[arg-type]
            return
        message = _arg_string(sh, part.arg, words) if part.arg is not None and part.arg.parts else (
            "parameter null or not set" if op == ":?" else "parameter not set")
        sh.error(f"{_display_name(part)}: {message}")
        raise expansion_failure(sh)
    if value is None:
        letters = sh.attr_letters(_attr_name(sh, part)) if op == "@a" and not is_list else ""
        if letters:  # a declared variable's attributes (an array's, though [0] is unset)
            _emit(sh, b, letters, False, quoted, star)
            return
        if sh.options_u() and not is_list:
            _unbound(sh, _display_name(part))
        if op == ":" or op.startswith("@"):
            _emit(sh, b, [] if is_list else "", is_list, quoted, star)
            return
        value = [] if is_list else ""
    if op == ":":
        _substring(sh, part, value, is_list, b, quoted, star, words)
        return
    values = value if is_list else [value]
    nocase = False
    if op[0] in "#%/":
        p = _arg_pattern(sh, part.arg, words)
        r: str | list[str | None] = _replacement(sh, part.arg2, words) if op[0] == "/" else ""
        bytewise = not all(v.isascii() for v in values) and not sh.utf8_locale()  # type: ignore[union-attr]
        if bytewise:  # outside UTF-8, `?` and offsets take bytes
            values = [charset.to_bytes(v) for v in values]  # type: ignore[arg-type]
            p = charset.to_bytes(p)
            r = charset.to_bytes(r) if isinstance(r, str) else [None if t is None else charset.to_bytes(t) for t in r]
        if op in ("#", "##"):
            out = [pat.strip_prefix(v, p, op == "##", nocase) for v in values]  # type: ignore[arg-type]
        elif op in ("%", "%%"):
            out = [pat.strip_suffix(v, p, op == "%%", nocase) for v in values]  # type: ignore[arg-type]
        else:
            out = [pat.replace(v, p, r, op) for v in values]  # type: ignore[arg-type]
        if bytewise:
            out = [charset.from_bytes(v) for v in out]
    elif op in ("~", "~~"):
        utf8 = sh.utf8_locale()
        out = [charset.swapcase(v, utf8) if op == "~~" else charset.swapcase(v[:1], utf8) + v[1:]  # type: ignore[index]
               for v in values]  # type: ignore[union-attr]
    elif op in ("^", "^^", ",", ",,"):
        p = _arg_pattern(sh, part.arg, words) if part.arg is not None else ""
        utf8 = sh.utf8_locale()
        out = [_case(v, p, op, utf8) for v in values]  # type: ignore[arg-type]
    elif op == "@K" and part.subscript in ("@", "*") and not part.indirect:
        out = [_pairs(sh, part.name, values)] if values else []  # type: ignore[arg-type]
    elif op == "@k" and part.subscript in ("@", "*") and not part.indirect:  # keys and values, as words
        out = [w for k, v in zip(sh.array_keys(part.name), values, strict=True) for w in (k, v)]  # type: ignore[arg-type]
    elif op.startswith("@"):
        out = [_transform(sh, part, v, op[1:]) for v in values]  # type: ignore[union-attr]
        if op == "@A" or op == "@a":
            out = out[:1] if is_list and op == "@A" else out
    else:
        sh.error(f"${{{part.name}{op}}}: bad substitution")
        raise AbortCommand(1)
    _emit(sh, b, out if is_list else out[0], is_list, quoted, star)


def _pairs(sh: Shell, name: str, values: list[str]) -> str:
    """`${a[@]@K}`: one word of keys and quoted values, as bash's array_to_kvpair (an
    associative array's pairs each followed by a space)."""
    keys = sh.array_keys(name)
    if "A" in sh.attr_letters(name):
        return "".join(f"{assoc_key_text(k)} {quote_dq(v)} " for k, v in zip(keys, values, strict=True))
    return " ".join(f"{k} {quote_dq(v)}" for k, v in zip(keys, values, strict=True))


def _attr_name(sh: Shell, part: ParamExp) -> str:
    """Whose attributes `${x@a}` shows: x, or for `${!r@a}` the variable r names (`a[0]`: a)."""
    if not part.indirect:
        return part.name
    return (sh.get_param_or_none(part.name) or "").split("[", 1)[0]


def _case(value: str, p: str, op: str, utf8: bool) -> str:
    upper = op[0] == "^"

    def conv(text: str) -> str:
        return charset.upper(text, utf8) if upper else charset.lower(text, utf8)

    if not p:
        if len(op) == 2:
            return conv(value)
        return conv(value[:1]) + value[1:]
    if len(op) == 2:
        return "".join(conv(c) if pat.match(p, c, utf8=utf8) else c for c in value)
    if value and pat.match(p, value[0], utf8=utf8):
        return conv(value[0]) + value[1:]
    return value


def _transform(sh: Shell, part: ParamExp, value: str, t: str) -> str:
    if t == "Q":
        return quote_q(value)
    if t == "U":
        return charset.upper(value, sh.utf8_locale())
    if t == "u":
        return charset.upper(value[:1], sh.utf8_locale()) + value[1:]
    if t == "L":
        return charset.lower(value, sh.utf8_locale())
    if t == "E":
        return decode_ansi_c(value, sh.utf8_locale())
    if t == "a":
        return sh.attr_letters(_attr_name(sh, part))
    if t == "A":
        return f"{part.name}={quote_q(value)}"
    if t == "P":
        return value
    if t == "K" or t == "k":
        return quote_q(value)
    sh.error(f"${{{part.name}@{t}}}: bad substitution")
    raise AbortCommand(1)


def _substring(sh: Shell, part: ParamExp, value, is_list: bool, b: Fields, quoted: bool,
               star: bool, words: WordExpanders) -> None:
    off_text = _arg_string(sh, part.arg, words)
    offset = sh.eval_arith_text(off_text)
    length = None
    if part.arg2 is not None:
        length = sh.eval_arith_text(_arg_string(sh, part.arg2, words))
    if is_list:
        values = list(value)
        if part.name == "@" or part.name == "*" and part.subscript is None:
            values = [sh.dollar0, *values]
            if offset < 0:
                offset = len(values) + offset
                if offset < 1:
                    _emit(sh, b, [], True, quoted, star)
                    return
        if length is not None and length < 0:
            sh.error(f"{length}: substring expression < 0")
            raise AbortCommand(1)
        if part.subscript in ("@", "*") and not part.indirect:  # the offset is an index
            values, offset = sh.array_values_from(part.name, offset), 0
        elif offset < 0:
            offset = len(values) + offset
            if offset < 0:
                _emit(sh, b, [], True, quoted, star)
                return
        end = len(values) if length is None else offset + length
        _emit(sh, b, values[offset:end], True, quoted, star)
        return
    bytewise = not value.isascii() and not sh.utf8_locale()
    if bytewise:
        value = charset.to_bytes(value)
    n = len(value)
    if offset < 0:
        offset += n
        if offset < 0:
            _emit(sh, b, "", False, quoted, False)
            return
    if length is None:
        text = value[offset:]
    elif length < 0:
        end = n + length
        if end < offset:
            sh.error(f"{length}: substring expression < 0")
            raise AbortCommand(1)
        text = value[offset:end]
    else:
        text = value[offset : offset + length]
    _emit(sh, b, charset.from_bytes(text) if bytewise else text, False, quoted, False)


def _unbound(sh: Shell, name: str) -> None:
    sh.error(f"{'$' if name.isdigit() else ''}{name}: unbound variable")
    raise expansion_failure(sh)


def expand_prefix_names(sh: Shell, part: PrefixNames, b: Fields, quoted: bool) -> None:
    names = sorted(n for n in sh.variable_names() if n.startswith(part.prefix))
    if part.at:
        b.add_list(names, quoted)
    elif quoted:
        b.add(sh.ifs_join(names), QUO)
    else:  # bash joins `${!p*}` as "$*" would, then splits it (IFS='': one field)
        b.add_split(sh.ifs_join(names))
