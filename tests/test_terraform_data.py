"""Which Terraform may apply a stack is the stack's to say (`terraform.required_version`, checked by Terraform where it
runs), and a synth runs no Terraform: the project's `terraform_data` resources are components/terraform_data.py's,
not cdktf's DataResource, which runs `terraform version` at every synth, once per resource."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from components.terraform_data import TERRAFORM_DATA
from stacks.base import REQUIRED_TERRAFORM
from tests.support.synth import Synthesized
from tests.support.terraform import run


def test_every_stack_names_the_terraform_it_needs_and_the_readme_says_the_same(
    example_app: Synthesized, project_dir: Path
) -> None:
    required = {stack: example_app.json(stack)["terraform"].get("required_version") for stack in example_app.stacks()}
    assert required == dict.fromkeys(example_app.stacks(), ">= 1.10")  # use_lockfile of the S3 backend: 1.10
    assert REQUIRED_TERRAFORM == ">= 1.10"
    assert f"Terraform {REQUIRED_TERRAFORM}" in (project_dir / "README.md").read_text()


def test_the_terraform_of_this_machine_is_one_the_stacks_accept(project_dir: Path) -> None:
    """What the suite plans and applies with (and what the workflows pin, 1.11.4) meets the stacks' requirement."""
    version = json.loads(run(project_dir, "version", "-json").stdout)
    major, minor, _ = (int(part) for part in version["terraform_version"].split("."))
    assert (major, minor) >= (1, 10), version


def test_the_example_has_terraform_data_with_its_input(example_app: Synthesized) -> None:
    """The override carries the input a provisioner reads through `self.input`: the guards and the hooks."""
    found = {
        stack: sorted(body["//"]["metadata"]["path"].split("/", 1)[1] for body in bodies.values() if "input" in body)
        for stack in example_app.stacks()
        if (bodies := example_app.json(stack)["resource"].get(TERRAFORM_DATA))
    }
    assert found == {
        "common": ["deletion-guard/guard"],
        # The guard of the configured colours, and the target groups' detach hooks (one application: an instance a colour).
        "traffic": ["configured-colours/guard", "deletion-guard/guard", "sample-app/detach"],
        **{colour: ["eks/orphaned-logs", "teardown/hook"] for colour in example_app.colours()},
    }


def test_no_module_builds_cdktfs_data_resource(project_dir: Path) -> None:
    """cdktf.DataResource adds a validation that runs `terraform version` in a shell for each resource at each synth
    (~200 processes in one `make test`), checking the synthesizing machine rather than the applying one."""
    users = []
    for path in sorted(p for folder in ("components", "stacks") for p in (project_dir / folder).rglob("*.py")):
        tree = ast.parse(path.read_text())
        names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
        names |= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
        names |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
        if "DataResource" in names:
            users.append(str(path.relative_to(project_dir)))
    assert users == []


def test_a_terraform_data_has_its_input_or_its_instances_inputs_never_both() -> None:
    from cdktf import TerraformStack, Testing

    from components.terraform_data import TerraformData

    stack = TerraformStack(Testing.app(), "hooks")
    said = "give a terraform_data either its input or its instances' inputs"
    with pytest.raises(ValueError, match=said):
        TerraformData(stack, "neither", provisioners=[])
    with pytest.raises(ValueError, match=said):
        TerraformData(stack, "both", input={"a": 1}, instances={"x": {"a": 1}}, provisioners=[])
