"""The typed config: defaults, loading, and one `test_fails_...` per validation rule."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from model.config import (
    LOUD,
    PLACEHOLDER_API_NETWORK,
    SUPPORTED_KUBERNETES_VERSIONS,
    ApplicationRelease,
    ClusterConfig,
    Config,
    application,
    image_repository_name,
    subnet_cidrs,
)
from model.loading import ConfigError, config_from_dict, load_config
from model.platform import ARGO_CD, VERSIONED, component
from model.rules import config_warnings
from tests.support.configs import (
    CONNECTION_ARN,
    EXAMPLE_FILE,
    PINNED_COMMIT,
    SAMPLE_APP,
    SAMPLE_APPLICATIONS,
    THREE_APPLICATIONS,
    example,
    example_raw,
    named_release,
    release_of,
    validated,
    with_api_access,
)
from tests.support.refusals import one_problem, problems_of


def clusters(**colours: dict[str, Any]) -> dict[str, Any]:
    """These colours, running the example's applications (which named_release names)."""
    return {"applications": SAMPLE_APPLICATIONS, "clusters": colours}


def sample_app(**changes: Any) -> dict[str, Any]:
    """The example's sample app, with some of its settings changed, on one colour (alone, it need name no release)."""
    return {
        "applications": {SAMPLE_APP: {**SAMPLE_APPLICATIONS[SAMPLE_APP], **changes}},
        "clusters": {"blue": {"kubernetes_version": "1.35", "weight": 100}},
    }


# --- defaults and loading -----------------------------------------------------------------------


def test_defaults_synthesize_blue_and_green_once_the_api_networks_are_named() -> None:
    config = validated({})  # with the operators' network (every other key at its default)
    assert {c: (k.kubernetes_version, k.weight) for c, k in config.clusters.items()} == {
        "blue": ("1.35", 100),
        "green": ("1.36", 0),
    }
    assert config.table.name == "eks-bg-users"
    assert config.table.deletion_protection is True
    assert config.state.backend == "local"
    assert dict(config.applications) == {}  # none unless named (the example names the sample app)


@pytest.mark.parametrize(
    ("raw", "protected"),
    [
        ({}, True),
        ({"deletion_protection": False}, False),
        ({"table": {"deletion_protection": False}}, False),  # the former name still switches both
        ({"deletion_protection": False, "table": {"deletion_protection": False}}, False),
    ],
)
def test_one_deletion_protection_switch_for_the_table_and_the_repository(raw: dict[str, Any], protected: bool) -> None:
    config = validated(raw)
    assert (config.deletion_protection, config.table.deletion_protection) == (protected, protected)


def test_fails_when_the_two_names_of_deletion_protection_disagree() -> None:
    problem = one_problem({"deletion_protection": True, "table": {"deletion_protection": False}})
    assert problem == (
        "table.deletion_protection: false is not allowed; it is the former name of deletion_protection, which is true: "
        "keep one of the two"
    )


def test_fails_on_a_zone_name_where_a_zone_id_is_meant() -> None:
    problem = one_problem({"network": {"excluded_zone_ids": ["use1-az3", "us-east-1a"]}})
    assert problem.startswith('network.excluded_zone_ids[1]: "us-east-1a" is not allowed; use an availability zone ID')


def test_fails_on_an_unknown_interface_endpoint() -> None:
    """The choices are the services AWS names `com.amazonaws.<region>.<name>` that a colour calls (written out here)."""
    problem = one_problem({"network": {"interface_endpoints": ["sts", "ecr"]}})
    assert problem == (
        'network.interface_endpoints[1]: "ecr" is not allowed; unknown interface endpoint; use one of '
        "ecr.api, ecr.dkr, sts, eks-auth"
    )
    assert one_problem({"network": {"interface_endpoints": "sts"}}).startswith('network.interface_endpoints: "sts"')


def test_interface_endpoints_default_to_none() -> None:
    assert validated({}).network.interface_endpoints == ()
    listed = validated({"network": {"interface_endpoints": ["eks-auth", "sts"]}})
    assert listed.network.interface_endpoints == ("eks-auth", "sts")


def test_config_is_frozen() -> None:
    config = validated({})
    with pytest.raises(ValidationError, match="frozen"):
        config.region = "us-east-1"
    with pytest.raises(TypeError):
        config.clusters["red"] = config.clusters["blue"]  # type: ignore[index]


def test_derived_names_follow_the_project() -> None:
    config = validated({"project": "shop", "state": {"backend": "s3", "bucket": "tf-state-bucket"}, **sample_app()})
    repository = image_repository_name(config, application(config, SAMPLE_APP))
    assert (config.table.name, repository) == ("shop-users", "shop/sample-app")
    assert (config.state.key_prefix, config.state.region) == ("shop", "ap-northeast-1")


def test_subnets_are_carved_per_az_without_overlap() -> None:
    public, private = subnet_cidrs(validated({"network": {"cidr": "10.20.0.0/20", "az_count": 3}}).network)
    assert public == ["10.20.0.0/23", "10.20.2.0/23", "10.20.4.0/23"]
    assert private == ["10.20.6.0/23", "10.20.8.0/23", "10.20.10.0/23"]


