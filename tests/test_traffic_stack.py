"""The traffic stack: one load balancer outside every colour, a target group per application and colour, the weighted
rule of every public host, a preview rule per application and colour, their records, and the live weights; and each
colour's side of it (its pods admitted, its target groups read from the traffic stack's state)."""

from __future__ import annotations

import json
import re

import pytest
from cdktf import Testing

from model.config import APPLICATION_PATTERN, Config, applications, preview_hostname, public_hostname
from model.routes import SET_IDENTIFIER, TRAFFIC_CONSTRUCT_IDS, WEIGHTS_DESCRIPTION, target_group_name
from tests.support.configs import VARIANT, example, validated
from tests.support.synth import Synthesized
from tools.live_weights import parse

TRAFFIC = "traffic"


@pytest.fixture(scope="module")
def app(variant_app: Synthesized) -> Synthesized:
    """Three colours (blue 10, green 200, purple 0), three applications (tests/support/configs.VARIANT)."""
    return variant_app


@pytest.fixture(scope="module")
def config() -> Config:
    return validated(VARIANT)


def address(app: Synthesized, resource_type: str, path: str, stack: str = TRAFFIC) -> str:
    found = app.json(stack)["resource"][resource_type]
    (name,) = [n for n, body in found.items() if body["//"]["metadata"]["path"] == f"{stack}/{path}"]
    return f"{resource_type}.{name}"


def ref(app: Synthesized, resource_type: str, path: str, attribute: str) -> str:
    return f"${{{address(app, resource_type, path)}.{attribute}}}"


COMMON = "data.terraform_remote_state.common.outputs"


def test_one_internet_facing_load_balancer_in_commons_public_subnets(app: Synthesized) -> None:
    (balancer,) = app.json(TRAFFIC)["resource"]["aws_lb"].values()
    assert balancer["name"] == "eks-bg-traffic"
    assert (balancer["load_balancer_type"], balancer["internal"]) == ("application", False)
    assert balancer["subnets"] == f"${{{COMMON}.public_subnet_ids}}"
    assert balancer["drop_invalid_header_fields"] is True
    assert balancer["enable_deletion_protection"] is False  # the variant turns deletion protection off
    # The variant names a bucket for access logs: under the load balancer's own prefix, so one log archive can hold
    # every project's.
    assert balancer["access_logs"] == {"bucket": "acme-log-archive", "prefix": "eks-bg-traffic", "enabled": True}


def test_its_security_group_lets_clients_in_on_80_and_443_and_out_only_into_the_vpc(app: Synthesized, config: Config) -> None:
    ingress = app.resources(TRAFFIC, "aws_vpc_security_group_ingress_rule").values()
    assert sorted((r["from_port"], r["to_port"], r["cidr_ipv4"]) for r in ingress) == [
        (80, 80, "0.0.0.0/0"),
        (443, 443, "0.0.0.0/0"),
    ]
    (egress,) = app.resources(TRAFFIC, "aws_vpc_security_group_egress_rule").values()
    assert (egress["cidr_ipv4"], egress["ip_protocol"]) == (config.network.cidr, "tcp")


def test_https_with_commons_certificate_and_http_redirected(app: Synthesized) -> None:
    listeners = {body["port"]: body for body in app.resources(TRAFFIC, "aws_lb_listener").values()}
    assert listeners[443]["protocol"] == "HTTPS"
    assert listeners[443]["certificate_arn"] == f"${{{COMMON}.certificate_arn}}"
    assert listeners[443]["ssl_policy"] == "ELBSecurityPolicy-TLS13-1-2-2021-06"
    (default,) = listeners[443]["default_action"]
    assert (default["type"], default["fixed_response"]["status_code"]) == ("fixed-response", "404")
    (redirect,) = listeners[80]["default_action"]
    assert redirect["redirect"] == {"port": "443", "protocol": "HTTPS", "status_code": "HTTP_301"}


