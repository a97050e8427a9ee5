"""One stack per colour: its own EKS cluster, bound to common's shared roles."""

from __future__ import annotations

from cdktf import TerraformStack
from constructs import Construct

from stacks.base import configure_stack, read_state
from stacks.config import COMMON_STACK, ClusterConfig, Config
from stacks.contract import LIST_OUTPUTS, CommonOutput


class ClusterStack(TerraformStack):
    def __init__(self, scope: Construct, colour: str, *, config: Config, cluster: ClusterConfig) -> None:
        super().__init__(scope, colour)
        configure_stack(self, config, colour)
        self._common = read_state(self, "common", config.state, COMMON_STACK)
        self.cluster = cluster

    def common(self, output: CommonOutput) -> str:
        """A string output of common's state, by its contract name."""
        if output in LIST_OUTPUTS:
            raise TypeError(f"{output} is a list; use common_list")
        return self._common.get_string(output.value)

    def common_list(self, output: CommonOutput) -> list[str]:
        if output not in LIST_OUTPUTS:
            raise TypeError(f"{output} is a string; use common")
        return self._common.get_list(output.value)
