"""`terraform_data`, Terraform's built-in resource: a value with a resource's lifecycle, to hang provisioners on.

cdktf's own `DataResource` writes the same block, and adds a construct validation that runs `terraform version` in a
shell at every synth, once per resource (cdktf lib/terraform-data-resource.js: ValidateTerraformVersion(">=1.4")).
That checks the Terraform of the machine that synthesizes, which need not be the one that applies, and costs every
synth a process per resource (~200 in one `make test`). Which Terraform may apply a stack is the stack's own
`terraform.required_version` (stacks/base.py), which Terraform checks itself, where it runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cdktf import ITerraformDependable, LocalExecProvisioner, TerraformResource, TerraformResourceLifecycle
from constructs import Construct

TERRAFORM_DATA = "terraform_data"


class TerraformData(TerraformResource):
    def __init__(
        self,
        scope: Construct,
        id_: str,
        *,
        input: Mapping[str, Any] | None = None,  # terraform_data's own name for it
        instances: Mapping[str, Mapping[str, Any]] | None = None,
        provisioners: Sequence[LocalExecProvisioner],
        depends_on: Sequence[ITerraformDependable] = (),
        lifecycle: TerraformResourceLifecycle | None = None,
    ) -> None:
        """input: the one instance's; or instances: one instance per key with its own input (Terraform's `for_each`).
        Removing a key destroys that instance through the block's provisioners; a removed block's provisioners never
        run (Terraform: "If a resource block with a destroy-time provisioner is removed entirely from the configuration,
        its provisioner configurations are removed along with it"). depends_on: default none. lifecycle: default none
        (its preconditions are checked at every plan)."""
        if (input is None) == (instances is None):
            raise ValueError(f"{id_}: give a terraform_data either its input or its instances' inputs")
        super().__init__(
            scope,
            id_,
            terraform_resource_type=TERRAFORM_DATA,
            provisioners=list(provisioners) or None,
            depends_on=list(depends_on) or None,
            lifecycle=lifecycle,
        )
        # An override: what a TerraformResource of no generated binding writes (cdktf records it in the stack's metadata).
        if instances is not None:
            self.add_override("for_each", {key: dict(value) for key, value in instances.items()})
        self.add_override("input", dict(input) if input is not None else "${each.value}")
