"""What compiled awk code calls: control-flow exceptions, arithmetic that can fail, array and
scalar checks, stores that are expressions. NAMESPACE is the globals of the generated code."""

from __future__ import annotations

import math

from kshell.tools.awk.values import (
    UNINIT,
    AwkFatal,
    LazyArray,
    Uninit,
    compare,
    conv_char,
    conv_float,
    conv_int,
    conv_str,
    conv_unsigned,
    field,
    format_printf,
    num_to_str,
    small_number,
    small_share,
    str_to_num,
    to_bool,
    to_num,
)


class Next(Exception):
    pass


class NextFile(Exception):
    pass


class Exit(Exception):
    def __init__(self, status: int | None) -> None:
        self.status = status


class Break(Exception):
    """`break` outside a loop (an error that ends the program, as before)."""


class Continue(Exception):
    """`continue` outside a loop."""


class Return(Exception):
    """`return` outside a function."""

    def __init__(self, value) -> None:
        self.value = value


def div(a: float, b: float) -> float:
    if b == 0.0:
        raise AwkFatal("division by zero attempted", 2)
    return a / b


def mod(a: float, b: float) -> float:
    if b == 0.0:
        raise AwkFatal("division by zero attempted in `%'", 2)
    return math.fmod(a, b)


def power(a: float, b: float) -> float:
    try:
        return float(a ** b) if not (a < 0 and b != int(b)) else math.nan
    except OverflowError:
        return math.inf
    except ZeroDivisionError:
        return math.inf


ARITH = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": div,
         "%": mod, "^": power, "**": power}


def scalar_fatal(name: str):
    raise AwkFatal(f"attempt to use array `{name}' in a scalar context")


def checked_scalar(value, current, name: str):
    """`value`, to be stored in a variable now holding `current`: an array cannot be."""
    if type(current) is dict:
        scalar_fatal(name)
    return value


def unlazy(v):
    """A value about to be assigned: a LazyArray (an unset argument) is stored as unset."""
    return UNINIT if type(v) is LazyArray else v


def store_global(v, vars_: dict, name: str, check: bool):
    if check and type(vars_.get(name)) is dict:
        scalar_fatal(name)
    vars_[name] = v
    return v


def store_item(v, a: dict, key: str):
    a[key] = v
    return v


def augment_item(v: float, a: dict, key: str, op: str, post: bool) -> float:
    """a[key] op= v (x++ when post: the old value back); a missing element counts as 0."""
    cur = a.get(key)
    old = 0.0 if cur is None else cur if type(cur) is float else to_num(cur)
    new = ARITH[op](old, v)
    a[key] = new
    return old if post else new


def global_array(vars_: dict, name: str) -> dict:
    """The global `name` as an array, made one if unset."""
    a = vars_.get(name)
    if type(a) is dict:
        return a
    if a is None or type(a) is Uninit:
        d: dict = {}
        vars_[name] = d
        return d
    raise AwkFatal(f"attempt to use scalar `{name}' as an array")


def as_array(v, name: str) -> dict:
    """A global kept in a local, used as an array: made one if unset."""
    if type(v) is Uninit:
        return {}
    raise AwkFatal(f"attempt to use scalar `{name}' as an array")


def local_array(v, name: str) -> dict:
    """A parameter used as an array: an unset argument becomes one (the caller's variable
    too, when it was passed bare)."""
    if type(v) is LazyArray:
        d: dict = {}
        if v.setter is not None:
            v.setter(d)
        return d
    if type(v) is Uninit:
        return {}
    raise AwkFatal(f"attempt to use scalar parameter `{name}' as an array")


def global_ref(vars_: dict, name: str):
    """A global passed bare: by reference when an array, as a LazyArray when unset."""
    v = vars_.get(name, UNINIT)
    if type(v) is Uninit:
        lazy = LazyArray("")
        lazy.num = 0.0

        def store(d: dict) -> None:
            vars_[name] = d
        lazy.setter = store
        return lazy
    return v


def local_ref(v, store):
    """A parameter passed bare: an unset one as a LazyArray whose array, once made, is also
    this parameter's (`store`) and its own caller's."""
    if type(v) is Uninit or type(v) is LazyArray:
        lazy = LazyArray("")
        lazy.num = 0.0
        old = v

        def chain(d: dict) -> None:
            store(d)
            if type(old) is LazyArray and old.setter is not None:
                old.setter(d)
        lazy.setter = chain
        return lazy
    return v


def key_of(v, convfmt: str) -> str:
    """A subscript's string: numbers through CONVFMT (integers as integers)."""
    t = type(v)
    if t is str:
        return v
    if t is float:
        return num_to_str(v, convfmt)
    if t is dict:
        raise AwkFatal("attempt to use array in a scalar context")
    return str(v)


def dyn_search(rt, s: str, pattern):
    """`s ~ pattern` with a pattern computed at run time (s evaluated first)."""
    return rt.dyn_regex(pattern).search(s)


NAMESPACE = {
    "UNINIT": UNINIT, "LazyArray": LazyArray, "AwkFatal": AwkFatal, "field": field,
    "to_num": to_num, "to_bool": to_bool, "str_to_num": str_to_num, "num_to_str": num_to_str,
    "small_number": small_number, "small_share": small_share,
    "compare": compare, "format_printf": format_printf, "conv_int": conv_int, "conv_unsigned": conv_unsigned,
    "conv_char": conv_char, "conv_str": conv_str, "conv_float": conv_float, "INF": math.inf,
    "Next": Next, "NextFile": NextFile, "Exit": Exit, "Break": Break, "Continue": Continue,
    "Return": Return, "div": div, "mod": mod, "power": power,
    "scalar_fatal": scalar_fatal, "checked_scalar": checked_scalar, "unlazy": unlazy,
    "store_global": store_global, "store_item": store_item, "augment_item": augment_item,
    "global_array": global_array, "as_array": as_array, "local_array": local_array,
    "global_ref": global_ref, "local_ref": local_ref, "key_of": key_of, "dyn_search": dyn_search,
}
