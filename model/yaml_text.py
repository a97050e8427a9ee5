"""The project's own YAML files (the component registry's entries, the EKS calendar) parsed by libyaml, PyYAML's C
parser, when PyYAML was built with it (its wheels are): the same safe types as yaml.safe_load (CSafeLoader builds them
with the same SafeConstructor), about ten times faster. Every operator command reads these files as it starts
(model/config/ validates a release against them), and the pure-Python parser was ~50 ms of that start.
"""

from __future__ import annotations

from typing import Any

import yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # without libyaml: the same result, slower


def parse(text: str) -> Any:
    """One YAML document, as yaml.safe_load reads it."""
    return yaml.load(text, Loader=_LOADER)  # a safe loader: CSafeLoader or SafeLoader, never yaml.Loader