def test_a_target_group_per_application_and_colour_tagged_with_both(app: Synthesized, config: Config) -> None:
    groups = app.resources(TRAFFIC, "aws_lb_target_group")
    assert len(groups) == len(config.applications) * len(config.clusters)
    for a in applications(config):
        for colour in config.clusters:
            group = groups[f"{a.name}/target-group-{colour}"]
            assert group["name"] == target_group_name(config.project, a.name, colour)
            assert len(group["name"]) <= 32
            assert (group["target_type"], group["protocol"], group["vpc_id"]) == ("ip", "HTTP", f"${{{COMMON}.vpc_id}}")
            assert group["health_check"]["path"] == a.config.health_check_path
            assert group["tags"] == {"Application": a.name, "Colour": colour, "TargetGroupShape": "HTTP:80:ip"}


def test_what_happens_when_a_colours_targets_all_fail(app: Synthesized) -> None:
    """The load balancer takes a failing pod out after two failed checks 10 s apart (README: 'When a colour's targets
    all fail'); a target group whose targets all fail keeps its share of its rule (fail open, ELB docs, "Health checks
    for target groups") until the shift's gate (a poll of target health every 10 s in a step) or a drain moves it."""
    group = app.resource(TRAFFIC, "aws_lb_target_group", "orders/target-group-green")
    check = group["health_check"]
    assert (check["interval"], check["unhealthy_threshold"], check["healthy_threshold"]) == (10, 2, 2)
    assert check["port"] == "traffic-port"
    assert group["deregistration_delay"] == "30"


def test_each_public_host_forwards_to_every_colour_at_the_live_weights_and_no_deploy_rewrites_them(
    app: Synthesized, config: Config
) -> None:
    rules = app.resources(TRAFFIC, "aws_lb_listener_rule")
    parameter = address(app, "aws_ssm_parameter", "weights/parameter")
    for a in applications(config):
        rule = rules[f"{a.name}/public"]
        assert rule["condition"] == [{"host_header": {"values": [public_hostname(config, a)]}}]
        assert rule["tags"] == {"Application": a.name, "Route": "public"}
        (action,) = rule["action"]
        assert action["type"] == "forward"
        # The variant keeps a client on the colour it was first sent to for 10 minutes (traffic.stickiness_seconds).
        assert action["forward"]["stickiness"] == {"enabled": True, "duration": 600}
        assert action["forward"]["target_group"] == [
            {
                "arn": ref(app, "aws_lb_target_group", f"{a.name}/target-group-{colour}", "arn"),
                "weight": f'${{lookup(jsondecode({parameter}.insecure_value), "{colour}", "0")}}',
            }
            for colour in config.clusters
        ]
        # Created at the live weights, then the shift's: no deploy writes them again.
        assert rule["lifecycle"] == {"ignore_changes": ["action"]}
        # Never destroyed after its target groups' detach hooks: when the application goes, it goes first.
        assert rule["depends_on"] == [address(app, "terraform_data", f"{a.name}/detach")]


def test_by_default_each_request_is_split_on_its_own(example_app: Synthesized) -> None:
    """No stickiness unless asked (README: "each request is split by the live weights on its own")."""
    rules = example_app.resources(TRAFFIC, "aws_lb_listener_rule")
    public = [rule for rule in rules.values() if rule["tags"]["Route"] == "public"]
    assert public
    assert all("stickiness" not in rule["action"][0]["forward"] for rule in public)


