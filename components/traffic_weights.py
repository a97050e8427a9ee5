"""The live weights: one SSM parameter, each application's split and each colour's weight (the most any application
gives it; tools/live_weights.py says the shape), the one source of truth of the traffic split.

Terraform creates it with the configured weights (every application at them) and never writes it again
(`ignore_changes`); `python -m tools.shift` writes it (Parameter Store keeps the last 100 versions, each with who wrote
it and when), then the load balancer's rules. A deploy reads it when it creates a rule (a new application starts at the
colours' live weights), so nothing a deploy does can put old weights back.
"""

from __future__ import annotations

from collections.abc import Mapping

from cdktf import Fn, Token
from cdktf_cdktf_provider_aws.ssm_parameter import SsmParameter
from constructs import Construct

from model.routes import WEIGHTS_DESCRIPTION, weights_value


class TrafficWeights(Construct):
    def __init__(self, scope: Construct, id_: str, *, parameter_name: str, initial: Mapping[str, int]) -> None:
        """initial: the configured weights, by colour: the parameter's value when it is first created."""
        super().__init__(scope, id_)
        parameter = SsmParameter(
            self,
            "parameter",
            name=parameter_name,
            description=WEIGHTS_DESCRIPTION,
            type="String",
            insecure_value=weights_value(initial, {}),
            lifecycle={"ignore_changes": ["insecure_value", "description"]},
        )
        self._live = parameter.insecure_value
        # The live weights as a Terraform expression (no `${}`), for conditions that embed it: a colour's weight is
        # its key's (lookup); the keys with NOT_A_COLOUR (`_schema`, `by_application`) are not colours, which what
        # iterates over it must leave out. The parameter's value is ignore_changes: at plan it is what AWS holds (the
        # last shift's), or the seed when first created.
        self.live = f"jsondecode({parameter.fqn}.insecure_value)"

    def weight(self, colour: str) -> str:
        """The colour's live weight (0 for a colour the parameter does not name yet), as Terraform reads it at plan."""
        # "0", not 0: cdktf 0.21 drops a falsy default and writes `jsondecode(...).<colour>`, which fails for a colour the
        # parameter does not name yet (Terraform turns the string into the rule's number).
        return Token.as_string(Fn.lookup(Fn.jsondecode(self._live), colour, "0"))