def test_loads_context_config_of_cdktf_json(tmp_path: Path) -> None:
    (tmp_path / "cdktf.json").write_text(json.dumps({"context": {"config": with_api_access({"region": "eu-west-1"})}}))
    config = load_config(tmp_path / "cdktf.json")
    assert config.region == "eu-west-1"
    assert config.state.directory == str(tmp_path / "terraform-state")


def test_loads_a_config_file_that_cdktf_json_names(tmp_path: Path) -> None:
    (tmp_path / "prod.json").write_text(json.dumps(with_api_access({"project": "prod-bg"})))
    (tmp_path / "cdktf.json").write_text(json.dumps({"context": {"config": "prod.json"}}))
    assert load_config(tmp_path / "cdktf.json").project == "prod-bg"


def test_the_shipped_example_is_valid_and_names_its_schema() -> None:
    """What a new project starts from (README: 'First deploy'); the schema line is for editors, not a setting."""
    assert set(example().clusters) == {"blue", "green"}
    assert example_raw() != json.loads(EXAMPLE_FILE.read_text())  # the file itself carries `$schema`


# --- one test per rule ------------------------------------------------------------------------


def test_fails_on_unknown_key_naming_the_allowed_keys() -> None:
    problem = one_problem({"network": {"cidr_block": "10.0.0.0/16"}})
    assert problem.startswith('network.cidr_block: "10.0.0.0/16"')
    assert (
        "unknown key; allowed keys: az_count, cidr, excluded_zone_ids, flow_log_retention_days, interface_endpoints, nat"
        in problem
    )


def test_fails_on_unknown_key_inside_a_colour() -> None:
    problem = one_problem(clusters(blue={"kubernetes_version": "1.34", "weight": 1, "wieght": 2}))
    assert problem.startswith("clusters.blue.wieght: 2 is not allowed; unknown key; allowed keys: addon_versions, ")
    assert problem.endswith(f"allowed keys: {', '.join(sorted(ClusterConfig.model_fields))}")
    assert {"applications", "kubernetes_version", "weight"} <= set(ClusterConfig.model_fields)


@pytest.mark.parametrize(("value", "expected"), [("100", "use an integer"), (True, "use an integer"), (1.5, "use an integer")])
def test_fails_on_wrong_type(value: Any, expected: str) -> None:
    problem = one_problem(clusters(blue={"kubernetes_version": "1.34", "weight": value}))
    assert problem == f"clusters.blue.weight: {json.dumps(value)} is not allowed; {expected}"


@pytest.mark.parametrize("weight", [-1, 256, 1000])
def test_fails_when_weight_is_outside_0_255(weight: int) -> None:
    problem = one_problem(clusters(blue={"kubernetes_version": "1.34", "weight": weight}))
    assert problem.startswith(f"clusters.blue.weight: {weight} is not allowed; use an integer 0-255")


def test_fails_when_all_weights_are_0() -> None:
    problem = one_problem(
        clusters(blue={"kubernetes_version": "1.34", "weight": 0}, green={"kubernetes_version": "1.35", "weight": 0})
    )
    assert problem.startswith('clusters.*.weight: {"blue": 0, "green": 0} is not allowed; at least one colour needs a weight')


@pytest.mark.parametrize("colour", ["Blue", "1blue", "blue_2", "blue-", "common", "a" * 21])
def test_fails_on_colour_that_is_not_a_stack_and_dns_label(colour: str) -> None:
    problem = one_problem(clusters(**{colour: {"kubernetes_version": "1.34", "weight": 1}}))
    assert problem.startswith(f'clusters.{colour}: "{colour}" is not allowed; a colour is a stack name and DNS label')


def test_fails_when_there_is_no_colour() -> None:
    assert one_problem({"clusters": {}}).startswith("clusters: {} is not allowed; name at least one colour")


@pytest.mark.parametrize("version", ["1.3", "v1.34", "1.340", "2.0", "1.34.1"])
def test_fails_on_kubernetes_version_format(version: str) -> None:
    problem = one_problem(clusters(blue={"kubernetes_version": version, "weight": 1}))
    assert problem.startswith(f"clusters.blue.kubernetes_version: \"{version}\" is not allowed; use the form '1.NN'")
    assert ", ".join(SUPPORTED_KUBERNETES_VERSIONS) in problem


def test_fails_on_unsupported_kubernetes_version() -> None:
    problem = one_problem(clusters(blue={"kubernetes_version": "1.28", "weight": 1}))
    assert problem.startswith(
        'clusters.blue.kubernetes_version: "1.28" is not allowed; not in the EKS calendar (model/eks_calendar.yaml); '
        "use one of 1.32"
    )


def test_fails_on_missing_kubernetes_version() -> None:
    problem = one_problem(clusters(red={"weight": 1}))
    assert problem.startswith('clusters.red.kubernetes_version: "" is not allowed; required for every colour')


def test_fails_on_duplicate_colour_in_the_json_file(tmp_path: Path) -> None:
    text = '{"context": {"config": {"clusters": {"blue": {"kubernetes_version": "1.34", "weight": 1}, "blue": {}}}}}'
    (tmp_path / "cdktf.json").write_text(text)
    with pytest.raises(ConfigError, match="duplicate key 'blue'"):
        load_config(tmp_path / "cdktf.json")


@pytest.mark.parametrize("cidr", ["10.0.0.0/33", "10.0.0.300/16", "not-a-cidr", "10.0.0.1/16", "fd00::/56"])
def test_fails_on_cidr_that_does_not_parse(cidr: str) -> None:
    problem = one_problem({"network": {"cidr": cidr}})
    assert problem.startswith(f"network.cidr: \"{cidr}\" is not allowed; use an IPv4 network such as '10.0.0.0/16'")


