"""What synth says of a configuration it refuses: the config tests assert these messages whole."""

from __future__ import annotations

from typing import Any

import pytest

from model.loading import ConfigError
from tests.support.configs import validated


def problems_of(raw: Any) -> tuple[str, ...]:
    """Every problem synth reports for raw (with the operators' network unless it says otherwise); it must refuse it."""
    with pytest.raises(ConfigError) as caught:
        validated(raw)
    return caught.value.problems


def one_problem(raw: Any) -> str:
    """The one problem synth reports for raw."""
    problems = problems_of(raw)
    assert len(problems) == 1, problems
    return problems[0]
