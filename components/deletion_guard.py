"""common's deletion guard: while `deletion_protection` is on, `cdktf destroy common` deletes nothing and
its last lines say why and how to lift it.

A `terraform_data` that depends on every other resource of common, so a destroy takes it first; its
destroy provisioner fails while protected, and nothing else goes. (Terraform's `prevent_destroy`
would stop the plan too, but its error tells the operator to edit the lifecycle or use `-target`,
which is the wrong way here.) Lifting protection is an in-place update of the guard's input: it runs
nothing. The data itself stays protected by AWS as well: DynamoDB deletion protection, and ECR
refusing to delete a repository that holds images (no force_delete).
"""

from __future__ import annotations

from collections.abc import Sequence

from cdktf import ITerraformDependable
from constructs import Construct

from components.destroy_hook import destroyed_first

# Destroy-time provisioners may only read `self`: the switch and the message travel in the input.
REFUSE_WHILE_PROTECTED = 'if [ "$PROTECTED" = true ]; then printf "%s\\n" "$MESSAGE" >&2; exit 1; fi'


class DeletionGuard(Construct):
    def __init__(self, scope: Construct, id_: str, *, protected: bool, keeps: str, after: Sequence[ITerraformDependable]) -> None:
        """keeps: what the protection keeps, for the message. after: every other resource of the stack."""
        super().__init__(scope, id_)
        message = (
            f"deletion_protection is on: common keeps {keeps}, which no deploy can re-create, so nothing was "
            'destroyed. To destroy common: set "deletion_protection": false in the config (cdktf.json, '
            "context.config), run `cdktf deploy common`, then `cdktf destroy common` again."
        )
        destroyed_first(
            self,
            "guard",
            input={"protected": protected, "message": message},
            after=after,
            command=REFUSE_WHILE_PROTECTED,
            environment={"PROTECTED": "${self.input.protected}", "MESSAGE": "${self.input.message}"},
        )