def test_fails_on_cidr_outside_the_vpc_size_limits() -> None:
    assert "between /16 and /28" in one_problem({"network": {"cidr": "10.0.0.0/8"}})


def test_fails_on_cidr_that_cannot_hold_the_subnets() -> None:
    problem = one_problem({"network": {"cidr": "10.0.0.0/22", "az_count": 3}})
    assert problem == (
        'network.cidr: "10.0.0.0/22" is not allowed; it cannot hold 6 subnets (2 per AZ) of /24 or larger; '
        "use /21 or larger (nodes and pods take their IPs from the subnets)"
    )


@pytest.mark.parametrize("count", [0, 1, 7])
def test_fails_on_az_count_outside_2_6(count: int) -> None:
    assert (
        one_problem({"network": {"az_count": count}}) == f"network.az_count: {count} is not allowed; use 2-6 availability zones"
    )


def test_fails_on_nat_mode() -> None:
    assert one_problem({"network": {"nat": "multi"}}) == 'network.nat: "multi" is not allowed; use one of "single", "per_az"'


def test_fails_on_log_retention_cloudwatch_refuses() -> None:
    assert one_problem({"network": {"flow_log_retention_days": 45}}).startswith(
        "network.flow_log_retention_days: 45 is not allowed"
    )


@pytest.mark.parametrize("zone", ["", "Example.com", "example.com.", "exa mple.com"])
def test_fails_on_empty_or_invalid_parent_zone(zone: str) -> None:
    problem = one_problem({"dns": {"parent_zone": zone}})
    assert problem.startswith(f'dns.parent_zone: "{zone}" is not allowed; name an existing public hosted zone')


def test_fails_on_sub_domain_with_a_dot() -> None:
    assert one_problem({"dns": {"sub_domain": "a.b"}}).startswith('dns.sub_domain: "a.b" is not allowed; use one DNS label')


def test_fails_on_s3_backend_without_bucket() -> None:
    problem = one_problem({"state": {"backend": "s3"}})
    assert problem == 'state.bucket: "" is not allowed; the s3 backend needs an existing S3 bucket name'


def test_fails_on_state_key_prefix_with_slashes() -> None:
    assert one_problem({"state": {"backend": "s3", "bucket": "my-state", "key_prefix": "/x/"}}).startswith("state.key_prefix")


def test_fails_on_project_name() -> None:
    assert one_problem({"project": "EKS"}).startswith('project: "EKS" is not allowed; use 3-20 lowercase letters')


def test_fails_on_region() -> None:
    assert one_problem({"region": "tokyo"}).startswith('region: "tokyo" is not allowed; use an AWS region code')


def test_fails_on_reserved_tag_key() -> None:
    assert one_problem({"tags": {"aws:owner": "me"}}).startswith('tags.aws:owner: "aws:owner" is not allowed; tag keys are')


@pytest.mark.parametrize("key", ["Project", "Stack", "ManagedBy"])
def test_fails_on_a_default_tag_key(key: str) -> None:
    """The guards find the running table, zone and target groups by the default tags: a configured one would hide them."""
    assert one_problem({"tags": {key: "other"}}).startswith(
        f"tags.{key}: \"{key}\" is not allowed; tag keys are 1-128 characters, may not start with 'aws:' and are not "
        "the default tags' (Project, Stack, ManagedBy)"
    )


def test_a_tag_key_that_only_starts_like_a_default_one_is_allowed() -> None:
    tags = {"ProjectCode": "42", "stack": "lower case is another key"}
    assert dict(validated({"tags": tags}).tags) == tags


def test_fails_on_table_and_image_repository_names() -> None:
    problems = problems_of({"table": {"name": "a b"}, **sample_app(image={"repository": "eks-bg/Sample_App"})})
    assert [p.split(":")[0] for p in problems] == ["table.name", "applications.sample-app.image.repository"]


def test_fails_on_node_group_sizes() -> None:
    problems = problems_of(
        clusters(blue={"kubernetes_version": "1.34", "weight": 1, "nodes": {"min_size": 3, "max_size": 2, "instance_types": []}})
    )
    assert [p.split(":")[0] for p in problems] == ["clusters.blue.nodes.instance_types", "clusters.blue.nodes.min_size"]


def test_fails_on_capacity_type() -> None:
    problem = one_problem(clusters(blue={"kubernetes_version": "1.34", "weight": 1, "nodes": {"capacity_type": "spot"}}))
    assert problem == 'clusters.blue.nodes.capacity_type: "spot" is not allowed; use one of "ON_DEMAND", "SPOT"'


def test_fails_on_a_config_that_is_not_an_object() -> None:
    assert one_problem(["blue"]) == '(top level): ["blue"] is not allowed; use a JSON object'


