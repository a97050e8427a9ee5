"""The deletion guard of common and of the traffic stack: `cdktf destroy <stack>` deletes nothing, and its last lines
say why, while `deletion_protection` is on, or while any EKS cluster (a colour) still runs in common's VPC.

A `terraform_data` that depends on every other resource of common, so a destroy takes it first; its
destroy provisioner fails while protected or in use, and nothing else goes. (Terraform's `prevent_destroy`
would stop the plan too, but its error tells the operator to edit the lifecycle or use `-target`,
which is the wrong way here.) Lifting protection is an in-place update of the guard's input: it runs
nothing. The data itself stays protected by AWS as well: DynamoDB deletion protection, and ECR
refusing to delete a repository that holds images (no force_delete).

The cluster check (tools/hooks/common_guard.py) is a second step of the same provisioner, not a second guard
resource: one resource first on destroy keeps "depends on everything else" a single, tested fact, and the
protection refusal (no AWS call, no Python) answers first. The check runs whatever `deletion_protection`
says: with protection off, a destroy would otherwise take the NAT gateways, routes and Pod Identity roles
from a running colour before failing on the subnets its cluster uses.
"""

from __future__ import annotations

from collections.abc import Sequence

from cdktf import ITerraformDependable
from constructs import Construct

from components.destroy_hook import destroyed_first, python_command
from model.hooks import COMMON_GUARD, GUARD_ENV

# Destroy-time provisioners may only read `self`: the switch and the message travel in the input.
REFUSE_WHILE_PROTECTED = 'if [ "$PROTECTED" = true ]; then printf "%s\\n" "$MESSAGE" >&2; exit 1; fi'
# Then, protected or not, refuse while a cluster runs in common's VPC (its id travels in the input too).
REFUSE_WHILE_IN_USE = python_command(COMMON_GUARD)
GUARD_COMMAND = f"{REFUSE_WHILE_PROTECTED}; {REFUSE_WHILE_IN_USE}"


class DeletionGuard(Construct):
    def __init__(
        self,
        scope: Construct,
        id_: str,
        *,
        stack: str,
        protected: bool,
        keeps: str,
        uses: str,
        vpc_id: str,
        region: str,
        project: str,
        after: Sequence[ITerraformDependable],
    ) -> None:
        """stack: the stack guarded. keeps: what the protection keeps, for the message. uses: what a colour uses of
        the stack, for the message. vpc_id: common's VPC (a reference to it), which no colour's cluster may still run
        in. project: the prefix of the colours' cluster names, to name them. after: every other resource of the
        stack."""
        super().__init__(scope, id_)
        message = (
            f"deletion_protection is on: {stack} keeps {keeps}, so nothing was destroyed. To destroy {stack}: set "
            '"deletion_protection": false in the config (cdktf.json, context.config), run '
            f"`cdktf deploy {stack}`, then `cdktf destroy {stack}` again."
        )
        destroyed_first(
            self,
            "guard",
            # A new key here is an in-place update of the guard's input, which runs nothing.
            input={
                "protected": protected,
                "message": message,
                "vpc_id": vpc_id,
                "region": region,
                "project": project,
                "stack": stack,
                "uses": uses,
            },
            after=after,
            command=GUARD_COMMAND,
            environment={
                "PROTECTED": "${self.input.protected}",
                "MESSAGE": "${self.input.message}",
                GUARD_ENV: "${jsonencode(self.input)}",
            },
        )