def test_a_target_group_goes_only_after_its_detach_hook_took_it_out_of_the_public_rule(app: Synthesized, config: Config) -> None:
    """One `terraform_data` per application with an instance per colour (for_each): an instance names its colour's
    group (so on destroy it runs first), is replaced with it, and its destroy provisioner runs tools.detach with its own
    input. One block, not one per colour: a colour removed from the configuration drops its key, and Terraform runs
    the provisioners of a dropped instance but never those of a dropped block (planned for real:
    tests/test_upgrade_cycle.py, "blue removed")."""
    for a in applications(config):
        hook = app.resource(TRAFFIC, "terraform_data", f"{a.name}/detach")
        assert hook["for_each"] == {
            colour: {
                "project": config.project,
                "region": config.region,
                "application": a.name,
                "colour": colour,
                "target_group_arn": ref(app, "aws_lb_target_group", f"{a.name}/target-group-{colour}", "arn"),
            }
            for colour in config.clusters
        }
        assert hook["input"] == "${each.value}"
        assert hook["triggers_replace"] == ["${each.value.target_group_arn}"]
        (provisioner,) = hook["provisioner"]
        assert provisioner["local-exec"]["when"] == "destroy"
        assert "tools.detach" in provisioner["local-exec"]["command"]
        assert provisioner["local-exec"]["environment"] == {"TARGET_GROUP_DETACH": "${jsonencode(self.input)}"}


def test_replacing_a_target_group_of_a_colour_with_live_weight_is_refused_at_plan(app: Synthesized, config: Config) -> None:
    """The groups as AWS holds them, found by the stack's tags in one call, and the live weights: a serving colour's
    group that would change name or shape is refused (planned for real: tests/test_upgrade_cycle.py)."""
    (tagged_id, tagged) = next(iter(app.json(TRAFFIC)["data"]["aws_resourcegroupstaggingapi_resources"].items()))
    assert tagged["resource_type_filters"] == ["elasticloadbalancing:targetgroup"]
    assert tagged["tag_filter"] == [{"key": "Project", "values": [config.project]}, {"key": "Stack", "values": ["traffic"]}]
    parameter = address(app, "aws_ssm_parameter", "weights/parameter")
    group = app.resource(TRAFFIC, "aws_lb_target_group", "orders/target-group-green")
    (precondition,) = group["lifecycle"]["precondition"]
    weight = f'lookup(jsondecode({parameter}.insecure_value), "green", 0)'
    assert precondition["condition"].startswith(f"${{{weight} == 0 || alltrue([for m in [for m in ")
    assert f"data.aws_resourcegroupstaggingapi_resources.{tagged_id}.resource_tag_mapping_list" in precondition["condition"]
    assert (
        f'== "{group["name"]}" && lookup(m.tags, "TargetGroupShape", "HTTP:80:ip") == "HTTP:80:ip"' in (precondition["condition"])
    )
    assert precondition["error_message"].startswith(
        "applications.orders: this change would replace green's target group of orders while green serves"
    )


def test_removing_a_colour_whose_cluster_runs_or_that_has_live_weight_is_refused_at_plan(
    app: Synthesized, config: Config
) -> None:
    """Read at every plan of traffic: the project's clusters (by their default tags) and the live weights."""
    guard = app.resource(TRAFFIC, "terraform_data", "configured-colours/guard")
    running, weighted = guard["lifecycle"]["precondition"]
    configured = json.dumps(sorted(config.clusters))
    assert (
        f'lookup(c.tags, "Project", "") == "{config.project}" && !contains({configured}, lookup(c.tags, "Stack", ""))'
        in (running["condition"])
    )
    assert "removed from the configuration, but the cluster still runs" in running["error_message"]
    assert "a colour is retired while the configuration still names it" in running["error_message"]
    # Colours only: the parameter's `_schema` and `by_application` are none (model/routes.py NOT_A_COLOUR), and the
    # splits under by_application are no number (Terraform evaluates both sides of `&&`).
    assert (
        f'colour if !strcontains(colour, "_") && try(weight > 0, false) && !contains({configured}, colour)'
        in (weighted["condition"])
    )
    (clusters,) = app.json(TRAFFIC)["data"]["aws_eks_cluster"].values()
    assert clusters["for_each"].endswith(f'.names : n if startswith(n, "{config.project}-")])}}')