def test_reports_every_problem_at_once() -> None:
    problems = problems_of(
        {
            "netwrk": {},
            "network": {"az_count": 9},
            "dns": {"parent_zone": ""},
            "clusters": {"Blue": {"kubernetes_version": "1.3", "weight": 300}},
        }
    )
    keys = [p.split(":")[0] for p in problems]
    assert keys == [
        "netwrk",
        "network.az_count",
        "dns.parent_zone",
        "clusters.Blue",
        "clusters.Blue.kubernetes_version",
        "clusters.Blue.weight",
    ]
    with pytest.raises(ConfigError, match=r"\(6 problem\(s\)\)"):
        validated(
            {
                "netwrk": {},
                "network": {"az_count": 9},
                "dns": {"parent_zone": ""},
                "clusters": {"Blue": {"kubernetes_version": "1.3", "weight": 300}},
            }
        )


def test_fails_when_both_api_endpoints_are_off() -> None:
    problem = one_problem({"eks": {"endpoint_public_access": False, "endpoint_private_access": False}})
    assert problem == "eks.endpoint_public_access: false is not allowed; public and private access cannot both be off"


def test_fails_on_public_access_cidr_and_admin_arn() -> None:
    problems = problems_of(
        {"eks": {"public_access_cidrs": ["10.0.0.0/8", "home"], "admin_role_arns": ["arn:aws:iam::12:user/me"]}}
    )
    assert [p.split(":")[0] for p in problems] == ["eks.public_access_cidrs[1]", "eks.admin_role_arns[0]"]
    assert "use an IAM role ARN" in problems[1]


def test_fails_on_a_traffic_operator_that_is_no_role() -> None:
    problem = one_problem({"eks": {"traffic_operator_role_arn": "arn:aws:iam::123456789012:user/on-call"}})
    assert problem.startswith('eks.traffic_operator_role_arn: "arn:aws:iam::123456789012:user/on-call" is not allowed; ')
    assert "use an IAM role ARN" in problem


@pytest.mark.parametrize("admin_key", ["admin_role_arns", "deployer_role_arn"])
def test_fails_on_a_traffic_operator_that_is_an_admin_too(admin_key: str) -> None:
    """EKS keeps one access entry per principal: the operator's beside an admin's would fail the apply."""
    arn = "arn:aws:iam::123456789012:role/ops"
    admin = [arn] if admin_key == "admin_role_arns" else arn
    problem = one_problem({"eks": {admin_key: admin, "traffic_operator_role_arn": arn}})
    assert problem == (
        f'eks.traffic_operator_role_arn: "{arn}" is not allowed; use the traffic operator\'s own role, not one of '
        "eks.admin_role_arns or eks.deployer_role_arn (a principal has one access entry per cluster, and an admin reads "
        "Argo CD's Applications anyway); or leave it unset"
    )


def test_fails_on_git_url_and_revision() -> None:
    problems = problems_of({"gitops": {"repo_url": "github.com/me/repo", "revision": " "}})
    assert [p.split(":")[0] for p in problems] == ["gitops.repo_url", "gitops.revision"]


@pytest.mark.parametrize(("key", "value"), [("sync_interval_seconds", 5), ("sync_interval_seconds", 3601)])
def test_fails_on_traffic_timing(key: str, value: int) -> None:
    assert one_problem({"traffic": {key: value}}).startswith(f"traffic.{key}: {value} is not allowed")


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ({"teardown_timeout_seconds": 30}, "traffic.teardown_timeout_seconds: 30 is not allowed; use 60-7200 seconds"),
        ({"shift": {"step": 0}}, "traffic.shift.step: 0 is not allowed; use 1-255 (weight moved per step)"),
        ({"shift": {"step": 256}}, "traffic.shift.step: 256 is not allowed; use 1-255 (weight moved per step)"),
        ({"shift": {"interval_seconds": 59}}, "traffic.shift.interval_seconds: 59 is not allowed; use 60-3600 seconds"),
        ({"shift": {"max_5xx_ratio": 1.5}}, "traffic.shift.max_5xx_ratio: 1.5 is not allowed; use a ratio 0-1, e.g. 0.01"),
        ({"shift": {"max_5xx_ratio": "1%"}}, 'traffic.shift.max_5xx_ratio: "1%" is not allowed; use a number'),
        (
            {"shift": {"max_p99_seconds": 0}},
            "traffic.shift.max_p99_seconds: 0 is not allowed; use more than 0 and at most 60 seconds",
        ),
        (
            {"shift": {"min_requests": 0}},
            "traffic.shift.min_requests: 0 is not allowed; use 1 or more requests (to let a window without traffic pass, "
            "set traffic.shift.allow_idle)",
        ),
        (
            {"shift": {"dns_timeout_seconds": 600}},
            "traffic.shift.dns_timeout_seconds: 600 is not allowed; the shift no longer waits for DNS: it changes the "
            "shared load balancer's rules, which it reads back within seconds; remove the key (docs/upgrading.md: moving "
            "to the shared load balancer)",
        ),
        (
            {"access_logs_bucket": "Logs_Bucket"},
            'traffic.access_logs_bucket: "Logs_Bucket" is not allowed; use an S3 bucket name: 3-63 lowercase letters, '
            "digits, '.' or '-'",
        ),
    ],
)
def test_fails_on_shift_and_teardown_settings(raw: dict[str, Any], problem: str) -> None:
    assert one_problem({"traffic": raw}) == problem


def test_a_whole_number_is_a_number_but_true_is_not() -> None:
    assert validated({"traffic": {"shift": {"max_p99_seconds": 2}}}).traffic.shift.max_p99_seconds == 2.0
    assert one_problem({"traffic": {"shift": {"max_5xx_ratio": True}}}).endswith("is not allowed; use a number")


