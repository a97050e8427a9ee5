"""The destroy-time hook of a colour: a `terraform_data` whose destroy provisioner runs tools.teardown
(tools/hooks/teardown.py).

It depends on every other resource of the stack, so `cdktf destroy <colour>` runs it first and
stops, deleting nothing, if it fails. It is created last and does nothing on create; a changed
plan (a new weight, say) updates it in place, which runs nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cdktf import ITerraformDependable, LocalExecProvisioner
from constructs import Construct

from components.terraform_data import TerraformData
from model.hooks import TEARDOWN
from model.paths import VENV_PYTHON
from model.teardown_plan import PLAN_ENV, TeardownPlan


def python_command(module: str) -> str:
    """A destroy provisioner's shell command that runs `python -m <module>` of this project.

    Terraform runs it in cdktf.out/stacks/<stack>: find the project (the directory holding cdktf.json)
    upwards from there, then run the module with the project's Python. No path of the synthesizing
    machine ends up in the output. `$d`-style shell variables are not Terraform syntax."""
    name = module.rsplit(".", 1)[-1]
    return (
        'd="$PWD"; while [ ! -f "$d/cdktf.json" ]; do '
        f'[ "$d" = / ] && {{ echo "{name}: no cdktf.json above $PWD" >&2; exit 2; }}; d="$(dirname "$d")"; done; '
        f'cd "$d"; py=python3; [ -x {VENV_PYTHON} ] && py={VENV_PYTHON}; exec "$py" -m {module}'
    )


HOOK_COMMAND = python_command(TEARDOWN)
# The cdktf CLI runs Terraform in a pty and ends its output at the pty's exit (@cdktf/cli-core's pty-process.js resolves
# on onExit), which can overtake the last data still in the pty: a refusal printed just before Terraform exits was
# lost now and then under load (the rehearsal's `cdktf destroy traffic` ended at "Provisioning with 'local-exec'...").
# A failing hook waits before it exits, so Terraform has streamed its output (the `(local-exec):` lines) to the CLI
# well before its own exit. Success does not wait.
FAILURE_GRACE_SECONDS = 2


def with_failure_grace(command: str) -> str:
    """command, run in a subshell (its `exit`s end only that), and when it fails: a wait, then its exit status."""
    return f"( {command} ) || {{ status=$?; sleep {FAILURE_GRACE_SECONDS}; exit $status; }}"


class DestroyHook(Construct):
    def __init__(self, scope: Construct, id: str, *, plan: TeardownPlan, after: Sequence[ITerraformDependable]) -> None:
        """after: every other resource of the stack; all of them are destroyed after the hook has run."""
        super().__init__(scope, id)
        # Destroy-time provisioners may only read `self`: the plan travels in the resource's own input.
        self.resource = destroyed_first(
            self,
            "hook",
            input=plan.to_json(),
            after=after,
            command=HOOK_COMMAND,
            environment={PLAN_ENV: "${jsonencode(self.input)}"},
        )


def destroyed_first(
    scope: Construct,
    id_: str,
    *,
    input: Mapping[str, Any],  # terraform_data's own name for it
    after: Sequence[ITerraformDependable],
    command: str,
    environment: dict[str, str],
) -> TerraformData:
    """A `terraform_data` that depends on `after` (every other resource of its stack), so a destroy takes it
    first, and whose destroy provisioner runs `command`: when that fails, nothing else of the stack goes (and what it
    said reaches the CLI first: with_failure_grace)."""
    provisioner = LocalExecProvisioner(
        type="local-exec", when="destroy", command=with_failure_grace(command), environment=environment
    )
    return TerraformData(scope, id_, input=input, depends_on=after, provisioners=[provisioner])