# The variant's traffic.preview_cidrs (tests/support/configs.VARIANT_PREVIEW_CIDRS), merged by hand: the two /25 of
# 192.0.2.0 are its /24; in address order; three a rule (the condition values of a rule, model/preview_access.py).
VARIANT_PREVIEW_RULES = [["100.64.10.0/24", "100.64.99.8/29", "192.0.2.0/24"], ["198.51.100.0/24"]]


def test_each_preview_host_forwards_to_its_colour_only_from_the_preview_networks(app: Synthesized, config: Config) -> None:
    """A rule per three networks; the first keeps the id the preview rule had before it took networks (an update in
    place). Anything else matches no rule: the listener's 404."""
    rules = app.resources(TRAFFIC, "aws_lb_listener_rule")
    for a in applications(config):
        for colour in config.clusters:
            host = preview_hostname(config, a, colour)
            for id_, sources in zip([f"preview-{colour}", f"preview-{colour}-2"], VARIANT_PREVIEW_RULES, strict=True):
                rule = rules[f"{a.name}/{id_}"]
                assert rule["condition"] == [{"host_header": {"values": [host]}}, {"source_ip": {"values": sources}}]
                assert rule["action"] == [
                    {
                        "type": "forward",
                        "target_group_arn": ref(app, "aws_lb_target_group", f"{a.name}/target-group-{colour}", "arn"),
                    }
                ]
                assert rule["tags"] == {"Application": a.name, "Route": "preview", "Colour": colour}
                assert "lifecycle" not in rule  # Terraform's entirely
    previews = [rule for rule in rules.values() if rule["tags"]["Route"] == "preview"]
    assert len(previews) == len(config.applications) * len(config.clusters) * len(VARIANT_PREVIEW_RULES)


def test_by_default_the_preview_hosts_answer_the_networks_of_the_kubernetes_api(example_app: Synthesized) -> None:
    """traffic.preview_cidrs unset: eks.public_access_cidrs, where the operators (and readiness) already come from."""
    text = example_app.text(TRAFFIC)
    config = example()
    for a in applications(config):
        for colour in config.clusters:
            assert Testing.to_have_resource_with_properties(
                text,
                "aws_lb_listener_rule",
                {
                    "condition": [
                        {"host_header": {"values": [preview_hostname(config, a, colour)]}},
                        {"source_ip": {"values": ["203.0.113.0/24"]}},  # the example's eks.public_access_cidrs
                    ],
                    "tags": {"Application": a.name, "Route": "preview", "Colour": colour},
                },
            )
        # Its public host answers everyone.
        assert Testing.to_have_resource_with_properties(
            text, "aws_lb_listener_rule", {"condition": [{"host_header": {"values": [public_hostname(config, a)]}}]}
        )


def test_rule_priorities_are_distinct_and_stable(app: Synthesized, config: Config) -> None:
    priorities = [rule["priority"] for rule in app.resources(TRAFFIC, "aws_lb_listener_rule").values()]
    previews = len(config.clusters) * len(VARIANT_PREVIEW_RULES)
    assert len(priorities) == len(set(priorities)) == len(config.applications) * (1 + previews)
    assert all(1 <= p <= 50000 for p in priorities)


def test_every_host_is_an_alias_of_the_load_balancer(app: Synthesized, config: Config) -> None:
    records = {body["name"]: body for body in app.resources(TRAFFIC, "aws_route53_record").values()}
    hosts = {public_hostname(config, a) for a in applications(config)}
    hosts |= {preview_hostname(config, a, c) for a in applications(config) for c in config.clusters}
    assert set(records) == hosts
    for record in records.values():
        assert record["zone_id"] == f"${{{COMMON}.zone_id}}"
        assert record["alias"] == {
            "name": ref(app, "aws_lb", "load-balancer/alb", "dns_name"),
            "zone_id": ref(app, "aws_lb", "load-balancer/alb", "zone_id"),
            "evaluate_target_health": False,
        }
        # A weighted member, so it stands beside the records a colour's ExternalDNS wrote before (docs/upgrading.md).
        assert record["set_identifier"] == SET_IDENTIFIER
        assert record["weighted_routing_policy"] == {"weight": 1}


