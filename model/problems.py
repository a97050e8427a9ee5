"""Turn raw JSON into frozen dataclasses, collecting every type problem on the way.

Kept apart from the config's own rules (model/config.py) so that adding a key is adding a
typed field: unknown keys, wrong types and bad choices are reported here for every field,
each naming the dotted key, the value and what is allowed.
"""

from __future__ import annotations

import dataclasses
import json
import types
from collections.abc import Mapping
from typing import Any, Literal, TypeVar, get_args, get_origin, get_type_hints

T = TypeVar("T")

_KIND_NAMES = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}
_NOUNS = {bool: "boolean", int: "integer", float: "number", str: "string"}


class Problems:
    """Every problem found in one configuration, in the order found."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._bad_keys: set[str] = set()

    def add(self, key: str, value: Any, allowed: str) -> None:
        self.lines.append(f"{key}: {json.dumps(value, default=str)} is not allowed; {allowed}")
        self._bad_keys.add(key)

    def is_bad(self, key: str) -> bool:
        """True when `key` already failed, so later rules do not report it twice."""
        return key in self._bad_keys


def reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`json` keeps the last of two equal keys; a config must not silently drop one."""
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"duplicate key {key!r} in one object")
        seen[key] = value
    return seen


def parse(cls: type[T], raw: Any, key: str, problems: Problems) -> T:
    """Build `cls` from `raw`; a bad field is reported and keeps its default."""
    if not isinstance(raw, Mapping):
        problems.add(key or "(top level)", raw, "use a JSON object")
        return cls()
    hints = get_type_hints(cls)
    fields = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    for unknown in sorted(set(raw) - fields):
        problems.add(_join(key, unknown), raw[unknown], f"unknown key; allowed keys: {', '.join(sorted(fields))}")
    values = {}
    for name in fields & set(raw):
        parsed = _parse_value(hints[name], raw[name], _join(key, name), problems)
        if parsed is not _INVALID:
            values[name] = parsed
    return cls(**values)


_INVALID = object()


def _parse_value(hint: Any, raw: Any, key: str, problems: Problems) -> Any:
    origin, args = get_origin(hint), get_args(hint)
    if dataclasses.is_dataclass(hint):
        return parse(hint, raw, key, problems)  # type: ignore[arg-type]
    if origin is Literal:
        if raw in args and type(raw) is type(args[0]):
            return raw
        problems.add(key, raw, "use one of " + ", ".join(json.dumps(a) for a in args))
        return _INVALID
    if origin is tuple:
        if isinstance(raw, list) and all(_is_kind(item, args[0]) for item in raw):
            return tuple(raw)
        problems.add(key, raw, f"use a list of {_describe(args[0])}s")
        return _INVALID
    if origin is Mapping:
        if not isinstance(raw, Mapping):
            problems.add(key, raw, f"use a JSON object of {_describe(args[1])} values")
            return _INVALID
        parsed = {name: _parse_value(args[1], item, _join(key, name), problems) for name, item in raw.items()}
        return types.MappingProxyType({name: item for name, item in parsed.items() if item is not _INVALID})
    if _is_kind(raw, hint):
        return float(raw) if hint is float else raw
    problems.add(key, raw, f"use {_KIND_NAMES[hint]}")
    return _INVALID


def _is_kind(value: Any, kind: type) -> bool:
    # bool is a subclass of int in Python, but `"weight": true` is a mistake, not 1.
    if isinstance(value, bool):
        return kind is bool
    # JSON has one number type: a float setting may be written 1 as well as 1.0.
    return isinstance(value, (int, float)) if kind is float else isinstance(value, kind)


def _describe(hint: Any) -> str:
    return "object" if dataclasses.is_dataclass(hint) else _NOUNS[hint]


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name
