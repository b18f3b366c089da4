"""kfs.values makes what dataclasses makes, for the classes it stands in for on the start path."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from kfs.values import field, replace, value_class


def pair(frozen: bool, slots: bool) -> tuple[type, type]:
    """The same class built by dataclasses and by value_class."""
    made = []
    for decorate, make_field in ((dataclasses.dataclass, dataclasses.field), (value_class, field)):

        class Point:
            """A point."""

            x: int
            y: int = 2
            tags: list[str] = make_field(default_factory=list)
            note: str = make_field(default="", compare=False)

            def norm(self) -> int:
                return abs(self.x) + abs(self.y)

        made.append(decorate(frozen=frozen, slots=slots)(Point))
    return made[0], made[1]


@pytest.mark.parametrize("frozen", [False, True])
@pytest.mark.parametrize("slots", [False, True])
def test_value_class_behaves_as_dataclass(frozen: bool, slots: bool) -> None:
    for cls in pair(frozen, slots):
        p = cls(1)
        assert (p.x, p.y, p.tags, p.note) == (1, 2, [], "")
        assert cls(1).tags is not p.tags  # a fresh default per instance
        assert cls(1, 5, ["a"], "n") == cls(x=1, y=5, tags=["a"], note="other")  # note: not compared
        assert cls(1) != cls(2)
        assert cls(1).__eq__(object()) is NotImplemented
        assert cls.__qualname__ == "pair.<locals>.Point"
        assert repr(cls(1, note="n")) == "pair.<locals>.Point(x=1, y=2, tags=[], note='n')"
        assert cls(3, -4).norm() == 7
        assert cls.__match_args__ == ("x", "y", "tags", "note")
        assert cls.__doc__ == "A point."
        assert hasattr(p, "__dict__") is not slots
        with pytest.raises(TypeError):
            cls()
        with pytest.raises(TypeError):
            cls(1, bogus=2)
        if frozen:
            with pytest.raises(AttributeError, match="cannot assign to field 'x'"):
                p.x = 5
            with pytest.raises(AttributeError, match="cannot delete field 'x'"):
                del p.x
            assert hash(cls(1, 2, (), "a")) == hash(cls(1, 2, (), "b"))
        else:
            p.x = 5
            assert p.x == 5
            with pytest.raises(TypeError):
                hash(p)


def test_defaults_stay_on_an_unslotted_class() -> None:
    made, built = pair(False, False)
    for cls in (made, built):
        assert cls.y == 2 and cls.note == ""
        assert not hasattr(cls, "tags") and not hasattr(cls, "x")


def test_replace_and_pickle() -> None:
    cls = value_class(frozen=True, slots=True)(_Pickled)
    globals()["_Pickled"] = cls  # pickle finds the class by its module and name
    p = cls(1, 2)
    assert replace(p, b=3) == cls(1, 3)
    with pytest.raises(TypeError):
        replace(p, c=3)
    assert pickle.loads(pickle.dumps(p)) == p


class _Pickled:
    a: int
    b: int


def test_methods_made_on_first_call_work_before_any_init() -> None:
    """An instance that never went through __init__ (unpickled in a fresh process) compares and
    hashes: each generated method is made at its own first call."""
    cls = value_class(frozen=True, slots=True)(type("Pair", (), {"__annotations__": {"a": "int", "b": "int"}}))
    p = cls.__new__(cls)
    p.__setstate__([1, 2])
    q = cls.__new__(cls)
    q.__setstate__([1, 2])
    assert p == q and hash(p) == hash(q) == hash((1, 2))
    assert cls(1, 2) == p