def test_fails_on_unknown_or_malformed_addon_pin() -> None:
    problems = problems_of(
        clusters(
            blue={"kubernetes_version": "1.34", "weight": 1, "addon_versions": {"cni": "v1.0.0-eksbuild.1", "coredns": "latest"}}
        )
    )
    assert problems[0] == (
        'clusters.blue.addon_versions.cni: "cni" is not allowed; '
        "unknown add-on; use one of eks-pod-identity-agent, vpc-cni, kube-proxy, coredns, aws-ebs-csi-driver"
    )
    assert problems[1] == (
        "clusters.blue.addon_versions.coredns: \"latest\" is not allowed; use an EKS add-on version such as 'v1.19.2-eksbuild.1'"
    )
    assert len(problems) == 2


def test_an_ebs_csi_driver_pin_older_than_the_one_tagging_its_volumes_is_refused() -> None:
    """Its shared role's policy acts only on volumes tagged with the cluster, which the driver writes from v1.58.0."""
    pins = {"aws-ebs-csi-driver": "v1.57.9-eksbuild.1", "coredns": "v1.11.4-eksbuild.2"}
    problems = problems_of(clusters(blue={"kubernetes_version": "1.35", "weight": 1, "addon_versions": pins}))
    assert problems == (
        'clusters.blue.addon_versions.aws-ebs-csi-driver: "v1.57.9-eksbuild.1" is not allowed; use v1.58.0 or newer: its '
        "shared role acts only on volumes tagged with the cluster, which the driver writes from v1.58.0 (`python -m "
        "tools.patch <colour>` lists the versions EKS offers)",
    )
    newer = {"aws-ebs-csi-driver": "v1.58.0-eksbuild.1"}
    config = validated(clusters(blue={"kubernetes_version": "1.35", "weight": 1, "addon_versions": newer}))
    assert config.clusters["blue"].addon_versions == newer


def test_fails_on_node_disk_and_max_unavailable() -> None:
    problems = problems_of(
        clusters(blue={"kubernetes_version": "1.34", "weight": 1, "nodes": {"disk_size_gib": 8, "max_unavailable": 5}})
    )
    assert [p.split(":")[0] for p in problems] == ["clusters.blue.nodes.disk_size_gib", "clusters.blue.nodes.max_unavailable"]


def test_fails_on_a_node_release_of_another_kubernetes_version() -> None:
    problem = one_problem(
        clusters(blue={"kubernetes_version": "1.35", "weight": 1, "nodes": {"release_version": "1.34.2-20251120"}})
    )
    assert problem == (
        'clusters.blue.nodes.release_version: "1.34.2-20251120" is not allowed; use an EKS-optimized AMI release of '
        "Kubernetes 1.35 (the colour's kubernetes_version), '1.35.<patch>-<YYYYMMDD>': `python -m tools.patch <colour>` "
        "lists the newest"
    )


def test_fails_on_a_node_release_that_is_no_ami_release() -> None:
    # 1.35.0 alone is a Kubernetes version, not an AMI release (the build date is missing).
    problem = one_problem(clusters(blue={"kubernetes_version": "1.35", "weight": 1, "nodes": {"release_version": "1.35.0"}}))
    assert problem == (
        'clusters.blue.nodes.release_version: "1.35.0" is not allowed; use an EKS-optimized AMI release such as '
        "'1.35.0-20251120'"
    )


def test_a_node_release_of_the_colours_version_stands_and_a_refused_version_is_reported_once() -> None:
    nodes = {"release_version": "1.35.0-20251120"}
    config = validated(clusters(blue={"kubernetes_version": "1.35", "weight": 1, "nodes": nodes}))
    assert config.clusters["blue"].nodes.release_version == "1.35.0-20251120"
    problems = problems_of(clusters(blue={"kubernetes_version": "1.9", "weight": 1, "nodes": nodes}))
    assert [p.split(":")[0] for p in problems] == ["clusters.blue.kubernetes_version"]


def test_warns_while_the_git_url_is_the_placeholder() -> None:
    from model.config import PLACEHOLDER_REPO_URL
    from model.rules import config_warnings

    default = config_warnings(validated({}))
    assert any(PLACEHOLDER_REPO_URL in w and "gitops.repo_url" in w for w in default)
    configured = validated(
        {
            "gitops": {"repo_url": "https://example.org/me/repo.git"},
            "eks": {"public_access_cidrs": ["198.51.100.0/24"]},
            "applications": {SAMPLE_APP: {**SAMPLE_APPLICATIONS[SAMPLE_APP], "image": {"tag": "3f2c1a9"}}},
            "clusters": {
                "blue": {
                    "kubernetes_version": "1.35",
                    "weight": 100,
                    **named_release(applications={SAMPLE_APP: {"image_tag": "3f2c1a9"}}, gitops_revision=PINNED_COMMIT),
                },
                "green": {"kubernetes_version": "1.36"},
            },
        }
    )
    assert config_warnings(configured) == []


def test_fails_on_image_build_without_a_usable_repository() -> None:
    """The sample app is of this repository and has a buildspec: its build clones gitops.repo_url."""
    problem = one_problem({"image": {"build_connection_arn": CONNECTION_ARN}, **sample_app()})
    assert problem == (
        'gitops.repo_url: "https://git.example.com/your-org/eks-blue-green.git" is not allowed; the image build of '
        "sample-app clones it: set it to the https:// URL of its repository"
    )
    assert validated({"image": {"build_connection_arn": CONNECTION_ARN}}).image.build_connection_arn  # nothing to build


