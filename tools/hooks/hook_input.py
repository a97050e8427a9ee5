"""What a Terraform destroy or create hook of ours reads first: its own input, which its `local-exec` provisioner hands
over as JSON in an environment variable (`jsonencode(self.input)`: a provisioner may read only its resource), checked
field by field before any AWS call."""

from __future__ import annotations

import json
from dataclasses import fields
from typing import Any, TypeVar

Input = TypeVar("Input")


class HookInputError(Exception):
    """The hook's input lacks what it needs; the message names the variable and what is missing."""


def hook_input(cls: type[Input], text: str, *, variable: str) -> Input:
    """The dataclass cls from the JSON text of `variable`: every field a non-empty value, read as a string."""
    try:
        raw: Any = json.loads(text)
    except ValueError as err:
        raise HookInputError(f"{variable} is not JSON ({err})") from None
    names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
    missing = [name for name in names if not isinstance(raw, dict) or not raw.get(name)]
    if missing:
        raise HookInputError(f"{variable} has no {', '.join(missing)}")
    return cls(**{name: str(raw[name]) for name in names})
