"""Every problem of one configuration, each naming the dotted key, the value and what is allowed.

pydantic finds the problems the models describe (types, ranges, choices, patterns, unknown keys);
this module words them the project's way, and orders all of them, the config's own rules
included, as the models list their fields, colours in the order the file names them.
"""

from __future__ import annotations

import json
import math
import re
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, Tag, ValidationError

from model.migrations.retired_settings import RETIRED  # settings of earlier releases: model/migrations/

_KINDS = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}
_NOUNS = {bool: "boolean", int: "integer", float: "number", str: "string"}
_SEGMENT = re.compile(r"\[(\d+)\]|\.?([^.\[]+)")
Loc = tuple[str | int, ...]
# What a refusal shows of a key or a value: enough to recognise it, never a whole file pasted into one setting. A
# string (or a number) shows its first ECHO_LIMIT characters, a list or an object the first ten times that of its JSON.
ECHO_LIMIT = 100
# The key a setting of several kinds names its kind with (`argocd.sso.kind`): each kind is a model of its own fields, an
# arm of a tagged union (`Annotated[Model, Tag(kind)]`), and pydantic places an arm's problems under its tag
# (`argocd.sso.github.orgs`), which the messages leave out. An unknown kind is the error UNKNOWN_KIND.
TAG_KEY = "kind"
UNKNOWN_KIND = "union_tag"


@dataclass(frozen=True)
class Allowed:
    """What a setting allows, in words: the message when its value breaks a range, pattern or choice.

    Kept beside the constraint it explains (`Annotated[int, Field(ge=0), Allowed("use 0 or more")]`);
    a wrong type is worded from the type itself ("use an integer")."""

    text: str


class Problems:
    """Every problem found in one configuration."""

    def __init__(self) -> None:
        self._found: list[tuple[str, str]] = []

    def add(self, key: str, value: Any, allowed: str) -> None:
        self._found.append((key, f"{capped(key, 2 * ECHO_LIMIT)}: {shown(value)} is not allowed; {allowed}"))

    def is_bad(self, key: str) -> bool:
        """True when `key` already failed, so later rules do not report it twice."""
        return any(found == key for found, _ in self._found)

    def lines(self, root: type[BaseModel], raw: Any) -> list[str]:
        """The problems in the order of the settings they name (see `_position`)."""
        return [line for key, line in sorted(self._found, key=lambda found: _position(root, raw, found[0]))]

    def __bool__(self) -> bool:
        return bool(self._found)


def shown(value: Any) -> str:
    """value as JSON, as a refusal shows it: capped (ECHO_LIMIT)."""
    if isinstance(value, Mapping | list | tuple):
        return capped(json.dumps(_short(value), default=str), 10 * ECHO_LIMIT)
    if isinstance(value, str):
        return json.dumps(capped(value))
    return capped(json.dumps(value, default=str))