def test_fails_on_malformed_connection_arn_and_image_tag() -> None:
    problems = problems_of(
        {
            "image": {"build_connection_arn": "arn:aws:iam::1:role/x"},
            "gitops": {"repo_url": "https://example.org/r.git"},
            **sample_app(image={"tag": ":latest"}),
        }
    )
    assert [p.split(":")[0] for p in problems] == ["image.build_connection_arn", "applications.sample-app.image.tag"]


@pytest.mark.parametrize(
    ("cidr", "why"),
    [
        ("10.0.128.0/20", "it overlaps network.cidr 10.0.0.0/16"),
        ("100.64.0.0/16", "use a private IPv4 network"),
        ("10.8.0.0/8", "/12 to /24"),
        ("x", "use a private"),
    ],
)
def test_fails_on_service_cidr_overlapping_the_vpc_or_out_of_range(cidr: str, why: str) -> None:
    problem = one_problem({"eks": {"service_ipv4_cidr": cidr}})
    assert problem.startswith(f'eks.service_ipv4_cidr: "{cidr}" is not allowed;')
    assert why in problem


# --- the traps of a schema library: JSON semantics, strictly ---------------------------------


def test_a_json_list_is_a_list_setting_and_a_string_is_not() -> None:
    config = validated({"eks": {"public_access_cidrs": ["203.0.113.0/24"]}})
    assert config.eks.public_access_cidrs == ("203.0.113.0/24",)
    assert one_problem({"eks": {"public_access_cidrs": "203.0.113.0/24"}}) == (
        'eks.public_access_cidrs: "203.0.113.0/24" is not allowed; use a list of strings'
    )


def test_a_bad_list_item_is_named_by_its_index() -> None:
    assert one_problem({"network": {"excluded_zone_ids": ["use1-az3", 5]}}) == (
        "network.excluded_zone_ids[1]: 5 is not allowed; use a string"
    )


@pytest.mark.parametrize(
    ("name", "ok"),
    [("eks-bg/app", True), ("eks-bg/" + "a" * 249, True), ("eks-bg/" + "a" * 250, False), ("a", False)],
)
def test_a_look_ahead_pattern_is_enforced(name: str, ok: bool) -> None:
    """ECR's name rule needs a look-ahead for its length (2-256): pydantic's default regex engine has none."""
    raw = sample_app(image={"repository": name})
    if ok:
        image = validated(raw).applications[SAMPLE_APP].image
        assert image is not None
        assert image.repository == name
    else:
        # A long value is shown by its first 100 characters and its length (model/problems.py ECHO_LIMIT).
        shown = name if len(name) <= 100 else f"{name[:100]}... ({len(name)} characters)"
        assert one_problem(raw).startswith(f'applications.sample-app.image.repository: "{shown}" is not allowed; use an ECR')


@pytest.mark.parametrize(("value", "kind"), [("true", "use true or false"), (1, "use true or false")])
def test_a_switch_takes_only_true_or_false(value: Any, kind: str) -> None:
    assert one_problem({"deletion_protection": value}) == f"deletion_protection: {json.dumps(value)} is not allowed; {kind}"


def test_a_section_that_is_not_an_object() -> None:
    assert one_problem({"network": "10.0.0.0/16"}) == 'network: "10.0.0.0/16" is not allowed; use a JSON object'


def test_a_refused_setting_keeps_its_default_so_the_rules_still_judge_the_rest() -> None:
    """A wrong type in one place does not hide a rule broken elsewhere in the same colour."""
    problems = problems_of(clusters(blue={"kubernetes_version": 134, "weight": 1, "nodes": {"min_size": 9}}))
    assert [p.split(":")[0] for p in problems] == ["clusters.blue.kubernetes_version", "clusters.blue.nodes.min_size"]
    assert problems[0] == "clusters.blue.kubernetes_version: 134 is not allowed; use a string"


def test_problems_are_listed_in_the_order_of_the_settings_colours_as_written() -> None:
    problems = problems_of(
        clusters(
            green={"kubernetes_version": "1.3", "weight": 1, **named_release()},
            blue={"kubernetes_version": "1.34", "weight": 300},
        )
    )
    assert [p.split(":")[0] for p in problems] == ["clusters.green.kubernetes_version", "clusters.blue.weight"]


# --- a colour's platform release (the component registry, model/platform.py) -----------------------


