"""Read, validate and write the configuration: `cdktf.json` -> `context.config`, or the JSON file it names (the
project ships `config.json`: the cdktf CLI never parses it, so a mistake there is the app's to report).

`load_config` reports every problem at once, before any stack is built, each naming the key, the
bad value and what is allowed; `write_colour` writes one colour's settings, `write_state` the state setting, the
rest of the file byte for byte; `check_weights` refuses weights the configuration would refuse and `check_state` what
`write_state` would, writing nothing.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from model.config import Config
from model.json_file import JsonFileError, read_json
from model.problems import Loc, Problems, report, shown
from model.rules import check_all

# A config file may name its JSON Schema (config.schema.json) for editors; it is not a setting.
SCHEMA_KEY = "$schema"


class ConfigError(Exception):
    """The configuration has problems; `problems` lists every one."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.problems = tuple(problems)
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"invalid configuration in {source} ({len(problems)} problem(s)):\n{lines}")


def load_config(path: Path = Path("cdktf.json")) -> Config:
    """Read `context.config` of a cdktf.json; a string there names a JSON file beside it."""
    raw = _read_json(path, path.name)
    context = raw.get("context", {}) if isinstance(raw, dict) else raw
    if not isinstance(context, dict):
        raise ConfigError(path.name, [f"context: {shown(context)} is not allowed; use a JSON object"])
    section = context.get("config", {})
    source = f"{path.name} (context.config)"
    if isinstance(section, str):
        source = section
        section = _read_json(path.parent / section, section)
    return _state_beside(config_from_dict(section, source=source), path.parent)


def config_file(path: Path, *, project_dir: Path) -> Config:
    """A configuration in a JSON file of its own (an example, say), as a project in project_dir would load it."""
    return _state_beside(config_from_dict(_read_json(path, path.name), source=path.name), project_dir)


def raw_config_file(path: Path) -> dict[str, Any]:
    """A configuration file's settings as data, without the `$schema` line editors use."""
    raw = _read_json(path, path.name)
    if not isinstance(raw, dict):
        raise ConfigError(path.name, [f"(top level): {shown(raw)} is not allowed; use a JSON object"])
    return {key: value for key, value in raw.items() if key != SCHEMA_KEY}


def _state_beside(config: Config, project_dir: Path) -> Config:
    """Local state lives beside cdktf.json, wherever Terraform itself runs."""
    state_dir = project_dir.absolute() / config.state.directory
    return config.model_copy(update={"state": config.state.model_copy(update={"directory": str(state_dir)})})


def check_weights(path: Path, weights: Mapping[str, int]) -> None:
    """Refuse (ConfigError) these weights where the configuration would (its rules on weights), writing nothing."""
    _with_weights(path, weights)


def _config_section(path: Path) -> tuple[Path, Any, Any, tuple[str, ...]]:
    """(the file that holds the config, its whole content, the config in it, the keys leading there)."""
    raw = _read_json(path, path.name)
    section, target = raw.setdefault("context", {}).setdefault("config", {}), path
    keys: tuple[str, ...] = ("context", "config")
    if isinstance(section, str):
        target, keys = path.parent / section, ()
        raw = section = _read_json(target, section)
    return target, raw, section, keys


def _with_weights(path: Path, weights: Mapping[str, int]) -> tuple[Path, Any]:
    """(the file that holds the config, its whole content with the weights set), validated."""
    target, raw, section, _ = _config_section(path)
    if "clusters" not in section:  # the defaults become explicit, so the weights have somewhere to go
        section["clusters"] = {
            colour: cluster.model_dump(mode="json", exclude_unset=True) for colour, cluster in Config().clusters.items()
        }
    problems = [
        f"clusters.{colour}: no such colour; configured: {', '.join(section['clusters'])}"
        for colour in weights
        if colour not in section["clusters"]
    ]
    if problems:
        raise ConfigError(str(target), problems)
    for colour, weight in weights.items():
        section["clusters"][colour]["weight"] = weight
    config_from_dict(section, source=str(target))
    return target, raw


