"""Policy documents as JSON files, filled with this deployment's values at synth.

A document is named (`kms_key`: policies/kms_key.json) or, for one kept elsewhere, given by its path (a platform
component's policy lives in its folder, argocd/apps/platform/<name>/policy.json). A file marks each value it needs as
`{{NAME}}` (Terraform's own `${...}` would be read as an interpolation); `render` refuses a document whose
placeholders and values disagree, so a policy can never be written with a placeholder left in or a value silently
unused. A value may be a list (`"Resource": "{{SECRET_ARNS}}"`, a string that is the placeholder alone): the list
takes the string's place. A document written into Terraform's JSON may have its own text escaped first (`escape`:
model/literal.py), so that an IAM policy variable such as `${aws:username}` reaches AWS as written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from model.paths import PROJECT_DIR

_DIR = Path(__file__).parent
_PLACEHOLDER = re.compile(r"\{\{([A-Z][A-Z0-9_]*)\}\}")
# A document of policies/ by its name, or any document by its path.
Document = str | Path
# What fills a placeholder: a string, or a list of them for a placeholder that is a whole string of the document.
Fill = str | Sequence[str]
# What becomes of the document's own strings before they are filled: unchanged, or escaped for Terraform.
Escape = Callable[[str], str]


def _unchanged(text: str) -> str:
    return text


def _path(document: Document) -> Path:
    return document if isinstance(document, Path) else _DIR / f"{document}.json"


def _shown(document: Document) -> str:
    """How messages name a document: its path in the project (policies/kms_key.json), or as given when outside it."""
    path = _path(document).resolve()
    return path.relative_to(PROJECT_DIR).as_posix() if path.is_relative_to(PROJECT_DIR) else str(path)


@cache
def _read(path: Path) -> Any:
    return json.loads(path.read_text())


def _template(document: Document) -> Any:
    return _read(_path(document))


def placeholders(document: Document) -> frozenset[str]:
    """The values a document needs."""
    return frozenset(_PLACEHOLDER.findall(json.dumps(_template(document))))


def render(document: Document, **values: Fill) -> str:
    """The document (`policies/<name>.json`, or the file at a path) with every `{{NAME}}` replaced, as compact JSON."""
    return _render(document, values, _unchanged)


def _render(document: Document, values: Mapping[str, Fill], escape: Escape) -> str:
    wanted = placeholders(document)
    if wanted != set(values):
        raise ValueError(f"{_shown(document)} needs {sorted(wanted)}, was given {sorted(values)}")
    empty = sorted(key for key, value in values.items() if _empty(value))
    if empty:
        raise ValueError(f"{_shown(document)}: {', '.join(empty)} is an empty list (IAM refuses a statement on nothing)")
    return json.dumps(_fill(_template(document), values, escape), separators=(",", ":"))


def render_from(document: Document, available: Mapping[str, Fill], *, escape: Escape = _unchanged) -> str:
    """The document filled with the values it needs, taken from `available` (which may hold more); "" (no document)
    when one of them is an empty list: a statement on no resource would grant nothing, and IAM refuses it. escape:
    applied to each string of the document (keys too) before it is filled, never to the values (default: none)."""
    missing = placeholders(document) - set(available)
    if missing:
        raise ValueError(f"{_shown(document)} needs {sorted(missing)}, which are not available")
    needed = {key: available[key] for key in placeholders(document)}
    if any(_empty(value) for value in needed.values()):
        return ""
    return _render(document, needed, escape)


def _empty(value: Fill) -> bool:
    """A list value with nothing in it: a statement on no resource, which IAM refuses."""
    return not isinstance(value, str) and not value


def _fill(node: Any, values: Mapping[str, Fill], escape: Escape) -> Any:
    if isinstance(node, str):
        whole = _PLACEHOLDER.fullmatch(node)
        if whole and not isinstance(values[whole.group(1)], str):
            return list(values[whole.group(1)])
        return _PLACEHOLDER.sub(lambda m: _text(values[m.group(1)], m.group(1)), escape(node))
    if isinstance(node, list):
        return [_fill(item, values, escape) for item in node]
    if isinstance(node, dict):
        return {escape(key): _fill(item, values, escape) for key, item in node.items()}
    return node


def _text(value: Fill, name: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{{{{{name}}}}} is a list: it must be a whole string of the document, not part of one")
    return value
