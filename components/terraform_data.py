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
        input: Mapping[str, Any],  # terraform_data's own name for it
        provisioners: Sequence[LocalExecProvisioner],
        depends_on: Sequence[ITerraformDependable] = (),
        lifecycle: TerraformResourceLifecycle | None = None,
    ) -> None:
        """depends_on: default none. lifecycle: default none (its preconditions are checked at every plan)."""
        super().__init__(
            scope,
            id_,
            terraform_resource_type=TERRAFORM_DATA,
            provisioners=list(provisioners) or None,
            depends_on=list(depends_on) or None,
            lifecycle=lifecycle,
        )
        # An override: what a TerraformResource of no generated binding writes (cdktf records it in the stack's metadata).
        self.add_override("input", dict(input))