def write_colour(path: Path, colour: str, settings: Mapping[str, Any]) -> Path:
    """Set keys of `clusters.<colour>` where the config lives (cdktf.json or the file it names) and return that file.
    A mapping is merged into the entry's mapping of that key (`{"nodes": {"release_version": ...}}` keeps the other
    node settings). The result is validated first and replaces the file atomically; only the colour's entry is
    written anew (two-space JSON, at its place and indentation): every other byte of the file stays as it was."""
    target, _, section, keys = _config_section(path)
    clusters = section.get("clusters") if isinstance(section, Mapping) else None
    if not isinstance(clusters, dict) or not isinstance(clusters.get(colour), dict):
        named = ", ".join(clusters) if isinstance(clusters, dict) else "none (the defaults apply: name the colour first)"
        raise ConfigError(str(target), [f"clusters.{colour}: no such colour in {target.name}; configured: {named}"])
    entry = clusters[colour]
    for key, value in settings.items():
        entry[key] = {**entry.get(key, {}), **value} if isinstance(value, Mapping) else value
    config_from_dict(section, source=str(target))
    text = target.read_text()
    _replace_atomically(target, text, _value_span(text, (*keys, "clusters", colour)), entry)
    return target


def write_state(path: Path, state: Mapping[str, Any]) -> Path:
    """Set the `state` setting where the config lives (cdktf.json or the file it names) and return that file: the
    whole setting is replaced (a local `directory` left beside an s3 backend would only mislead). Validated first,
    written atomically; every other byte of the file stays as it was, and a config without `state` gets it as its
    last setting."""
    target, section, keys, had = _with_state(path, state)
    text = target.read_text()
    if had:
        _replace_atomically(target, text, _value_span(text, (*keys, "state")), section["state"])
        return target
    start, end = _value_span(text, keys)  # the config object: `"state": ...` goes before its closing brace
    last = end - 1
    while text[last - 1] in " \t\n\r":
        last -= 1
    indent = _indent_at(text, _skip(text, start + 1)) or "  "
    value = json.dumps(section["state"], indent=2, ensure_ascii=False).replace("\n", "\n" + indent)
    comma = "," if text[last - 1] != "{" else ""
    _write_atomically(target, f'{text[:last]}{comma}\n{indent}"state": {value}{text[last:]}')
    return target


def check_state(path: Path, state: Mapping[str, Any]) -> None:
    """Refuse (ConfigError) what `write_state` would refuse, writing nothing."""
    _with_state(path, state)


def _with_state(path: Path, state: Mapping[str, Any]) -> tuple[Path, dict[str, Any], tuple[str, ...], bool]:
    """(the file that holds the config, the config with `state` set, the keys leading there, whether it had a `state`
    before), validated."""
    target, _, section, keys = _config_section(path)
    if not isinstance(section, dict):
        raise ConfigError(str(target), [f"(top level): {shown(section)} is not allowed; use a JSON object"])
    had = "state" in section
    section["state"] = dict(state)
    config_from_dict(section, source=str(target))
    return target, section, keys, had


def _replace_atomically(target: Path, text: str, span: tuple[int, int], value: Any) -> None:
    """Write value (two-space JSON, at its place and indentation) over span of text, the rest byte for byte."""
    start, end = span
    indent = _indent_at(text, start)
    _write_atomically(
        target, text[:start] + json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + indent) + text[end:]
    )


def _indent_at(text: str, at: int) -> str:
    """The spaces and tabs that open the line holding position `at`."""
    line = text[text.rfind("\n", 0, at) + 1 : at]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _write_atomically(target: Path, text: str) -> None:
    scratch = target.with_name(f".{target.name}.tmp")
    scratch.write_text(text)
    scratch.replace(target)


_DECODER = json.JSONDecoder()