def test_a_colour_overrides_any_part_of_the_platform_release_and_inherits_the_rest() -> None:
    """Its charts, its Git revision, and of each application the revision (another repository's) and the image tag."""
    apps = {**THREE_APPLICATIONS, SAMPLE_APP: {**SAMPLE_APPLICATIONS[SAMPLE_APP], "image": {"tag": "1a2b3c4"}}}
    config = validated(
        {
            "applications": apps,
            "platform": {"external_dns": "1.20.0"},
            "clusters": {
                "blue": {"kubernetes_version": "1.34", "platform": {"argo_cd": "9.3.7"}},
                "green": {
                    "kubernetes_version": "1.35",
                    "gitops_revision": "platform-b",
                    "applications": {SAMPLE_APP: {"image_tag": "4f9c2e1"}, "orders": {"revision": "v5", "image_tag": "5.0"}},
                },
                # inherits nothing (it serves)
                "serving": {"kubernetes_version": "1.33", "weight": 100, **named_release(applications=release_of(apps))},
            },
        }
    )
    blue, green = config.release("blue"), config.release("green")
    dns = component("external-dns")
    assert (blue.platform.version(ARGO_CD), blue.platform.version(dns), blue.gitops_revision) == ("9.3.7", "1.20.0", "main")
    assert dict(blue.applications) == {
        SAMPLE_APP: ApplicationRelease(revision="main", image_tag="1a2b3c4"),  # this repository: the colour's revision
        "catalogue": ApplicationRelease(revision="catalogue-v1.8.0", image_tag=None),  # no image of ours
        "orders": ApplicationRelease(revision="orders-v4.2.1", image_tag="4.2.1"),
    }
    assert (green.platform.version(ARGO_CD), green.platform.version(dns), green.gitops_revision) == (
        ARGO_CD.chart.default if ARGO_CD.chart else None,
        "1.20.0",
        "platform-b",
    )
    assert dict(green.applications) == {
        SAMPLE_APP: ApplicationRelease(revision="platform-b", image_tag="4f9c2e1"),
        "catalogue": ApplicationRelease(revision="catalogue-v1.8.0", image_tag=None),
        "orders": ApplicationRelease(revision="v5", image_tag="5.0"),
    }


def test_fails_on_a_chart_version_the_table_does_not_know() -> None:
    problem = one_problem(clusters(blue={"kubernetes_version": "1.34", "weight": 1, "platform": {"external_dns": "1.22.0"}}))
    assert problem == (
        'clusters.blue.platform.external_dns: "1.22.0" is not allowed; use a version of the external-dns chart from the '
        "compatibility table (argocd/apps/platform/external-dns/component.yaml): 1.21.1, 1.20.0"
    )


def test_fails_on_a_colour_whose_own_chart_is_not_known_to_work_with_its_kubernetes() -> None:
    problem = one_problem(clusters(green={"kubernetes_version": "1.35", "weight": 1, "platform": {"argo_cd": "9.3.7"}}))
    assert problem == (
        'clusters.green.platform.argo_cd: "9.3.7" is not allowed; green runs Kubernetes 1.35, and the argo-cd chart 9.3.7 '
        "is known to work with 1.31, 1.32, 1.33, 1.34 only; use 10.4.1 or 10.2.3 or 10.1.4 or 9.4.18 (compatibility table: "
        "argocd/apps/platform/argo-cd/component.yaml)"
    )


def test_fails_on_a_project_release_one_colour_cannot_run_naming_that_colour() -> None:
    problems = problems_of(
        clusters(blue={"kubernetes_version": "1.34", "weight": 1, **named_release()}, green={"kubernetes_version": "1.35"})
        | {"platform": {"argo_cd": "9.3.7"}}
    )
    assert problems == (
        'clusters.green.platform.argo_cd: "9.3.7" is not allowed; green runs Kubernetes 1.35, and the argo-cd chart 9.3.7 '
        "(from platform.argo_cd) is known to work with 1.31, 1.32, 1.33, 1.34 only; use 10.4.1 or 10.2.3 or 10.1.4 or 9.4.18 "
        "(compatibility table: argocd/apps/platform/argo-cd/component.yaml)",
    )


def test_fails_on_a_serving_colour_that_inherits_part_of_its_release_naming_each_key_and_its_value() -> None:
    """Of its applications too: the image tag of each with an image, the revision of each from another repository."""
    release = named_release(platform={"argo_cd": "9.4.18"}, applications={"orders": {"image_tag": "4.2.1"}})
    problem = one_problem(
        {
            "applications": THREE_APPLICATIONS,
            "gitops": {"revision": "v2"},
            "clusters": {
                "blue": {"kubernetes_version": "1.34", "weight": 100, **release},
                "green": {
                    "kubernetes_version": "1.35",
                    "weight": 5,
                    **named_release(applications=release_of(THREE_APPLICATIONS)),
                },
            },
        }
    )
    # Every chart of the registry but Argo CD's, which blue names, at the project's default: the keys it would inherit.
    inherited = {f"platform.{c.key}": c.chart.default for c in VERSIONED if c.chart and c is not ARGO_CD}
    inherited |= {
        "applications.sample-app.image_tag": "0.1.0",
        "applications.catalogue.revision": "catalogue-v1.8.0",
        "applications.orders.revision": "orders-v4.2.1",
    }
    assert problem == (
        f"clusters.blue: {json.dumps(inherited)} is not allowed; blue serves traffic (weight 100) "
        "beside another colour, so its entry names its whole release and nothing but an edit of clusters.blue changes "
        "what it runs; these keys would be inherited from the project (with the values shown). Read what blue runs now "
        "(its state: `terraform "
        "-chdir=cdktf.out/stacks/blue show`, or `cdktf diff blue` once pinned: no change means the pins are right) and "
        "set each under clusters.blue"
    )


def test_a_colour_may_inherit_its_release_alone_or_without_weight() -> None:
    alone = validated(clusters(blue={"kubernetes_version": "1.34", "weight": 100}))
    beside = validated(
        clusters(blue={"kubernetes_version": "1.34", "weight": 100, **named_release()}, green={"kubernetes_version": "1.35"})
        | {"gitops": {"revision": "next"}}
    )
    assert (alone.release("blue").gitops_revision, beside.release("green").gitops_revision) == ("main", "next")


