"""`terraform validate` of every synthesized stack against the real hashicorp/aws 5.100.0 schema
(from the filesystem mirror when there is one). The colours go without their helm/kubernetes
parts, whose providers cannot be installed here (tests/test_values_chain.py renders those).

All stacks are validated in one Terraform run, as modules of one throwaway root: the aws
provider's schema is loaded once instead of once per stack.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stacks.config import config_from_dict
from tests.samples import WITH_IMAGE_BUILD
from tests.synth import Synthesized, synthesize
from tests.terraform import aws_part, init_and_validate, provider_versions

pytestmark = pytest.mark.slow

# Only the in-cluster part goes: Argo CD, the App of Apps and the argocd namespace.
IN_CLUSTER = ["helm_release", "helm_release", "kubernetes_namespace_v1"]


@pytest.fixture(scope="module")
def with_build(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    return synthesize(config_from_dict(WITH_IMAGE_BUILD), tmp_path_factory.mktemp("tf-build"))


@pytest.fixture(scope="module")
def validated(
    default_app: Synthesized, with_build: Synthesized, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, Any]]:
    """One root module holding every stack as a module; validated once."""
    root = tmp_path_factory.mktemp("validate")
    modules = {"common": default_app.json("common"), "common_with_build": with_build.json("common")}
    for colour in ("blue", "green"):
        document, removed = aws_part(default_app.json(colour))
        assert sorted(r.split(".")[0] for r in removed) == IN_CLUSTER
        modules[colour] = document
    for name, document in modules.items():
        del document["terraform"]["backend"]  # validation needs no state; a module may not have a backend
        (root / name).mkdir()
        (root / name / "cdk.tf.json").write_text(json.dumps(document))
    (root / "main.tf.json").write_text(json.dumps({"module": {name: {"source": f"./{name}"} for name in modules}}))
    return root, init_and_validate(root)


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
    assert sorted(m["Key"] for m in loaded if m["Key"]) == ["blue", "common", "common_with_build", "green"]
