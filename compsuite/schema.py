"""Study options declared as types, checked in one place.

A study declares what its YAML may hold as dataclasses (a profile's own keys, the
study's own top-level keys); :func:`check` reads a mapping into one of them and
raises a :class:`~compsuite.foundation.errors.ConfigError` that names the file and the key path
(and, for an unknown key or choice, the nearest valid one), the same errors whatever
the study.  Types it understands:

* ``int``, ``float`` (an int is accepted), ``str``, ``bool``, ``Any``;
* ``Literal["a", "b"]`` (one of these values), ``X | None`` (one type or none),
  ``X | Y`` (the first of the types that takes the value);
* ``list[X]``, ``dict[str, X]``, ``dict[Literal[...], X]`` (keys checked too);
* another dataclass (checked recursively);
* ``Annotated[X, check, ...]``: after the type, each ``check(value, where)`` runs
  (:func:`positive`, :func:`within`, :func:`non_empty`, :func:`increasing` or your own).

A dataclass may define ``check(self, where)`` for what involves several keys (a key
allowed only with another key's value); it runs after its fields are read.  Keys the
YAML leaves out take the field's default; a field without one is required.
``from __future__ import annotations`` is fine for schemas defined at a module's top
level (their hints are resolved in that module).

Example::

    @dataclass
    class Data:
        scale: Annotated[float, within(0, 1, low_open=True)] = 1.0
        seed: PositiveInt = 1

    check(Data, {"scale": 2}, "x.yaml: profiles.quick.data")
    # ConfigError: x.yaml: profiles.quick.data.scale: a number in (0, 1], not 2
"""
from __future__ import annotations

import dataclasses
import sys
import types
import typing
from typing import Annotated, Any, Callable, Iterable, Literal, TypeVar, Union

from compsuite.foundation.errors import ConfigError
from compsuite.foundation.names import near

T = TypeVar("T")
Check = Callable[[Any, str], None]


# ----------------------------------------------------------------------------- checks
def positive(value: Any, where: str) -> None:
    """A positive integer (also a profile's ``jobs`` and ``--jobs``)."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ConfigError(f"{where} must be a positive integer, not {value!r}")


def within(low: float, high: float, *, low_open: bool = False, high_open: bool = False
           ) -> Check:
    """A number in [low, high] (an open end with ``low_open`` / ``high_open``)."""
    span = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"

    def check(value: Any, where: str) -> None:
        below = value <= low if low_open else value < low
        above = value >= high if high_open else value > high
        if below or above:
            raise ConfigError(f"{where}: a number in {span}, not {value!r}")
    check.__doc__ = f"a number in {span}"
    return check


def each(inner: Check) -> Check:
    """``inner`` on every element of a list."""
    def check(values: list, where: str) -> None:
        for v in values:
            inner(v, where)
    return check


def non_empty(value: Any, where: str) -> None:
    if not value:
        raise ConfigError(f"{where}: must not be empty")


def increasing(value: list, where: str) -> None:
    if sorted(set(value)) != list(value):
        raise ConfigError(f"{where}: increasing values, not {value!r}")


def seed_list(value: Any, where: str) -> list[int]:
    """Seeds: a non-empty list of integers (returned as a new list)."""
    if not isinstance(value, list) or not value or not all(
            isinstance(s, int) and not isinstance(s, bool) for s in value):
        raise ConfigError(f"{where}: seeds must be a non-empty list of integers, not {value!r}")
    return list(value)


PositiveInt = Annotated[int, positive]


# ----------------------------------------------------------------------------- reading
def mapping(d: Any, where: str) -> dict:
    if not isinstance(d, dict):
        raise ConfigError(f"{where}: expected a mapping, found {type(d).__name__}")
    return d


def check_keys(d: Any, allowed: Iterable[str], where: str) -> dict:
    """``d`` must be a mapping whose keys are all in ``allowed``; the error names
    ``where`` (file and key path) and the nearest allowed key."""
    mapping(d, where)
    allowed = set(allowed)
    for key in d:
        if key not in allowed:
            raise ConfigError(f"{where}: unknown key '{key}' (allowed: "
                              f"{', '.join(sorted(allowed))}){near(str(key), allowed)}")
    return d


def check(schema: type[T], value: Any, where: str) -> T:
    """``value`` (a mapping, or None for all defaults) read into the dataclass
    ``schema``; any mistake is a ConfigError naming ``where`` and the key."""
    value = {} if value is None else value
    fields = {f.name: f for f in dataclasses.fields(schema)}
    check_keys(value, fields, where)
    hints = typing.get_type_hints(schema, include_extras=True,
                                  globalns=vars(sys.modules[schema.__module__]))
    kwargs = {}
    for name, f in fields.items():
        if name not in value:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ConfigError(f"{where}: missing required key '{name}'")
            continue
        kwargs[name] = convert(hints[name], value[name], join(where, name))
    obj = schema(**kwargs)
    cross = getattr(obj, "check", None)
    if callable(cross):
        cross(where)
    return obj


def join(where: str, key: Any) -> str:
    """``file: a.b`` + ``c`` -> ``file: a.b.c``; a bare file name gets ``file: c``."""
    return f"{where}.{key}" if ": " in where else f"{where}: {key}"


def convert(tp: Any, value: Any, where: str) -> Any:
    """``value`` checked against the type ``tp`` (see the module docstring)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is Annotated:
        out = convert(args[0], value, where)
        for chk in args[1:]:
            chk(out, where)
        return out
    if origin in (Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        if value is None and len(options) < len(args):
            return None
        if len(options) == 1:
            return convert(options[0], value, where)
        wrong = []   # several types (a number or "auto", say): the first that takes it
        for option in options:
            try:
                return convert(option, value, where)
            except ConfigError as e:
                wrong.append(str(e).removeprefix(f"{where}: ").removesuffix(f", not {value!r}"))
        raise ConfigError(f"{where}: {' or '.join(wrong)}, not {value!r}")
    if origin is Literal:
        if value not in args:
            names = ", ".join(map(str, args))
            raise ConfigError(f"{where}: one of {names}, not {value!r}"
                              f"{near(str(value), list(map(str, args)))}")
        return value
    if origin is list:
        if not isinstance(value, list):
            raise ConfigError(f"{where}: expected a list, not {value!r}")
        return [convert(args[0], v, where) for v in value] if args else list(value)
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected a mapping, found {type(value).__name__}")
        key_t, val_t = args or (Any, Any)
        if typing.get_origin(key_t) is Literal:
            check_keys(value, typing.get_args(key_t), where)
        return {k: convert(val_t, v, join(where, k)) for k, v in value.items()}
    if dataclasses.is_dataclass(tp):
        return check(tp, value, where)
    return _scalar(tp, value, where)


def _scalar(tp: Any, value: Any, where: str) -> Any:
    if tp is Any:
        return value
    if tp is bool:
        ok = isinstance(value, bool)
    elif tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif tp is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif tp is str:
        ok = isinstance(value, str)
    else:
        raise TypeError(f"compsuite.schema: unsupported type {tp!r} at {where}")
    if not ok:
        what = {bool: "true or false", int: "an integer", float: "a number",
                str: "a string"}[tp]
        raise ConfigError(f"{where}: {what}, not {value!r}")
    return value


def keys(schema: type) -> frozenset[str]:
    """The keys a schema reads (its fields' names)."""
    return frozenset(f.name for f in dataclasses.fields(schema))
