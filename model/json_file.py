"""Read a JSON file an operator wrote (cdktf.json, the configuration it names), saying what is wrong in the project's
words: never Python's advice (`decode using utf-8-sig`, `sys.set_int_max_str_digits()`) nor a traceback.

No import beyond the standard library: `make synth` checks cdktf.json with it before the cdktf CLI runs
(scripts/cdktf_json.py).
"""

from __future__ import annotations

import codecs
import json
import re
import sys
from pathlib import Path
from typing import Any

# Deeper than any setting nests, an application's Helm values included (`applications.<name>.values`): Python's
# parser gives up near 1,000 levels (RecursionError), and a copy of the settings well before.
MAX_DEPTH = 64
# A string as a whole (escapes included), or one bracket: the brackets outside strings give the depth.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)


class JsonFileError(ValueError):
    """What is wrong with a JSON file, without its name (the caller says which file)."""


class DuplicateKeyError(ValueError):
    """An object names one key twice."""


def reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`json` keeps the last of two equal keys; a config must not silently drop one."""
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise DuplicateKeyError(f"duplicate key {key!r} in one object")
        seen[key] = value
    return seen


def read_json(path: Path) -> Any:
    """The file's JSON value; JsonFileError saying what is wrong (missing, a directory, unreadable, no UTF-8, a byte
    order mark, a syntax error with its line and column, a key twice in one object, too deep, a number too long)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise JsonFileError("file not found") from None
    except IsADirectoryError:
        raise JsonFileError("is a directory, not a file: name a JSON file") from None
    except OSError as err:  # a symlink loop, a permission
        raise JsonFileError(f"cannot be read ({err.strerror or err}): name a readable JSON file") from None
    if data.startswith(codecs.BOM_UTF8):
        raise JsonFileError("starts with a byte order mark (BOM): save it as UTF-8 without one")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise JsonFileError(f"is not UTF-8 text (byte {data[err.start]:#04x} at offset {err.start}): save it as UTF-8") from None
    _refuse_deep(text)
    try:
        return json.loads(text, object_pairs_hook=reject_duplicate_keys)
    except json.JSONDecodeError as err:  # where the mistake is, as an editor counts: line and column from 1
        raise JsonFileError(f"not valid JSON: line {err.lineno} column {err.colno}: {err.msg}") from None
    except DuplicateKeyError as err:
        raise JsonFileError(f"not valid JSON: {err}") from None
    except ValueError:  # the only other: an integer longer than Python converts (sys.get_int_max_str_digits)
        raise JsonFileError(_long_number(text)) from None


def _refuse_deep(text: str) -> None:
    depth = 0
    for token in _TOKEN.finditer(text):
        bracket = token.group()
        if bracket in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise JsonFileError(
                    f"{_place(text, token.start())}: nested more than {MAX_DEPTH} levels deep: no setting takes that; "
                    f"use at most {MAX_DEPTH}"
                )
        elif bracket in "]}":
            depth -= 1


def _long_number(text: str) -> str:
    limit = sys.get_int_max_str_digits()
    found = re.search(rf"\d{{{limit + 1},}}", text)
    where = f"{_place(text, found.start())}: " if found else ""
    digits = f"a number of {len(found.group())} digits" if found else f"a number of more than {limit} digits"
    return f"not valid JSON: {where}{digits}: no setting takes one; use a number of at most {limit} digits"


def _place(text: str, at: int) -> str:
    line = text.count("\n", 0, at) + 1
    return f"line {line} column {at - (text.rfind(chr(10), 0, at) + 1) + 1}"