def test_the_live_weights_start_as_configured_and_only_the_shift_writes_them(app: Synthesized, config: Config) -> None:
    parameter = app.resource(TRAFFIC, "aws_ssm_parameter", "weights/parameter")
    assert parameter["name"] == "/eks-bg/traffic/weights"
    # Schema 2 from the start (model/routes.py weights_value): every application at the configured weights, which the
    # shift reads as it writes them.
    assert json.loads(parameter["insecure_value"]) == {"_schema": 2, **config.weights, "by_application": {}}
    seeded = parse(parameter["name"], parameter["insecure_value"])
    assert (seeded.schema, seeded.colours, seeded.of("orders")) == (2, config.weights, config.weights)
    # The shift writes the value with this same description (tools/live_weights.write_live): neither is Terraform's
    # to change again, so no deploy plans an update of the parameter after a shift.
    assert parameter["description"] == WEIGHTS_DESCRIPTION
    assert parameter["lifecycle"] == {"ignore_changes": ["insecure_value", "description"]}


def test_outputs_give_each_colour_its_target_groups_by_identifier_keys(app: Synthesized, config: Config) -> None:
    outputs = app.json(TRAFFIC)["output"]
    groups = outputs["target_groups"]["value"]
    assert sorted(groups) == sorted(config.clusters)
    assert groups["green"]["sample_app"] == ref(app, "aws_lb_target_group", "sample-app/target-group-green", "arn")
    assert set(outputs) == {
        "target_groups",
        "load_balancer_security_group_id",
        "load_balancer_arn",
        "load_balancer_dns_name",
        "shift_events_topic_arn",
        "shift_record_log_group",
    }
    assert all(len(body["description"]) > 20 for body in outputs.values())


def test_the_shifts_events_topic_is_encrypted_and_only_this_account_publishes(app: Synthesized) -> None:
    text = app.text(TRAFFIC)
    # The name the shift finds it by (tools/shift/events.py), written out here rather than taken from the code under test.
    assert Testing.to_have_resource_with_properties(
        text, "aws_sns_topic", {"name": "eks-bg-shift-events", "kms_master_key_id": "alias/aws/sns"}
    )
    topic = ref(app, "aws_sns_topic", "shift-events/topic", "arn")
    assert Testing.to_have_resource_with_properties(text, "aws_sns_topic_policy", {"arn": topic})
    policy = json.loads(app.resource(TRAFFIC, "aws_sns_topic_policy", "shift-events/policy")["policy"])
    (statement,) = policy["Statement"]
    assert statement["Effect"] == "Allow"
    assert statement["Action"] == "sns:Publish"
    assert statement["Resource"] == topic
    assert re.fullmatch(
        r"arn:\$\{data\.aws_partition\.[\w-]+\.partition\}:iam::\$\{data\.aws_caller_identity\.[\w-]+\.account_id\}:root",
        statement["Principal"]["AWS"],
    )
    output = app.json(TRAFFIC)["output"]["shift_events_topic_arn"]
    assert output["value"] == topic


def test_the_shift_record_is_a_log_group_kept_two_years_with_a_key_of_its_own(app: Synthesized) -> None:
    # The name the shift writes and reads by (tools/shift/record.py), written out here rather than taken from the code
    # under test; 731 days is one of the retentions CloudWatch Logs allows (PutRetentionPolicy), a year and more.
    key = ref(app, "aws_kms_key", "shift-record/key/key", "arn")
    assert Testing.to_have_resource_with_properties(
        app.text(TRAFFIC),
        "aws_cloudwatch_log_group",
        {"name": "/eks-bg/traffic/shifts", "retention_in_days": 731, "kms_key_id": key},
    )
    key_policy = json.loads(app.resource(TRAFFIC, "aws_kms_key", "shift-record/key/key")["policy"])
    assert "logs.ap-northeast-1.amazonaws.com" in json.dumps(key_policy)  # CloudWatch Logs may use it
    output = app.json(TRAFFIC)["output"]["shift_record_log_group"]
    assert output["value"] == ref(app, "aws_cloudwatch_log_group", "shift-record/group", "name")


