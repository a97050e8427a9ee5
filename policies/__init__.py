"""Policy documents as JSON files, filled with this deployment's values at synth.

A file marks each value it needs as `{{NAME}}` (Terraform's own `${...}` would be read as an
interpolation); `render` refuses a document whose placeholders and values disagree, so a
policy can never be written with a placeholder left in or a value silently unused.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

_DIR = Path(__file__).parent
_PLACEHOLDER = re.compile(r"\{\{([A-Z][A-Z0-9_]*)\}\}")


@cache
def _template(name: str) -> Any:
    return json.loads((_DIR / f"{name}.json").read_text())


def placeholders(name: str) -> frozenset[str]:
    """The values a document needs."""
    return frozenset(_PLACEHOLDER.findall(json.dumps(_template(name))))


def render(name: str, **values: str) -> str:
    """The document `policies/<name>.json` with every `{{NAME}}` replaced, as compact JSON."""
    wanted = placeholders(name)
    if wanted != set(values):
        raise ValueError(f"policies/{name}.json needs {sorted(wanted)}, was given {sorted(values)}")
    return json.dumps(_fill(_template(name), values), separators=(",", ":"))


def render_from(name: str, available: Mapping[str, str]) -> str:
    """The document filled with the values it needs, taken from `available` (which may hold more)."""
    missing = placeholders(name) - set(available)
    if missing:
        raise ValueError(f"policies/{name}.json needs {sorted(missing)}, which are not available")
    return render(name, **{key: available[key] for key in placeholders(name)})


def render_file(path: Path, available: Mapping[str, str]) -> str:
    """A document anywhere in the project (a component's or an application's), filled like `render_from`."""
    template = json.loads(path.read_text())
    wanted = frozenset(_PLACEHOLDER.findall(json.dumps(template)))
    if missing := wanted - set(available):
        raise ValueError(f"{path} needs {sorted(missing)}, which are not available")
    return json.dumps(_fill(template, {key: available[key] for key in wanted}), separators=(",", ":"))


def _fill(node: Any, values: dict[str, str]) -> Any:
    if isinstance(node, str):
        return _PLACEHOLDER.sub(lambda m: values[m.group(1)], node)
    if isinstance(node, list):
        return [_fill(item, values) for item in node]
    if isinstance(node, dict):
        return {key: _fill(item, values) for key, item in node.items()}
    return node
