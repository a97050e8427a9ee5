"""One application's way in through the shared load balancer: a target group per colour (the colour's load balancer
controller registers its pods there), a listener rule for its public host forwarding to the colours' target groups by
weight, one for each colour's preview host forwarding to that colour only from the preview networks (one rule per
group of them: model/preview_access.py), and their records in the sub-zone.

The weighted rule's action belongs to `python -m tools.shift` once the rule exists (`ignore_changes`): it starts from
the live weights and no deploy ever writes them again, so a deploy from any checkout cannot undo a shift or a drain.
So Terraform never takes a target group out of it either: each target group has a destroy-time hook beside it (an
instance per colour of one block: _detach; tools/hooks/detach.py) that does, under the traffic lock, before the group is
deleted, and refuses while the rule gives it weight; a change that would replace a group that carries traffic is
refused at plan (components/live_target_groups.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cdktf import LocalExecProvisioner, TerraformResourceLifecycle, Token
from cdktf_cdktf_provider_aws.lb_listener_rule import (
    LbListenerRule,
    LbListenerRuleAction,
    LbListenerRuleActionForward,
    LbListenerRuleActionForwardStickiness,
    LbListenerRuleActionForwardTargetGroup,
    LbListenerRuleCondition,
    LbListenerRuleConditionHostHeader,
    LbListenerRuleConditionSourceIp,
)
from cdktf_cdktf_provider_aws.lb_target_group import LbTargetGroup
from cdktf_cdktf_provider_aws.route53_record import Route53Record
from constructs import Construct

from components.destroy_hook import python_command, with_failure_grace
from components.live_target_groups import LiveTargetGroups
from components.terraform_data import TerraformData
from model.preview_access import rule_key
from model.routes import (
    APPLICATION_TAG,
    COLOUR_TAG,
    DETACH_ENV,
    PREVIEW,
    PUBLIC,
    ROUTE_TAG,
    SET_IDENTIFIER,
    SHAPE_TAG,
    target_group_shape,
)

# A pod is in service after two passed checks 10 s apart and out after two failed ones; a draining pod gets
# deregistration_delay for its in-flight requests (the sample chart's preStop pause covers the controller's lag).
HEALTH_CHECK = {"interval": 10, "timeout": 5, "healthy_threshold": 2, "unhealthy_threshold": 2, "matcher": "200-399"}
DEREGISTRATION_DELAY_SECONDS = "30"
# A target group's own port is only the default for a target registered without one, and the load balancer
# controller registers every pod with its port (aws-load-balancer-controller, pkg/targetgroupbinding/
# resource_manager.go, registerPodEndpoints: `Port: endpoint.Port`); health checks use each target's port
# ("traffic-port"). Fixed, so an application's Service port can change without replacing its target groups (AWS
# changes no group's port in place, and refuses to delete one a rule forwards to).
TARGET_GROUP_PORT = 80
TARGET_GROUP_PROTOCOL, TARGET_TYPE = "HTTP", "ip"
SHAPE = target_group_shape(TARGET_GROUP_PROTOCOL, TARGET_GROUP_PORT, TARGET_TYPE)
DETACH_COMMAND = with_failure_grace(python_command("tools.detach"))


class ApplicationRoutes(Construct):
    def __init__(
        self,
        scope: Construct,
        id_: str,
        *,
        application: str,
        public_host: str,
        preview_hosts: Mapping[str, str],
        preview_sources: Sequence[Sequence[str]],
        target_group_names: Mapping[str, str],
        initial_weights: Mapping[str, str | int],
        priorities: Mapping[str, int],
        health_check_path: str,
        vpc_id: str,
        listener_arn: str,
        zone_id: str,
        load_balancer_dns_name: str,
        load_balancer_zone_id: str,
        record_weight: int,
        project: str,
        region: str,
        live_groups: LiveTargetGroups,
        stickiness_seconds: int | None,
    ) -> None:
        """preview_hosts, target_group_names, initial_weights: by colour. preview_sources: the networks a preview host
        answers, a rule per group (model/preview_access.source_groups). initial_weights: what the weighted rule starts
        with (the live weights), then never set by Terraform again. priorities: by host, and by rule_key for a preview
        host's further rules. record_weight: of its records'
        weighted member (model/routes.SET_IDENTIFIER). project, region: where the detach hooks find the load balancer
        and the traffic lock. live_groups: the groups as AWS holds them, for the refusal to replace one that serves.
        stickiness_seconds: the weighted forward's target group stickiness (None: off, each request split on its own);
        the rule is created with it, and every shift writes it again (the action is the shift's)."""
        super().__init__(scope, id_)
        groups = {
            colour: LbTargetGroup(
                self,
                f"target-group-{colour}",
                name=name,
                target_type=TARGET_TYPE,
                protocol=TARGET_GROUP_PROTOCOL,
                port=TARGET_GROUP_PORT,
                vpc_id=vpc_id,
                deregistration_delay=DEREGISTRATION_DELAY_SECONDS,
                health_check={**HEALTH_CHECK, "enabled": True, "path": health_check_path, "port": "traffic-port"},
                tags={APPLICATION_TAG: application, COLOUR_TAG: colour, SHAPE_TAG: SHAPE},
                lifecycle=TerraformResourceLifecycle(
                    precondition=[live_groups.never_replaced(application=application, colour=colour, name=name, shape=SHAPE)]
                ),
            )
            for colour, name in target_group_names.items()
        }
        detach = _detach(self, groups, application=application, project=project, region=region)
        LbListenerRule(
            self,
            "public",
            listener_arn=listener_arn,
            priority=priorities[public_host],
            condition=[_host(public_host)],
            action=[
                LbListenerRuleAction(
                    type="forward",
                    forward=LbListenerRuleActionForward(
                        target_group=[
                            LbListenerRuleActionForwardTargetGroup(arn=group.arn, weight=Token.as_number(initial_weights[colour]))
                            for colour, group in groups.items()
                        ],
                        stickiness=LbListenerRuleActionForwardStickiness(enabled=True, duration=stickiness_seconds)
                        if stickiness_seconds
                        else None,
                    ),
                )
            ],
            tags={APPLICATION_TAG: application, ROUTE_TAG: PUBLIC},
            lifecycle={"ignore_changes": ["action"]},
            # On destroy the rule goes before the detach hooks (when the whole application goes, nothing is left to
            # detach); when only a target group goes, its hook runs while the rule stays.
            depends_on=[detach],
        )
        for colour, host in preview_hosts.items():
            for index, sources in enumerate(preview_sources):
                LbListenerRule(
                    self,
                    # The first keeps the id (and the priority) the preview rule had before it took networks: an update
                    # in place, no gap in the preview host.
                    f"preview-{colour}" if index == 0 else f"preview-{colour}-{index + 1}",
                    listener_arn=listener_arn,
                    priority=priorities[rule_key(host, index)],
                    condition=[
                        _host(host),
                        LbListenerRuleCondition(source_ip=LbListenerRuleConditionSourceIp(values=list(sources))),
                    ],
                    action=[LbListenerRuleAction(type="forward", target_group_arn=groups[colour].arn)],
                    tags={APPLICATION_TAG: application, ROUTE_TAG: PREVIEW, COLOUR_TAG: colour},
                )
        for label, host in {PUBLIC: public_host, **{f"{PREVIEW}-{c}": h for c, h in preview_hosts.items()}}.items():
            Route53Record(
                self,
                f"record-{label}",
                zone_id=zone_id,
                name=host,
                type="A",
                alias={"name": load_balancer_dns_name, "zone_id": load_balancer_zone_id, "evaluate_target_health": False},
                set_identifier=SET_IDENTIFIER,
                weighted_routing_policy={"weight": record_weight},
            )
        self.target_group_arns = {colour: group.arn for colour, group in groups.items()}


def _detach(
    scope: Construct, groups: Mapping[str, LbTargetGroup], *, application: str, project: str, region: str
) -> TerraformData:
    """A `terraform_data` with an instance per colour beside the target groups, whose destroy provisioner takes the
    colour's group out of the public rule (tools/hooks/detach.py). An instance names its group, so it is destroyed first; it is
    replaced with the group (triggers_replace), so a replacement detaches the old group before deleting it. One block,
    an instance per colour (for_each), because a colour leaves the configuration by its key: a block of its own would
    leave with it, and Terraform runs no provisioner of a block that is gone (components/terraform_data.py)."""
    provisioner = LocalExecProvisioner(
        type="local-exec", when="destroy", command=DETACH_COMMAND, environment={DETACH_ENV: "${jsonencode(self.input)}"}
    )
    hook = TerraformData(
        scope,
        "detach",
        instances={
            colour: {"project": project, "region": region, "application": application, "colour": colour}
            | {"target_group_arn": group.arn}
            for colour, group in groups.items()
        },
        provisioners=[provisioner],
    )
    hook.add_override("triggers_replace", ["${each.value.target_group_arn}"])
    return hook


def _host(host: str) -> LbListenerRuleCondition:
    return LbListenerRuleCondition(host_header=LbListenerRuleConditionHostHeader(values=[host]))
