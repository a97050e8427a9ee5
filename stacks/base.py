"""What every stack has: its own state (backend), and the AWS provider for the project's region."""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path

from cdktf import (
    App,
    DataTerraformRemoteStateLocal,
    DataTerraformRemoteStateS3,
    IResolvable,
    LocalBackend,
    S3Backend,
    TerraformRemoteState,
    TerraformStack,
)
from cdktf_cdktf_provider_aws.provider import AwsProvider, AwsProviderDefaultTags
from constructs import Construct

from model.config import Config, StateConfig
from model.literal import literals
from model.tags import MANAGED_BY, MANAGED_BY_TAG, PROJECT_TAG, STACK_TAG

# The Terraform that may plan and apply a stack, checked by Terraform itself wherever it runs: the S3 backend's native
# lock file (use_lockfile) needs 1.10 (README's prerequisites say the same). cdktf's own check, a `terraform version`
# at synth per terraform_data, checked the synthesizing machine instead (components/terraform_data.py).
REQUIRED_TERRAFORM = ">= 1.10"


def configure_stack(stack: TerraformStack, config: Config, stack_name: str) -> Config:
    """One state per stack (blue and green never share one), and default tags on everything. Returns the configuration
    as the stack writes it: every string of it data, never a Terraform expression (model/literal.py). The backend alone
    takes the state settings as configured: Terraform reads a backend's settings literally (a remote state's `config`,
    read_state, is an expression, and takes them escaped)."""
    stack.add_override("terraform.required_version", REQUIRED_TERRAFORM)
    state = config.state
    if state.backend == "s3":
        S3Backend(stack, bucket=state.bucket, key=state.key(stack_name), region=state.region, encrypt=state.encrypt)
        # Native S3 locking (Terraform >= 1.10); cdktf 0.21's S3Backend has no field for it.
        stack.add_override("terraform.backend.s3.use_lockfile", True)
    else:
        LocalBackend(stack, path=_state_path(stack, state, stack_name))
    written = literals(config)
    tags = {PROJECT_TAG: written.project, STACK_TAG: stack_name, MANAGED_BY_TAG: MANAGED_BY, **written.tags}
    AwsProvider(stack, "aws", region=written.region, default_tags=[AwsProviderDefaultTags(tags=tags)])
    return written


def read_state(scope: Construct, id_: str, state: StateConfig, stack_name: str) -> TerraformRemoteState:
    """Another stack's outputs, read explicitly from its state: no cdktf cross-stack wiring, so
    a cluster stack deploys alone and never depends on another colour."""
    if state.backend == "s3":
        key = state.key(stack_name)
        return DataTerraformRemoteStateS3(scope, id_, bucket=state.bucket, key=key, region=state.region)
    return DataTerraformRemoteStateLocal(scope, id_, path=_state_path(scope, state, stack_name))


class StackOutputs:
    """Another stack's outputs, read from its state (read_state) by the names of its contract (model/contract.py): a
    name outside the contract, or a list read as a string, fails at synth instead of at plan."""

    def __init__(
        self,
        scope: Construct,
        id_: str,
        *,
        state: StateConfig,
        stack_name: str,
        names: Collection[str],
        lists: Collection[str] = (),
    ) -> None:
        self._state = read_state(scope, id_, state, stack_name)
        self._stack, self._names, self._lists = stack_name, frozenset(names), frozenset(lists)

    def string(self, output: str) -> str:
        self._known(output)
        if output in self._lists:
            raise TypeError(f"{output} is a list; use list")
        return self._state.get_string(output)

    def list(self, output: str) -> list[str]:
        self._known(output)
        if output not in self._lists:
            raise TypeError(f"{output} is a string; use string")
        return self._state.get_list(output)

    def any(self, output: str) -> IResolvable:
        """A map or object output, for Terraform's functions to index."""
        self._known(output)
        return self._state.get(output)

    def string_at(self, output: str, *keys: str) -> str:
        """A string inside a map or object output, by attribute path (`output.key.key`): keys that are identifiers make
        a reference without quotes, which reads the same in the JSON values of a Helm release."""
        self._known(output)
        return self._state.get_string(".".join([output, *keys]))

    def _known(self, output: str) -> None:
        if output not in self._names:
            raise KeyError(f"{output} is not an output of {self._stack} (model/contract.py)")


def _state_path(scope: Construct, state: StateConfig, stack_name: str) -> str:
    """The state file as seen from the directory Terraform runs in (<outdir>/stacks/<stack>):
    relative, so cdktf.out synthesized in CI or another checkout applies here unchanged."""
    running_in = Path(App.of(scope).outdir).absolute() / "stacks" / TerraformStack.of(scope).node.id
    return os.path.relpath(state.file(stack_name).absolute(), running_in)