def _short(value: Any) -> Any:
    """value with each string in it (keys too) capped."""
    if isinstance(value, str):
        return capped(value)
    if isinstance(value, Mapping):
        return {capped(str(key)): _short(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_short(item) for item in value]
    return value


def capped(text: str, limit: int = ECHO_LIMIT) -> str:
    """text, or its first `limit` characters and how long it is."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def report(error: ValidationError, root: type[BaseModel], problems: Problems) -> list[Loc]:
    """Add each of pydantic's errors in the project's words; return where they are, so the caller can
    drop those settings (they keep their defaults) and still run the rules over everything else."""
    places = []
    for item in error.errors(include_url=False):
        tagged: Loc = item["loc"]
        value: Any = item["input"]
        if item["type"] == UNKNOWN_KIND:  # said of the kind's own key, as a refused choice
            tagged = (*tagged, TAG_KEY)
            value = value.get(TAG_KEY) if isinstance(value, Mapping) else value
        allowed = _allowed(item["type"], root, tagged, item["msg"])
        loc = _untagged(root, tagged)
        if loc[-1:] == ("[key]",):  # a mapping key is refused: the key is the bad value, and its place
            loc = loc[:-1]
            value = loc[-1]
        problems.add(dotted(loc), value, allowed)
        places.append(loc)
    return places


def dotted(loc: Loc) -> str:
    """('clusters', 'blue', 'weight') -> 'clusters.blue.weight'; list items as `key[i]`."""
    key = ""
    for part in loc:
        key += f"[{part}]" if isinstance(part, int) else f".{part}" if key else part
    return key


def _retired(loc: Loc) -> str | None:
    """What to do instead of a setting an earlier release had (model/migrations/retired_settings.py)."""
    key = dotted(loc)
    for pattern, moved in RETIRED.items():
        if re.fullmatch(re.escape(pattern).replace(r"\*", "[^.]+"), key):
            return moved
    return None


def _allowed(kind: str, root: type[BaseModel], loc: Loc, message: str) -> str:
    if kind == "extra_forbidden":
        if moved := _retired(loc):
            return moved
        parent = _annotation_at(root, loc[:-1])[0]
        if other_kinds := _kinds_with(root, loc):
            where = dotted(_untagged(root, loc[:-2]))
            return (
                f"a field of kind {' or '.join(other_kinds)}, and {where}.{TAG_KEY} is {loc[-2]}: remove it, or set the kind "
                "it belongs to"
            )
        fields = sorted(parent.model_fields) if _is_model(parent) else []
        return f"unknown key; allowed keys: {', '.join(fields)}"
    hint, allowed = _annotation_at(root, loc)
    if kind.endswith(("_type", "_parsing")) or kind == "int_from_float":
        return f"use {_describe(hint)}"
    if allowed:
        return allowed
    if get_origin(hint) is Literal:
        return "use one of " + ", ".join(json.dumps(choice) for choice in get_args(hint))
    return message[0].lower() + message[1:]  # pydantic's own words, for a constraint without an Allowed


def _kinds(hint: Any) -> dict[str, type[BaseModel]]:
    """A tagged union's models by kind (its `Annotated[Model, Tag(kind)]` arms); {} for any other type."""
    if get_origin(hint) not in (Union, types.UnionType):
        return {}
    arms = {}
    for arm in get_args(hint):
        if get_origin(arm) is Annotated:
            model, *metadata = get_args(arm)
            tag = next((m.tag for m in metadata if isinstance(m, Tag)), None)
            if tag is not None and _is_model(model):
                arms[tag] = model
    return arms


def _arm(hint: Any, part: str | int) -> Any:
    """Where loc goes on from a tagged union: the arm named by the tag, else the first arm with the field part (the
    untagged key of a message), else the first arm; any other type is itself."""
    arms = _kinds(hint)
    if not arms:
        return hint
    if part in arms:
        return arms[str(part)]
    return next((model for model in arms.values() if part in model.model_fields), next(iter(arms.values())))


def _untagged(root: type[BaseModel], loc: Loc) -> Loc:
    """loc without the tags pydantic puts after a tagged union (`argocd.sso.github.orgs` -> `argocd.sso.orgs`)."""
    hint: Any = root
    kept: list[str | int] = []
    for part in loc:
        hint = _unwrap(hint, "")[0]
        if part in _kinds(hint):
            hint = _arm(hint, part)
            continue
        hint = _arm(hint, part)
        kept.append(part)
        if _is_model(hint) and isinstance(part, str) and part in hint.model_fields:
            hint = hint.model_fields[part].annotation
        elif get_origin(hint) in (tuple, Mapping):
            hint = get_args(hint)[-1]
        else:
            hint = None
    return tuple(kept)


def _kinds_with(root: type[BaseModel], loc: Loc) -> list[str]:
    """The other kinds that have the field loc refuses, when loc is a field of one kind of a tagged union."""
    if len(loc) < 2:
        return []
    arms = _kinds(_annotation_at(root, loc[:-2])[0])
    if loc[-2] not in arms:
        return []
    return [kind for kind, model in arms.items() if kind != loc[-2] and loc[-1] in model.model_fields]


def _annotation_at(root: type[BaseModel], loc: Loc) -> tuple[Any, str]:
    """The type found at loc, and the Allowed text nearest to it (the field's, or its item type's)."""
    hint: Any = root
    allowed = ""
    for part, after in zip(loc, (*loc[1:], None), strict=False):
        if part == "[key]":
            continue  # pydantic's marker after a refused mapping key, taken care of below
        if part in _kinds(hint):
            hint = _arm(hint, part)
            continue
        hint = _arm(hint, part)
        if _is_model(hint) and isinstance(part, str) and part in hint.model_fields:
            field = hint.model_fields[part]
            hint, allowed = field.annotation, _allowed_text(field.metadata) or ""
        elif get_origin(hint) is tuple:
            hint = get_args(hint)[0]
        elif get_origin(hint) is Mapping:  # an entry: its key's type when the key is refused, else its value's
            hint = get_args(hint)[0 if after == "[key]" else 1]
        hint, allowed = _unwrap(hint, allowed)
    return hint, allowed


def _unwrap(hint: Any, allowed: str) -> tuple[Any, str]:
    """The type under its metadata (and under `| None`: an optional setting is judged as its type)."""
    while True:
        if get_origin(hint) is Annotated:
            hint, *metadata = get_args(hint)
            allowed = _allowed_text(metadata) or allowed
        elif get_origin(hint) in (Union, types.UnionType) and type(None) in get_args(hint):
            hint = next(arm for arm in get_args(hint) if arm is not type(None))
        else:
            return hint, allowed


def _allowed_text(metadata: list[Any]) -> str | None:
    return next((m.text for m in metadata if isinstance(m, Allowed)), None)


def _describe(hint: Any) -> str:
    hint = _unwrap(hint, "")[0]
    if _is_model(hint):
        return "a JSON object"
    if get_origin(hint) is tuple:
        return f"a list of {_noun(get_args(hint)[0])}s"
    if get_origin(hint) is Mapping:
        return f"a JSON object of {_noun(get_args(hint)[1])} values"
    if get_origin(hint) is Literal:
        return "one of " + ", ".join(json.dumps(choice) for choice in get_args(hint))
    return _KINDS.get(hint, "a valid value")


def _noun(hint: Any) -> str:
    hint = _unwrap(hint, "")[0]
    if get_origin(hint) is Literal:
        hint = type(get_args(hint)[0])
    return "object" if _is_model(hint) else _NOUNS.get(hint, "value")


def _is_model(hint: Any) -> bool:
    return isinstance(hint, type) and issubclass(hint, BaseModel)


def _position(root: type[BaseModel], raw: Any, key: str) -> tuple[float, ...]:
    """Sort key of a dotted key: each section's fields in the models' order (unknown keys first),
    mapping entries (colours, tags) in the file's order, list items by index; `*` after them all."""
    hint: Any = root
    position: list[float] = []
    for index, name in _SEGMENT.findall(key):
        hint = _arm(_unwrap(hint, "")[0], name)
        if index:
            position.append(int(index))
            hint = get_args(hint)[0] if get_origin(hint) is tuple else None
        elif _is_model(hint):
            fields = list(hint.model_fields)
            position.append(fields.index(name) if name in fields else -1)
            hint = hint.model_fields[name].annotation if name in fields else None
        elif get_origin(hint) is Mapping:
            names = list(raw) if isinstance(raw, Mapping) else []
            position.append(names.index(name) if name in names else math.inf)
            hint = get_args(hint)[1]
        else:
            position.append(math.inf)
        raw = raw.get(name) if isinstance(raw, Mapping) and not index else None
    return tuple(position)


def frozen_mapping(value: Mapping[str, Any]) -> Mapping[str, Any]:
    """A mapping setting cannot be changed after validation, like every other setting."""
    return types.MappingProxyType(dict(value))