def test_fails_on_a_colour_revision_or_image_tag_that_is_malformed() -> None:
    orders = {"revision": " ", "image_tag": ":x"}
    problems = problems_of(
        {
            "applications": THREE_APPLICATIONS,
            "clusters": {
                "blue": {"kubernetes_version": "1.34", "weight": 1, "gitops_revision": " ", "applications": {"orders": orders}}
            },
        }
    )
    assert problems == (
        'clusters.blue.gitops_revision: " " is not allowed; name a branch, tag or commit',
        'clusters.blue.applications.orders.revision: " " is not allowed; name a branch, tag or commit',
        "clusters.blue.applications.orders.image_tag: \":x\" is not allowed; use an image tag (letters, digits, '._-')",
    )


def test_every_supported_version_has_a_chart_of_each_component_and_the_defaults_run_the_default_colours() -> None:
    """A colour on any version of the calendar can be given a platform release from the table; the current release
    runs on the versions the default colours run (it may leave out a version in extended support)."""
    missing = {c.key: [k for k in SUPPORTED_KUBERNETES_VERSIONS if not c.working_versions(k)] for c in VERSIONED}
    assert missing == {c.key: [] for c in VERSIONED}
    defaults = {cluster.kubernetes_version for cluster in Config().clusters.values()}
    assert {c.key: sorted(defaults - set(c.known_kubernetes(c.chart.default))) for c in VERSIONED if c.chart} == {
        c.key: [] for c in VERSIONED
    }


def test_the_table_names_each_chart_version_once_and_only_known_kubernetes_versions() -> None:
    for versioned in VERSIONED:
        assert versioned.chart
        rows = [r.version for r in versioned.chart.releases]
        assert len(rows) == len(set(rows)), versioned.name
        assert all(re.fullmatch(r"1\.\d{2}", k) for r in versioned.chart.releases for k in r.kubernetes)
    assert ARGO_CD.working_versions("1.36") == ("10.4.1", "10.2.3")  # only Argo CD 3.5 is tested on 1.36
    assert ARGO_CD.working_versions("1.35") == ("10.4.1", "10.2.3", "10.1.4", "9.4.18")


# --- who reaches the clusters' API ------------------------------------------------------------------

API_REFUSAL = (
    "eks.public_access_cidrs: [] is not allowed; while eks.endpoint_public_access is true (the default), list the IPv4 "
    "networks the Kubernetes API may be reached from: where `cdktf deploy` runs and your operators work (offices, VPN, CI "
    "runners' egress addresses), e.g. ['198.51.100.0/24']; or set eks.endpoint_public_access to false and deploy from "
    "inside the VPC"
)


@pytest.mark.parametrize("eks", [{}, {"public_access_cidrs": []}, {"endpoint_public_access": True}])
def test_fails_on_a_public_api_endpoint_without_its_networks(eks: dict[str, Any]) -> None:
    """No default: the internet was one. Refused, not made private: a colour deployed open before would lose its API to
    the Terraform deploying it, half-way through an apply."""
    with pytest.raises(ConfigError) as caught:
        config_from_dict({"eks": eks})
    assert caught.value.problems == (API_REFUSAL,)


def test_a_private_api_endpoint_needs_no_networks() -> None:
    config = config_from_dict({"eks": {"endpoint_public_access": False}})
    assert config.eks.public_access_cidrs == ()
    assert not [w for w in config_warnings(config) if "public_access_cidrs" in w]


def api_warnings(cidrs: list[str], **eks: Any) -> list[str]:
    config = config_from_dict({"eks": {"public_access_cidrs": cidrs, **eks}})
    return [w for w in config_warnings(config) if "public_access_cidrs" in w]


def test_warns_while_the_api_network_is_the_documentation_placeholder() -> None:
    assert example().eks.public_access_cidrs == (PLACEHOLDER_API_NETWORK,)  # what the shipped files name
    (warning,) = api_warnings([PLACEHOLDER_API_NETWORK, "198.51.100.0/24"])
    assert warning.startswith("eks.public_access_cidrs names 203.0.113.0/24, the documentation placeholder: nobody")
    assert api_warnings(["198.51.100.0/24", "192.0.2.17/32"]) == []


@pytest.mark.parametrize("cidrs", [["0.0.0.0/0"], ["198.51.100.0/24", "0.0.0.0/0"], ["0.0.0.0/1", "128.0.0.0/1"]])
def test_warns_loudly_while_the_whole_internet_reaches_the_api(cidrs: list[str]) -> None:
    """Allowed (the operators' choice), but never quietly: main.py frames it at every synth (tests/test_main.py)."""
    (warning,) = api_warnings(cidrs)
    assert warning.startswith(f"{LOUD}eks.public_access_cidrs {cidrs} lets the whole internet reach the Kubernetes API")
    assert api_warnings(cidrs, endpoint_public_access=False) == []  # no public endpoint: nothing reaches it


def test_fails_on_an_api_network_that_does_not_parse() -> None:
    assert one_problem({"eks": {"public_access_cidrs": ["198.51.100.0/33"]}}) == (
        "eks.public_access_cidrs[0]: \"198.51.100.0/33\" is not allowed; use an IPv4 network such as '198.51.100.0/24'"
    )
