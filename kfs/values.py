"""Value classes for the modules `komputer sh` loads at every start: what `dataclasses.dataclass`
makes, without the dataclasses module, which imports inspect (the two cost a tenth of a
`komputer sh -c true`). Modules off that path use dataclasses.

    @value_class(frozen=True, slots=True)
    class Cred:
        uid: int = 0
        groups: frozenset[int] = field(default_factory=frozenset)

As with dataclasses: the fields are the class's own annotations, in order, with their defaults;
`__init__` takes them positionally or by name; equality compares the fields of two instances
of the same class (`field(compare=False)` leaves one out of it and of the hash); a frozen class
hashes, a mutable one is unhashable; `slots=True` makes a slotted copy of the class (a frozen
one still pickles). What the class defines itself (`__repr__`, `__eq__`...) is kept. Not
supported: inherited fields, ClassVar annotations, `__post_init__`, ordering.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

_MISSING: Any = object()


class _Field:
    __slots__ = ("default", "default_factory", "compare")

    def __init__(self, default: Any, default_factory: Callable[[], Any] | Any, compare: bool) -> None:
        self.default = default
        self.default_factory = default_factory
        self.compare = compare


def field(*, default: Any = _MISSING, default_factory: Callable[[], Any] | Any = _MISSING,
          compare: bool = True) -> Any:
    """A field's default, or the function making a fresh one per instance, and whether it takes
    part in equality and hashing (dataclasses.field's arguments of the same names)."""
    return _Field(default, default_factory, compare)


def value_class(cls: type | None = None, /, *, frozen: bool = False, slots: bool = False) -> Any:
    """The class with an `__init__`, `__repr__`, `__eq__` (and `__hash__`) over its fields:
    `@value_class` or `@value_class(frozen=True, slots=True)`."""
    if cls is None:
        return lambda cls: _build(cls, frozen, slots)
    return _build(cls, frozen, slots)


def replace(value: Any, **changes: Any) -> Any:
    """A copy of `value` with some fields changed (dataclasses.replace)."""
    args = [changes.pop(name, getattr(value, name)) for name in value._fields]
    return type(value)(*args, **changes)  # a name left over is no field: __init__ refuses it


def _build(cls: type, frozen: bool, slots: bool) -> type:
    own = cls.__dict__
    names = tuple(own.get("__annotations__", {}))
    scope: dict[str, Any] = {"__name__": cls.__module__, "_MISSING": _MISSING, "_set": object.__setattr__}
    params, lines, keys = [], [], []
    for name in names:
        value = own.get(name, _MISSING)
        if isinstance(value, _Field):
            if value.compare:
                keys.append(name)
            factory, value = value.default_factory, value.default
        else:
            keys.append(name)
            factory = _MISSING
        given = name
        if factory is not _MISSING:
            scope[f"_factory_{name}"] = factory
            params.append(f"{name}=_MISSING")
            given = f"_factory_{name}() if {name} is _MISSING else {name}"
        elif value is not _MISSING:
            scope[f"_default_{name}"] = value
            params.append(f"{name}=_default_{name}")
        else:
            params.append(name)
        if not frozen:
            lines.append(f"self.{name} = {given}")
        elif slots:  # the slot's own setter: object.__setattr__ would look it up by name each time
            lines.append(f"_set_{name}(self, {given})")
        else:
            lines.append(f"_set(self, {name!r}, {given})")
        if not slots:  # the class attribute holds a plain default, as dataclasses leaves it
            if value is not _MISSING:
                setattr(cls, name, value)
            elif name in own:
                delattr(cls, name)
    if slots:
        body = {k: v for k, v in own.items() if k not in names and k not in ("__dict__", "__weakref__")}
        body["__slots__"] = names
        qualname = cls.__qualname__
        cls = type(cls)(cls.__name__, cls.__bases__, body)
        cls.__qualname__ = qualname
        if frozen:
            scope.update({f"_set_{name}": cls.__dict__[name].__set__ for name in names})

    mine = "".join(f"self.{k}," for k in keys)
    theirs = "".join(f"other.{k}," for k in keys)
    sources = {
        "__init__": f"def __init__(self, {', '.join(params)}):\n    " + ("\n    ".join(lines) or "pass"),
        "__eq__": "def __eq__(self, other):\n    if other.__class__ is self.__class__:\n"
                  f"        return ({mine}) == ({theirs})\n    return NotImplemented",
    }
    if frozen:
        sources["__hash__"] = f"def __hash__(self):\n    return hash(({mine}))"

    def __repr__(self: Any) -> str:
        return f"{type(self).__qualname__}({', '.join(f'{n}={getattr(self, n)!r}' for n in names)})"

    methods = {name: _compiled_when_called(cls, name, source, scope) for name, source in sources.items()}
    methods["__repr__"] = __repr__
    if frozen:
        def __setattr__(self: Any, name: str, value: Any) -> None:
            raise AttributeError(f"cannot assign to field {name!r}")

        def __delattr__(self: Any, name: str) -> None:
            raise AttributeError(f"cannot delete field {name!r}")

        methods.update(__setattr__=__setattr__, __delattr__=__delattr__)
        if slots:  # pickle's default state restore would assign through the refusing __setattr__
            def __getstate__(self: Any) -> list[Any]:
                return [getattr(self, n) for n in names]

            def __setstate__(self: Any, state: list[Any]) -> None:
                for name, value in zip(names, state):
                    object.__setattr__(self, name, value)

            methods.update(__getstate__=__getstate__, __setstate__=__setstate__)
    for name, method in methods.items():
        if name not in own:
            method.__qualname__ = f"{cls.__qualname__}.{name}"
            setattr(cls, name, method)
    if not frozen and "__hash__" not in own:
        cls.__hash__ = None  # type: ignore[assignment]  # mutable and compared by value: unhashable
    if "__match_args__" not in own:
        cls.__match_args__ = names  # type: ignore[attr-defined]
    cls._fields = names  # type: ignore[attr-defined]
    return cls


def _compiled_when_called(cls: type, name: str, source: str, scope: dict[str, Any]) -> Any:
    """The method `name`, compiled from `source` at its first call, which it then answers, and
    put in its place: generated code, as dataclasses makes it, since some of these classes are
    built and compared by the million (an inode per lookup) and a loop over the fields is
    several times slower; compiled when first called, not with the class, since that costs tens
    of microseconds, and most classes (the syntax tree has some fifty) are not used in a run."""

    def first_call(self: Any, *args: Any, **kwargs: Any) -> Any:
        exec(source, scope)  # not compile(): its first call costs a millisecond (it sets up the ast module)
        method = scope[name]
        method.__qualname__ = f"{cls.__qualname__}.{name}"
        setattr(cls, name, method)
        return method(self, *args, **kwargs)

    return first_call
