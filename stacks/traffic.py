"""The `traffic` stack: how users reach every colour's applications, outside every colour.

One shared Application Load Balancer, a target group per application and colour, the listener rules of every public
host (weighted across the colours) and preview host (one colour), their records, and the live weights. It reads
common's outputs from common's state; each colour reads this stack's target groups from its state. Moving traffic
needs none of the colours: `python -m tools.shift` changes the weighted rules and the weights parameter only.
"""

from __future__ import annotations

from cdktf import TerraformOutput, TerraformResource, TerraformStack
from cdktf_cdktf_provider_aws.data_aws_caller_identity import DataAwsCallerIdentity
from cdktf_cdktf_provider_aws.data_aws_partition import DataAwsPartition
from constructs import Construct

from components.application_routes import ApplicationRoutes
from components.configured_colours import ConfiguredColours
from components.deletion_guard import DeletionGuard
from components.kms_key import AccountKey
from components.live_target_groups import LiveTargetGroups
from components.shared_load_balancer import SharedLoadBalancer
from components.shift_events import ShiftEvents
from components.shift_record import ShiftRecord
from components.traffic_weights import TrafficWeights
from model.config import COMMON_STACK, Config, applications, preview_hostname, public_hostname
from model.contract import LIST_OUTPUTS, TRAFFIC_DESCRIPTIONS, CommonOutput, TrafficOutput, common_outputs
from model.preview_access import preview_networks, rule_key, source_groups
from model.routes import (
    SHIFT_RECORD_RETENTION_DAYS,
    TRAFFIC_STACK,
    events_topic_name,
    load_balancer_name,
    output_key,
    rule_priorities,
    shift_record_log_group,
    target_group_name,
    weights_parameter,
)
from stacks.base import StackOutputs, configure_stack

# What a colour uses of this stack, for the deletion guard's refusal.
TRAFFIC_USES = "its load balancer, which all their applications' users come through"


class TrafficStack(TerraformStack):
    def __init__(self, scope: Construct, *, config: Config) -> None:
        super().__init__(scope, TRAFFIC_STACK)
        # From here on, every string of the configuration is data to Terraform (model/literal.py).
        config = configure_stack(self, config, TRAFFIC_STACK)
        common = StackOutputs(
            self, "common", state=config.state, stack_name=COMMON_STACK, names=common_outputs(config), lists=LIST_OUTPUTS
        )
        vpc_id = common.string(CommonOutput.VPC_ID)
        balancer = SharedLoadBalancer(
            self,
            "load-balancer",
            name=load_balancer_name(config.project),
            vpc_id=vpc_id,
            vpc_cidr=config.network.cidr,
            subnet_ids=common.list(CommonOutput.PUBLIC_SUBNET_IDS),
            certificate_arn=common.string(CommonOutput.CERTIFICATE_ARN),
            deletion_protection=config.deletion_protection,
            access_logs_bucket=config.traffic.access_logs_bucket,
        )
        if config.traffic.waf.enabled:
            _web_acl(self, config, balancer.load_balancer_arn)
        weights = TrafficWeights(self, "weights", parameter_name=weights_parameter(config.project), initial=config.weights)
        live_groups = LiveTargetGroups(
            self, "live-target-groups", project=config.project, stack=TRAFFIC_STACK, live_weights=weights.live
        )
        apps = applications(config)
        colours = list(config.clusters)
        # Before a colour's target groups go with its entry: its cluster retired and its traffic moved.
        ConfiguredColours(self, "configured-colours", project=config.project, colours=colours, live_weights=weights.live)
        previews = {app.name: {c: preview_hostname(config, app, c) for c in colours} for app in apps}
        sources = source_groups(preview_networks(config))
        priorities = rule_priorities(
            [public_hostname(config, app) for app in apps]
            + [rule_key(h, i) for hosts in previews.values() for h in hosts.values() for i in range(len(sources))]
        )
        target_groups: dict[str, dict[str, str]] = {output_key(colour): {} for colour in colours}
        for app in apps:
            routes = ApplicationRoutes(
                self,
                app.name,
                application=app.name,
                public_host=public_hostname(config, app),
                preview_hosts=previews[app.name],
                preview_sources=sources,
                target_group_names={c: target_group_name(config.project, app.name, c) for c in colours},
                initial_weights={c: weights.weight(c) for c in colours},
                priorities=priorities,
                health_check_path=app.config.health_check_path,
                vpc_id=vpc_id,
                listener_arn=balancer.https_listener.arn,
                zone_id=common.string(CommonOutput.ZONE_ID),
                load_balancer_dns_name=balancer.dns_name,
                load_balancer_zone_id=balancer.zone_id,
                record_weight=config.traffic.record_weight,
                project=config.project,
                region=config.region,
                live_groups=live_groups,
                stickiness_seconds=config.traffic.stickiness_seconds or None,
            )
            for colour, arn in routes.target_group_arns.items():
                target_groups[output_key(colour)][output_key(app.name)] = arn

        events = ShiftEvents(self, "shift-events", topic_name=events_topic_name(config.project))
        record = ShiftRecord(
            self,
            "shift-record",
            log_group_name=shift_record_log_group(config.project),
            retention_days=SHIFT_RECORD_RETENTION_DAYS,
            region=config.region,
        )

        # Last: on destroy it goes first, and stops the destroy while a colour's cluster runs (its users come through
        # this load balancer) or while deletion_protection is on.
        everything = [node for node in self.node.find_all() if isinstance(node, TerraformResource)]
        DeletionGuard(
            self,
            "deletion-guard",
            stack=TRAFFIC_STACK,
            protected=config.deletion_protection,
            keeps="the load balancer every application is reached through and the live weights",
            uses=TRAFFIC_USES,
            vpc_id=vpc_id,
            region=config.region,
            project=config.project,
            after=everything,
        )
        outputs: dict[str, object] = {
            TrafficOutput.TARGET_GROUPS: target_groups,
            TrafficOutput.SECURITY_GROUP_ID: balancer.security_group_id,
            TrafficOutput.LOAD_BALANCER_ARN: balancer.load_balancer_arn,
            TrafficOutput.DNS_NAME: balancer.dns_name,
            TrafficOutput.EVENTS_TOPIC_ARN: events.topic_arn,
            TrafficOutput.SHIFT_RECORD_LOG_GROUP: record.log_group_name,
        }
        for output, value in outputs.items():
            TerraformOutput(self, output, value=value, description=TRAFFIC_DESCRIPTIONS[output])


def _web_acl(stack: TrafficStack, config: Config, load_balancer_arn: str) -> None:
    """The web ACL in front of the shared load balancer, and the key its request logs are encrypted with."""
    from components.web_acl import WebAcl  # only here: its bindings take seconds to load (components/web_acl.py)

    name = load_balancer_name(config.project)
    waf = config.traffic.waf
    key = AccountKey(
        stack,
        "waf-logs-key",
        description=f"{name}: the web ACL's request logs",
        account_id=DataAwsCallerIdentity(stack, "account").account_id,
        partition=DataAwsPartition(stack, "partition").partition,
        region=config.region,
    )
    WebAcl(
        stack,
        "web-acl",
        name=name,
        rule_groups=waf.managed_rule_groups,
        count_only=waf.count_only,
        resource_arn=load_balancer_arn,
        log_retention_days=waf.log_retention_days,
        kms_key_arn=key.key_arn,
    )