def _value_span(text: str, keys: tuple[str, ...]) -> tuple[int, int]:
    """Where the value at keys (object keys from the top) starts and ends in a JSON text read before (valid, no
    duplicate key, every key present), so that it alone can be written anew."""
    at = _skip(text, 0)
    for key in keys:
        at = _skip(text, at + 1)  # past the object's "{"
        while True:
            name, at = _DECODER.raw_decode(text, at)
            at = _skip(text, _skip(text, at) + 1)  # past ":"
            if name == key:
                break
            _, at = _DECODER.raw_decode(text, at)
            at = _skip(text, _skip(text, at) + 1)  # past ","
    _, end = _DECODER.raw_decode(text, at)
    return at, end


def _skip(text: str, at: int) -> int:
    """The first position from `at` on that holds no JSON whitespace."""
    while at < len(text) and text[at] in " \t\n\r":
        at += 1
    return at


def config_from_dict(raw: Any, *, source: str = "config") -> Config:
    """Parse and validate; raise ConfigError listing every problem."""
    problems = Problems()
    if not isinstance(raw, Mapping):
        problems.add("(top level)", raw, "use a JSON object")
        raise ConfigError(source, problems.lines(Config, raw))
    settings = {key: value for key, value in raw.items() if key != SCHEMA_KEY}
    config = _one_protection_switch(_parse(settings, problems), settings, problems)
    # A bad project name is reported once, not again through every name derived from it.
    config = _fill_derived(config, config.project if not problems.is_bad("project") else Config().project)
    check_all(config, problems)
    if problems:
        raise ConfigError(source, problems.lines(Config, settings))
    return config


def _parse(raw: Mapping[str, Any], problems: Problems) -> Config:
    """The models' verdict on raw: every refused setting is reported, then left out so that it keeps its
    default and the rules still judge everything else."""
    remaining = copy.deepcopy(dict(raw))
    for _ in range(3):  # a setting left out takes its default, which the models accept: one retry suffices
        try:
            # JSON semantics, strictly: a JSON array is a list setting, `true` is no integer, "1" no number.
            return Config.model_validate_json(json.dumps(remaining), strict=True)
        except ValidationError as err:
            for loc in report(err, Config, problems):
                _leave_out(remaining, loc)
    raise AssertionError("defaults refused by the models")  # unreachable while every default is valid


def _leave_out(raw: MutableMapping[str, Any], loc: Loc) -> None:
    """Remove the setting at loc; a bad list item takes its whole list with it."""
    while loc and isinstance(loc[-1], int):
        loc = loc[:-1]
    parent: Any = raw
    for part in loc[:-1]:
        parent = parent.get(part) if isinstance(parent, MutableMapping) else None
    if isinstance(parent, MutableMapping):
        parent.pop(loc[-1], None)


def _read_json(path: Path, source: str) -> Any:
    try:
        return read_json(path)
    except JsonFileError as err:
        raise ConfigError(source, [f"{path}: {err}"]) from None


def _one_protection_switch(config: Config, raw: Mapping[str, Any], problems: Problems) -> Config:
    """`deletion_protection` and its former spelling `table.deletion_protection` are one switch: set in either
    place it holds for both the table and the image repository; set in both, they must agree."""
    top = "deletion_protection" in raw
    table = raw.get("table")
    old = isinstance(table, Mapping) and "deletion_protection" in table
    if top and old and config.deletion_protection != config.table.deletion_protection:
        problems.add(
            "table.deletion_protection",
            config.table.deletion_protection,
            f"it is the former name of deletion_protection, which is {json.dumps(config.deletion_protection)}: "
            "keep one of the two",
        )
    value = config.table.deletion_protection if old and not top else config.deletion_protection
    table_config = config.table.model_copy(update={"deletion_protection": value})
    return config.model_copy(update={"deletion_protection": value, "table": table_config})


def _fill_derived(config: Config, project: str) -> Config:
    """Defaults that depend on the project name, so two projects in one account do not collide."""
    return config.model_copy(
        update={
            "table": config.table.model_copy(update={"name": config.table.name or f"{project}-users"}),
            "state": config.state.model_copy(
                update={"region": config.state.region or config.region, "key_prefix": config.state.key_prefix or project}
            ),
        }
    )
