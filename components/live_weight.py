"""A colour's live weight, as Terraform reads it at plan: the weights parameter the traffic stack made and only
`python -m tools.shift` writes (components/traffic_weights.py), never the configuration's weight.

What protects a serving colour (its node group's replacement guard) asks this, so the protection follows the traffic
wherever the shift moved it, and an edit of config.json's weights (which only seed a new traffic stack) changes no
colour's synthesized stack.
"""

from __future__ import annotations

from cdktf_cdktf_provider_aws.data_aws_ssm_parameter import DataAwsSsmParameter
from constructs import Construct


class LiveWeight(Construct):
    def __init__(self, scope: Construct, id_: str, *, parameter_name: str, colour: str) -> None:
        """parameter_name: the weights parameter (model/routes.weights_parameter); colour: whose weight."""
        super().__init__(scope, id_)
        # `insecure_value`: the parameter is a String, and `value` is marked sensitive, which a condition's error
        # message could not show. A colour the parameter does not name holds no weight.
        parameter = DataAwsSsmParameter(self, "parameter", name=parameter_name)
        self.parameter_name = parameter_name
        # A Terraform expression (no `${}`): for conditions and messages that embed it.
        self.weight = f'lookup(jsondecode({parameter.fqn}.insecure_value), "{colour}", 0)'
