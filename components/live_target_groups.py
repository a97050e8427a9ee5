"""The traffic stack's target groups as AWS holds them, read at plan, so that a change that would replace one that
carries traffic is refused there, with the way out, instead of failing half-way at apply.

AWS changes none of a target group's name, port, protocol or target type in place (ForceNew in hashicorp/aws 5.100.0,
internal/service/elbv2/target_group.go), refuses to delete one a rule forwards to (ResourceInUse), and the colour's
TargetGroupBinding names it by ARN. The groups are found by the stack's own tags in one call to the Resource Groups
Tagging API (GetResources answers an empty list where a lookup by name fails: a first deploy has none), which gives
each group's ARN (its name is in it) and tags: every group carries its shape (protocol, port and target type) in a tag
of its own (model/routes.py SHAPE_TAG), so nothing more is read. A group made before the tag existed gets it in place
at the next deploy; until then only its name is compared.
"""

from __future__ import annotations

from cdktf import Precondition
from constructs import Construct

from components.stack_tagged import stack_tagged
from model.routes import APPLICATION_TAG, COLOUR_TAG, SHAPE_TAG

TARGET_GROUP_TYPE = "elasticloadbalancing:targetgroup"  # the Tagging API's resource type filter


class LiveTargetGroups(Construct):
    def __init__(self, scope: Construct, id_: str, *, project: str, stack: str, live_weights: str) -> None:
        """project, stack: the default tags every group of the stack carries (stacks/base.py); live_weights: a
        Terraform expression of the live weights by colour (TrafficWeights.live)."""
        super().__init__(scope, id_)
        tagged = stack_tagged(self, "tagged", resource_type=TARGET_GROUP_TYPE, project=project, stack=stack)
        self._tagged = tagged
        self._live_weights = live_weights

    def never_replaced(self, *, application: str, colour: str, name: str, shape: str) -> Precondition:
        """Refuse, at plan, a change that would replace the colour's target group of the application while the colour
        has live weight: the group running (its name, from its ARN, and its shape tag) against the one the stack would
        make of it (a new name is a new group too)."""
        running = (
            f"[for m in {self._tagged.fqn}.resource_tag_mapping_list : m "
            f'if lookup(m.tags, "{APPLICATION_TAG}", "") == "{application}" && lookup(m.tags, "{COLOUR_TAG}", "") == "{colour}"]'
        )
        group_name = 'element(split("/", m.resource_arn), 1)'  # arn:...:targetgroup/<name>/<id>
        same = f'{group_name} == "{name}" && lookup(m.tags, "{SHAPE_TAG}", "{shape}") == "{shape}"'
        described = f'format("%s runs %s", {group_name}, lookup(m.tags, "{SHAPE_TAG}", "(shape not recorded)"))'
        weight = f'lookup({self._live_weights}, "{colour}", 0)'
        return Precondition(
            condition=f"${{{weight} == 0 || alltrue([for m in {running} : {same}])}}",
            error_message=(
                f"applications.{application}: this change would replace {colour}'s target group of {application} while "
                f'{colour} serves (live weight ${{{weight}}}): ${{join("; ", [for m in {running} : {described}])}}; the '
                f"traffic stack would now make {name} as {shape} (protocol:port:target type), and AWS changes none of "
                f"these in place nor deletes a target group a rule forwards to. Shift {colour}'s traffic away first "
                f"(python -m tools.shift --to <colour>), deploy traffic (the group is replaced), deploy {colour} (its "
                "TargetGroupBinding follows the new group), then shift back (docs/upgrade-runbook.md)."
            ),
        )
