"""The traffic stack's refusal, at plan, to drop a colour that is not retired: a colour removed from the configuration
takes its target groups, rules and preview hosts with it, which must not happen while its cluster still runs (its load
balancer controller's TargetGroupBindings name those groups) or while the live weights still give it traffic.

So a configuration edit that removes such a colour fails its pull request's plan of traffic and the deploy's, before
anything changes, saying to retire it first (the retire runs while the configuration still names the colour). It asks
EKS, not the colours' state: a colour deployed from another checkout runs all the same. A cluster is the project's
colour when its default tags say so (stacks/base.py: Project, and Stack, the colour).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from cdktf import Precondition, TerraformResourceLifecycle
from cdktf_cdktf_provider_aws.data_aws_eks_cluster import DataAwsEksCluster
from cdktf_cdktf_provider_aws.data_aws_eks_clusters import DataAwsEksClusters
from constructs import Construct

from components.terraform_data import TerraformData
from model.routes import NOT_A_COLOUR
from model.tags import PROJECT_TAG, STACK_TAG

WAY_OUT = (
    "a colour is retired while the configuration still names it: put its entry back as it was deployed, retire it (the "
    "retire workflow, or `python -m tools.retire <colour>`), then remove it (docs/ci.md, 'Retiring a colour')"
)


class ConfiguredColours(Construct):
    def __init__(self, scope: Construct, id_: str, *, project: str, colours: Sequence[str], live_weights: str) -> None:
        """colours: the configuration's; live_weights: a Terraform expression of the live weights' value, each colour's
        weight under its name (TrafficWeights.live)."""
        super().__init__(scope, id_)
        listed = DataAwsEksClusters(self, "clusters")
        running = DataAwsEksCluster(self, "running", name="${each.value}")
        # Set as written: every cluster named as the project names its colours' (model/config/ cluster_name).
        running.add_override("for_each", f'${{toset([for n in {listed.fqn}.names : n if startswith(n, "{project}-")])}}')
        configured = json.dumps(sorted(colours))
        dropped = (
            f'[for c in values({running.fqn}) : c if lookup(c.tags, "{PROJECT_TAG}", "") == "{project}" '
            f'&& !contains({configured}, lookup(c.tags, "{STACK_TAG}", ""))]'
        )
        # Colours only (a key with NOT_A_COLOUR is none); `try`, as Terraform evaluates both sides of `&&`: the
        # per-application splits are no number.
        weighted = (
            f'[for colour, weight in {live_weights} : colour if !strcontains(colour, "{NOT_A_COLOUR}") '
            f"&& try(weight > 0, false) && !contains({configured}, colour)]"
        )
        named = f'format("clusters.%s (its cluster %s)", lookup(c.tags, "{STACK_TAG}", "?"), c.name)'
        dropped_names = f'join(", ", [for c in {dropped} : {named}])'
        weighted_names = f'join(", ", [for colour in {weighted} : format("%s (live weight %d)", colour, {live_weights}[colour])])'
        TerraformData(
            self,
            "guard",
            input={"colours": sorted(colours)},
            provisioners=[],
            lifecycle=TerraformResourceLifecycle(
                precondition=[
                    Precondition(
                        condition=f"${{length({dropped}) == 0}}",
                        error_message=(
                            f"${{{dropped_names}}}: removed from the configuration, but the cluster still runs, and the "
                            f"traffic stack would delete the target groups its load balancer controller binds. {WAY_OUT}."
                        ),
                    ),
                    Precondition(
                        condition=f"${{length({weighted}) == 0}}",
                        error_message=(
                            f"${{{weighted_names}}}: removed from the configuration while the live weights still send "
                            "it traffic: move it to a configured colour first (python -m tools.shift --to <colour> "
                            f"--now takes it from a colour the configuration lacks). {WAY_OUT}."
                        ),
                    ),
                ]
            ),
        )