def test_a_protected_traffic_stack_stops_its_destroy_while_colours_run(example_app: Synthesized) -> None:
    guard = example_app.resource(TRAFFIC, "terraform_data", "deletion-guard/guard")
    assert guard["input"]["stack"] == "traffic"
    assert guard["input"]["protected"] is True
    assert "`cdktf deploy traffic`, then `cdktf destroy traffic` again" in guard["input"]["message"]
    everything = {f"{kind}.{name}" for kind, bodies in example_app.json(TRAFFIC)["resource"].items() for name in bodies}
    assert set(guard["depends_on"]) == everything - {address(example_app, "terraform_data", "deletion-guard/guard")}
    (balancer,) = example_app.json(TRAFFIC)["resource"]["aws_lb"].values()
    assert balancer["enable_deletion_protection"] is True
    assert "access_logs" not in balancer  # no bucket named: no access logs (AWS would refuse a bucket it cannot write)


# --- each colour's side -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("colour", ["blue", "green", "purple"])
def test_each_colour_admits_the_load_balancer_and_checks_the_traffic_stack_has_its_target_groups(
    app: Synthesized, colour: str
) -> None:
    rule = app.resource(colour, "aws_vpc_security_group_ingress_rule", "load-balancer-access/from-load-balancer")
    cluster = address(app, "aws_eks_cluster", "eks/cluster", colour)
    assert rule["security_group_id"] == f"${{{cluster}.vpc_config[0].cluster_security_group_id}}"
    traffic = "data.terraform_remote_state.traffic.outputs"
    assert rule["referenced_security_group_id"] == f"${{{traffic}.load_balancer_security_group_id}}"
    (check,) = rule["lifecycle"]["precondition"]
    for key in ("sample_app", "catalogue", "orders"):
        assert f'"{key}"' in check["condition"]
    assert check["condition"].startswith(f'${{alltrue([contains(keys(lookup({traffic}.target_groups, "{colour}", {{}})),')
    assert check["error_message"].startswith(f"the traffic stack has no target group for every application of {colour} yet")
    assert check["error_message"].endswith("run `cdktf deploy traffic` first")


@pytest.mark.parametrize("colour", ["blue", "green", "purple"])
def test_the_facts_name_each_applications_target_group_of_the_colour_only(app: Synthesized, colour: str) -> None:
    (root,) = [r for r in app.resources(colour, "helm_release").values() if r["name"] == "app-of-apps"]
    (values,) = root["values"]
    read = set(re.findall(r"traffic\.outputs\.target_groups\.(\w+)\.(\w+)\}", values))
    assert read == {(colour, "sample_app"), (colour, "catalogue"), (colour, "orders")}


def test_every_construct_id_of_the_stacks_own_parts_is_reserved_from_the_applications(config: Config) -> None:
    """An application's routes take its name as their construct id, beside the stack's own parts: an application by the
    name of one of them passed the rules and then crashed the build ("There is already a Construct with name
    'weights' in TerraformStack [traffic]"). Every own id an application's name could spell is reserved: built with
    every part (the variant turns the web ACL on), the ids found are exactly the reserved ones."""
    from cdktf import Testing

    from stacks.traffic import TrafficStack

    stack = TrafficStack(Testing.app(), config=config)
    own = {child.node.id for child in stack.node.children} - {app.name for app in applications(config)}
    assert config.traffic.waf.enabled
    assert {id_ for id_ in own if re.fullmatch(APPLICATION_PATTERN, id_)} == TRAFFIC_CONSTRUCT_IDS
