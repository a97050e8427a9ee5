"""`terraform validate` of every synthesized stack against the real hashicorp/aws 5.100.0 schema
(from the filesystem mirror when there is one). The colours go without their helm/kubernetes
parts, whose providers cannot be installed here (tests/test_values_chain.py renders those).

All stacks are validated in one Terraform run, as modules of one throwaway root
(tests/support/background_checks.py builds it and runs Terraform while the rest of the suite runs).
"""

from __future__ import annotations

import json
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from tests.support.background_checks import VALIDATED_VARIANT_COLOUR
from tests.support.configs import EXAMPLE_COLOURS
from tests.support.terraform import provider_versions

# Terraform runs in the background from the session's start (tests/support/background_checks.py).
pytestmark = [pytest.mark.background("terraform_validation")]


@pytest.fixture(scope="module")
def validated(terraform_validation: Future[tuple[Path, dict[str, Any]]]) -> tuple[Path, dict[str, Any]]:
    return terraform_validation.result()


def test_every_stack_is_valid_terraform_for_aws_5_100(validated: tuple[Path, dict[str, Any]]) -> None:
    _, result = validated
    assert result["valid"] is True, result["diagnostics"]
    assert result["warning_count"] == 0, result["diagnostics"]


def test_validation_used_the_pinned_provider(validated: tuple[Path, dict[str, Any]]) -> None:
    (source, version), *others = provider_versions(validated[0]).items()
    assert (source.endswith("/hashicorp/aws"), version, others) == (True, "5.100.0", [])


def test_every_stack_was_part_of_the_validation(validated: tuple[Path, dict[str, Any]]) -> None:
    """A module Terraform did not load would validate nothing."""
    loaded = json.loads((validated[0] / ".terraform" / "modules" / "modules.json").read_text())["Modules"]
    expected = ["common", "common_with_build", *EXAMPLE_COLOURS, VALIDATED_VARIANT_COLOUR]
    assert sorted(m["Key"] for m in loaded if m["Key"]) == sorted(expected)
