"""The common stack: every shared resource with the properties the architecture asks for (docs/architecture.md)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cdktf import Testing

from components.deletion_guard import GUARD_COMMAND, REFUSE_WHILE_IN_USE, REFUSE_WHILE_PROTECTED
from components.destroy_hook import with_failure_grace
from model.config import Config, shared_roles, subnet_cidrs
from model.contract import common_outputs
from model.hooks import GUARD_ENV
from model.platform import component
from model.workloads import Workload
from tests.support.configs import CONNECTION_ARN, ORDERS_POLICY, REPO_URL, VARIANT, example, validated
from tests.support.synth import Synthesized, references

COMMON = "common"
EXAMPLE_ROLES = shared_roles(example())
VARIANT_ROLES = shared_roles(validated(VARIANT))
IMAGE = "sample-app-image"  # the sample app's repository (its image), named after it
# The add-ons' roles and the AWS managed policy each holds (AWS Managed Policy reference): written out, not read from the
# model, so a changed policy name fails here.
AWS_MANAGED = {"vpc-cni": "AmazonEKS_CNI_Policy", "aws-ebs-csi-driver": "AmazonEBSCSIDriverEKSClusterScopedPolicy"}


@pytest.fixture(scope="module")
def app(example_app: Synthesized) -> Synthesized:
    return example_app


@pytest.fixture(scope="module")
def text(app: Synthesized) -> str:
    return app.text(COMMON)


@pytest.fixture(scope="module")
def config() -> Config:
    return example()


@pytest.fixture(scope="module")
def variant(variant_app: Synthesized) -> Synthesized:
    """Per-AZ NAT, two AZs, deletion protection off (tests/support/configs.VARIANT)."""
    return variant_app


def address(app: Synthesized, resource_type: str, path: str) -> str:
    """`type.name` of one resource in `app`'s common stack, found by its construct path."""
    stack = app.json(COMMON)["resource"][resource_type]
    (name,) = [n for n, body in stack.items() if body["//"]["metadata"]["path"] == f"{COMMON}/{path}"]
    return f"{resource_type}.{name}"


def ref(app: Synthesized, resource_type: str, path: str, attribute: str) -> str:
    """The `${type.name.attr}` expression that points at one resource's attribute."""
    return f"${{{address(app, resource_type, path)}.{attribute}}}"


def policy_of(app: Synthesized, role_path: str) -> dict[str, Any]:
    return dict(json.loads(app.resource(COMMON, "aws_iam_policy", f"{role_path}/policy")["policy"]))


# --- network -----------------------------------------------------------------------------------


def test_vpc(text: str, config: Config) -> None:
    assert Testing.to_have_resource_with_properties(
        text, "aws_vpc", {"cidr_block": config.network.cidr, "enable_dns_hostnames": True, "enable_dns_support": True}
    )


def test_one_public_and_one_private_subnet_per_az_with_elb_role_tags(app: Synthesized, config: Config) -> None:
    public, private = subnet_cidrs(config.network)
    subnets = app.resources(COMMON, "aws_subnet")
    assert len(subnets) == 2 * config.network.az_count == 6
    for i, cidr in enumerate(public):
        body = subnets[f"network/public-{i}"]
        assert (body["cidr_block"], body["tags"]["kubernetes.io/role/elb"], body["map_public_ip_on_launch"]) == (cidr, "1", False)
        # An index into the zones, never element(), which wraps around (tests/test_availability_zones.py).
        assert body["availability_zone"] == f"${{{zones_address(app)}.names[{i}]}}"
    for i, cidr in enumerate(private):
        body = subnets[f"network/private-{i}"]
        assert (body["cidr_block"], body["tags"]["kubernetes.io/role/internal-elb"]) == (cidr, "1")
        assert "kubernetes.io/role/elb" not in body["tags"]


def zones_address(app: Synthesized) -> str:
    (name,) = app.json(COMMON)["data"]["aws_availability_zones"]
    return f"data.aws_availability_zones.{name}"


def test_zones_leave_out_those_without_eks_and_too_few_fail_the_plan(app: Synthesized) -> None:
    zones = app.json(COMMON)["data"]["aws_availability_zones"][zones_address(app).rsplit(".", 1)[1]]
    assert zones["exclude_zone_ids"] == ["use1-az3", "usw1-az2", "cac1-az3", "cnn1-az4"]
    assert zones["filter"] == [{"name": "opt-in-status", "values": ["opt-in-not-required"]}]
    (check,) = zones["lifecycle"]["postcondition"]
    assert check["condition"] == "${length(self.names) >= 3}"
    assert check["error_message"].startswith("network.az_count is 3, but ap-northeast-1 offers ${length(self.names)}")


def test_the_network_guard_reads_the_live_network_by_name_never_through_what_it_guards(app: Synthesized, config: Config) -> None:
    """The refusal to replace the network (components/network.py) is checked at every plan, whatever is being replaced:
    its data sources find the VPC and the subnets by their Name tags, and neither they nor the two preconditions on the
    VPC refer to a managed resource (one being replaced is unknown until the apply, and the check would wait for it).
    The refusals themselves are planned against the emulator in tests/test_rehearsal.py."""
    data = app.json(COMMON)["data"]
    guard = {kind: data[kind] for kind in ("aws_vpcs", "aws_vpc", "aws_subnets", "aws_subnet")}
    named, as_configured = sorted(guard["aws_vpcs"].values(), key=lambda vpcs: len(vpcs["filter"]))
    assert named["filter"] == [{"name": "tag:Name", "values": [config.project]}]
    assert as_configured["filter"] == [*named["filter"], {"name": "cidr", "values": [config.network.cidr]}]
    (subnets,) = guard["aws_subnets"].values()
    assert subnets["filter"] == [{"name": "tag:Name", "values": [f"{config.project}-public-*", f"{config.project}-private-*"]}]
    (vpc,) = app.resources(COMMON, "aws_vpc").values()
    by_cidr, by_subnets = vpc["lifecycle"]["precondition"]
    assert by_cidr["error_message"].startswith(f"network.cidr is {config.network.cidr}, but the VPC {config.project} runs ")
    assert by_subnets["error_message"].startswith(f"network.az_count is {config.network.az_count}, but the VPC ")
    public, private = subnet_cidrs(config.network)
    for kind, cidrs in (("public", public), ("private", private)):
        for i, cidr in enumerate(cidrs):
            assert f'"{config.project}-{kind}-{i}" = "{cidr}"' in by_subnets["condition"]
    managed = re.compile(r"(?<!data\.)\baws_[a-z_]+\.")
    assert managed.findall(json.dumps([guard, by_cidr, by_subnets])) == []


def test_default_security_group_is_locked_down(app: Synthesized) -> None:
    body = app.resource(COMMON, "aws_default_security_group", "network/default-sg")
    assert "ingress" not in body
    assert "egress" not in body


def test_single_nat_serves_every_private_subnet(app: Synthesized) -> None:
    nats = app.resources(COMMON, "aws_nat_gateway")
    assert list(nats) == ["egress/nat-0"]
    nat = ref(app, "aws_nat_gateway", "egress/nat-0", "id")
    routes = app.resources(COMMON, "aws_route")
    assert {routes[f"egress/private-default-{i}"]["nat_gateway_id"] for i in range(3)} == {nat}
    assert routes["egress/public-default"]["gateway_id"] == ref(app, "aws_internet_gateway", "egress/igw", "id")


def test_nat_per_az_when_configured(variant: Synthesized) -> None:
    nats = variant.resources(COMMON, "aws_nat_gateway")
    assert sorted(nats) == ["egress/nat-0", "egress/nat-1"]
    routes = variant.resources(COMMON, "aws_route")
    targets = [routes[f"egress/private-default-{i}"]["nat_gateway_id"] for i in range(2)]
    assert len(set(targets)) == 2


# The endpoint service names, as AWS lists them (`aws ec2 describe-vpc-endpoint-services`), written out here.
GATEWAY_SERVICES = ["dynamodb", "s3"]
INTERFACE_SERVICES = ["ecr.api", "ecr.dkr", "eks-auth", "sts"]


def endpoints(synthesized: Synthesized, kind: str) -> dict[str, dict[str, Any]]:
    """common's VPC endpoints of one type (Gateway, Interface), by the service each reaches."""
    found = synthesized.resources(COMMON, "aws_vpc_endpoint").values()
    return {body["service_name"]: body for body in found if body["vpc_endpoint_type"] == kind}


@pytest.mark.parametrize(("fixture", "zones"), [("app", 3), ("variant", 2)])
def test_dynamodb_and_s3_gateway_endpoints_on_every_private_route_table(
    fixture: str, zones: int, request: pytest.FixtureRequest
) -> None:
    """Always, whatever the configuration: free, and the table and S3 (ECR's layers too) stay reachable from a zone whose
    NAT gateway is down."""
    synthesized: Synthesized = request.getfixturevalue(fixture)
    region = synthesized.json(COMMON)["provider"]["aws"][0]["region"]
    gateways = endpoints(synthesized, "Gateway")
    assert sorted(gateways) == [f"com.amazonaws.{region}.{service}" for service in GATEWAY_SERVICES]
    private_tables = [ref(synthesized, "aws_route_table", f"egress/private-{i}", "id") for i in range(zones)]
    for body in gateways.values():
        assert sorted(body["route_table_ids"]) == sorted(private_tables)
        assert body["vpc_id"] == ref(synthesized, "aws_vpc", "network/vpc", "id")
        assert "subnet_ids" not in body
        assert "security_group_ids" not in body


def test_no_interface_endpoint_and_no_group_for_them_unless_listed(app: Synthesized) -> None:
    assert endpoints(app, "Interface") == {}
    assert app.resources(COMMON, "aws_security_group") == {}


def test_interface_endpoints_listed_sit_in_the_private_subnets_with_private_dns(variant: Synthesized) -> None:
    """The variant lists all four (tests/support/configs.VARIANT): each in both private subnets, its service's own host
    name answering with its addresses."""
    region = variant.json(COMMON)["provider"]["aws"][0]["region"]
    interfaces = endpoints(variant, "Interface")
    assert sorted(interfaces) == [f"com.amazonaws.{region}.{service}" for service in INTERFACE_SERVICES]
    subnets = [ref(variant, "aws_subnet", f"network/private-{i}", "id") for i in range(2)]
    group = ref(variant, "aws_security_group", "endpoints/interface-sg", "id")
    for body in interfaces.values():
        assert body["private_dns_enabled"] is True
        assert sorted(body["subnet_ids"]) == sorted(subnets)
        assert body["security_group_ids"] == [group]
        assert "route_table_ids" not in body


def test_the_interface_endpoints_admit_https_from_the_vpc_only(variant: Synthesized) -> None:
    group = ref(variant, "aws_security_group", "endpoints/interface-sg", "id")
    ingress = [
        r for r in variant.resources(COMMON, "aws_vpc_security_group_ingress_rule").values() if r["security_group_id"] == group
    ]
    assert [(r["ip_protocol"], r["from_port"], r["to_port"], r["cidr_ipv4"]) for r in ingress] == [
        ("tcp", 443, 443, "10.8.0.0/20")  # the variant's network.cidr
    ]
    egress = variant.resources(COMMON, "aws_vpc_security_group_egress_rule").values()
    assert [r for r in egress if r["security_group_id"] == group] == []
    assert "ingress" not in variant.resource(COMMON, "aws_security_group", "endpoints/interface-sg")


def test_an_endpoint_listed_twice_is_made_once() -> None:
    from cdktf import App, TerraformStack

    from components.vpc_endpoints import VpcEndpoints

    stack = TerraformStack(App(), "x")
    VpcEndpoints(
        stack,
        "endpoints",
        name="x",
        region="eu-west-1",
        vpc_id="vpc-1",
        vpc_cidr="10.0.0.0/16",
        private_subnet_ids=["subnet-1"],
        private_route_table_ids=["rtb-1"],
        interface_services=["sts", "sts"],
    )
    made = json.loads(Testing.synth(stack))["resource"]["aws_vpc_endpoint"].values()
    assert sorted(e["service_name"] for e in made) == [
        "com.amazonaws.eu-west-1.dynamodb",
        "com.amazonaws.eu-west-1.s3",
        "com.amazonaws.eu-west-1.sts",
    ]


@pytest.mark.parametrize(("fixture", "count"), [("app", 1), ("variant", 2)])
def test_nat_public_ips_are_published(fixture: str, count: int, request: pytest.FixtureRequest) -> None:
    """The addresses nodes come from when a colour's API endpoint is public only (tests/test_cluster_stack.py)."""
    synthesized: Synthesized = request.getfixturevalue(fixture)
    published = synthesized.json(COMMON)["output"]["nat_public_ips"]["value"]
    assert published == [ref(synthesized, "aws_eip", f"egress/nat-eip-{i}", "public_ip") for i in range(count)]


def test_flow_logs_to_cloudwatch_with_retention(app: Synthesized, text: str, config: Config) -> None:
    group = app.resource(COMMON, "aws_cloudwatch_log_group", "flow-logs/group")
    assert group["retention_in_days"] == config.network.flow_log_retention_days == 365
    assert group["kms_key_id"] == ref(app, "aws_kms_key", "logs-key/key", "arn")
    assert Testing.to_have_resource_with_properties(
        text,
        "aws_flow_log",
        {
            "traffic_type": "ALL",
            "log_destination_type": "cloud-watch-logs",
            "log_destination": ref(app, "aws_cloudwatch_log_group", "flow-logs/group", "arn"),
            "vpc_id": ref(app, "aws_vpc", "network/vpc", "id"),
        },
    )
    publish = json.loads(app.resource(COMMON, "aws_iam_role_policy", "flow-logs/publish")["policy"])
    group_arn = ref(app, "aws_cloudwatch_log_group", "flow-logs/group", "arn")
    assert publish["Statement"][0]["Resource"] == [group_arn, f"{group_arn}:*"]
    trust = json.loads(app.resource(COMMON, "aws_iam_role", "flow-logs/role")["assume_role_policy"])
    assert trust["Statement"][0]["Condition"]["StringEquals"]["aws:SourceAccount"].startswith("${data.aws_caller_identity")


# AWS, "IAM role for publishing flow logs to CloudWatch Logs": the role's policy must allow at least these.
FLOW_LOG_ACTIONS = {
    "logs:CreateLogGroup",
    "logs:CreateLogStream",
    "logs:PutLogEvents",
    "logs:DescribeLogGroups",
    "logs:DescribeLogStreams",
}


def test_flow_logs_role_has_every_action_aws_documents_scoped_to_its_group(app: Synthesized) -> None:
    publish = json.loads(app.resource(COMMON, "aws_iam_role_policy", "flow-logs/publish")["policy"])
    group_arn = ref(app, "aws_cloudwatch_log_group", "flow-logs/group", "arn")
    granted = {
        action: statement["Resource"]
        for statement in publish["Statement"]
        for action in ([statement["Action"]] if isinstance(statement["Action"], str) else statement["Action"])
    }
    assert set(granted) == FLOW_LOG_ACTIONS
    # DescribeLogGroups has no resource-level permissions (it lists); everything else names this group only.
    assert {a: r for a, r in granted.items() if r == "*"} == {"logs:DescribeLogGroups": "*"}
    assert all(r == [group_arn, f"{group_arn}:*"] for a, r in granted.items() if a != "logs:DescribeLogGroups")


# --- DNS and certificate -----------------------------------------------------------------------


def test_sub_zone_is_delegated_from_the_parent_zone(app: Synthesized, text: str, config: Config) -> None:
    assert Testing.to_have_data_source_with_properties(text, "aws_route53_zone", {"name": "example.com", "private_zone": False})
    assert Testing.to_have_resource_with_properties(text, "aws_route53_zone", {"name": config.dns.zone_name})
    delegation = app.resource(COMMON, "aws_route53_record", "dns/delegation")
    assert delegation["type"] == "NS"
    assert delegation["name"] == "eks.example.com"
    assert delegation["records"] == ref(app, "aws_route53_zone", "dns/zone", "name_servers")
    assert delegation["zone_id"].startswith("${data.aws_route53_zone.")


def test_wildcard_certificate_validated_by_dns_in_the_sub_zone(app: Synthesized, text: str) -> None:
    assert Testing.to_have_resource_with_properties(
        text,
        "aws_acm_certificate",
        {"domain_name": "eks.example.com", "subject_alternative_names": ["*.eks.example.com"], "validation_method": "DNS"},
    )
    records = app.resource(COMMON, "aws_route53_record", "certificate/validation")
    cert = address(app, "aws_acm_certificate", "certificate/cert")
    # Iterating the set itself: keys (domain names) are known at plan, before the certificate exists.
    assert records["for_each"] == f"${{{{ for o in {cert}.domain_validation_options : o.domain_name => o }}}}"
    assert records["zone_id"] == ref(app, "aws_route53_zone", "dns/zone", "zone_id")
    assert records["allow_overwrite"] is True
    wait = app.resource(COMMON, "aws_acm_certificate_validation", "certificate/validation-wait")
    assert "aws_route53_record.certificate_validation" in wait["validation_record_fqdns"]
    # ACM can only resolve the validation records once the parent delegates to the sub-zone.
    assert wait["depends_on"] == [address(app, "aws_route53_record", "dns/delegation")]


# --- table, image repository -------------------------------------------------------------------


def test_table(text: str, config: Config) -> None:
    assert Testing.to_have_resource_with_properties(
        text,
        "aws_dynamodb_table",
        {
            "name": config.table.name,
            "hash_key": "UserId",
            "attribute": [{"name": "UserId", "type": "S"}],
            "billing_mode": "PAY_PER_REQUEST",
            "point_in_time_recovery": {"enabled": True},
            "server_side_encryption": {"enabled": True},
            "deletion_protection_enabled": True,
        },
    )


def test_a_protected_common_stops_its_destroy_first_and_says_how_to_lift_it(app: Synthesized, config: Config) -> None:
    """The guard depends on every other resource of common: a destroy takes it first, and its destroy
    provisioner fails while protected, so nothing else goes; its message names the switch."""
    guard = app.resource(COMMON, "terraform_data", "deletion-guard/guard")
    everything = {
        f"{kind}.{name}" for kind, bodies in app.json(COMMON)["resource"].items() for name in bodies if kind != "terraform_data"
    }
    assert set(guard["depends_on"]) == everything
    assert guard["input"]["protected"] is True
    assert 'set "deletion_protection": false' in guard["input"]["message"]
    assert config.table.name in guard["input"]["message"]
    (provisioner,) = guard["provisioner"]
    assert provisioner["local-exec"]["when"] == "destroy"
    assert provisioner["local-exec"]["environment"] == {
        "PROTECTED": "${self.input.protected}",
        "MESSAGE": "${self.input.message}",
        GUARD_ENV: "${jsonencode(self.input)}",
    }
    # AWS keeps the data too: DynamoDB deletion protection, and no force_delete of a repository holding images.
    assert app.resource(COMMON, "aws_dynamodb_table", "table/table")["deletion_protection_enabled"] is True
    assert app.resource(COMMON, "aws_ecr_repository", f"{IMAGE}/repo")["force_delete"] is False


@pytest.mark.parametrize(("protected", "exit_status"), [(True, 1), (False, 0)])
def test_the_guards_destroy_command_refuses_only_while_protected(protected: bool, exit_status: int) -> None:
    done = subprocess.run(
        ["sh", "-c", REFUSE_WHILE_PROTECTED],
        env={"PROTECTED": json.dumps(protected), "MESSAGE": "deletion_protection is on: ..."},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == exit_status
    assert done.stderr == ("deletion_protection is on: ...\n" if protected else "")


@pytest.mark.parametrize("fixture", ["app", "variant"])
def test_the_guard_refuses_while_a_cluster_runs_in_commons_vpc_whatever_deletion_protection_says(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    """Protected or not (the variant is not), the guard's destroy runs tools.common_guard after the protection
    refusal, with common's VPC (a reference: destroy-time provisioners read only `self`), region and project in
    its input; tests/test_common_guard.py runs it, by Terraform too."""
    synthesized: Synthesized = request.getfixturevalue(fixture)
    guard = synthesized.resource(COMMON, "terraform_data", "deletion-guard/guard")
    assert guard["input"]["vpc_id"] == ref(synthesized, "aws_vpc", "network/vpc", "id")
    assert (guard["input"]["region"], guard["input"]["project"]) == ("ap-northeast-1", "eks-bg")
    (provisioner,) = guard["provisioner"]
    assert provisioner["local-exec"]["command"] == with_failure_grace(GUARD_COMMAND)
    assert REFUSE_WHILE_IN_USE.endswith("-m tools.common_guard")
    assert provisioner["local-exec"]["environment"][GUARD_ENV] == "${jsonencode(self.input)}"


@pytest.mark.parametrize(
    ("protected", "said"), [(True, "deletion_protection is on: ...\n"), (False, "common_guard: no cdktf.json")]
)
def test_the_guards_command_checks_the_clusters_once_not_protected(protected: bool, said: str, tmp_path: Path) -> None:
    """Run where no project is above: protected, the shell refusal answers before any Python; unprotected, the
    cluster check is what runs next (it stops at once here, finding no project)."""
    done = subprocess.run(
        ["sh", "-c", GUARD_COMMAND],  # what with_failure_grace adds: tests/test_teardown_stack.py
        cwd=tmp_path,
        env={"PROTECTED": json.dumps(protected), "MESSAGE": "deletion_protection is on: ...", "PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stderr.startswith(said)) == (1 if protected else 2, True), done.stderr


def test_deletion_protection_off_lets_destroy_take_the_table_and_the_images(variant: Synthesized) -> None:
    table = variant.resource(COMMON, "aws_dynamodb_table", "table/table")
    assert table["deletion_protection_enabled"] is False
    # Without force_delete, ECR refuses to delete a repository holding images (RepositoryNotEmptyException).
    assert variant.resource(COMMON, "aws_ecr_repository", f"{IMAGE}/repo")["force_delete"] is True
    assert variant.resource(COMMON, "aws_ecr_repository", "orders-image/repo")["force_delete"] is True
    assert variant.resource(COMMON, "terraform_data", "deletion-guard/guard")["input"]["protected"] is False


def test_an_image_repository_per_application_with_an_image(app: Synthesized, text: str, variant: Synthesized) -> None:
    assert Testing.to_have_resource_with_properties(
        text,
        "aws_ecr_repository",
        {
            "name": "eks-bg/sample-app",  # <project>/<application>, the default
            "image_tag_mutability": "IMMUTABLE",
            "image_scanning_configuration": {"scan_on_push": True},
        },
    )
    repo = app.resource(COMMON, "aws_ecr_repository", f"{IMAGE}/repo")
    assert repo["encryption_configuration"] == [{"encryption_type": "KMS"}]
    # The variant's three applications: two with an image of the project's (catalogue's image is its own business).
    names = sorted(r["name"] for r in variant.resources(COMMON, "aws_ecr_repository").values())
    assert names == ["eks-bg/orders", "eks-bg/sample-app"]


def test_the_lifecycle_policy_never_expires_a_tagged_image(app: Synthesized) -> None:
    """A tag may be what the lagging colour runs: its pods must still pull it when they reschedule."""
    lifecycle = json.loads(app.resource(COMMON, "aws_ecr_lifecycle_policy", f"{IMAGE}/lifecycle")["policy"])
    assert lifecycle["rules"]
    assert [r["selection"]["tagStatus"] for r in lifecycle["rules"]] == ["untagged"] * len(lifecycle["rules"])
    assert {r["action"]["type"] for r in lifecycle["rules"]} == {"expire"}


# --- shared Pod Identity roles -----------------------------------------------------------------


@pytest.mark.parametrize("workload", VARIANT_ROLES, ids=lambda w: w.name)
def test_pod_identity_roles_trust_the_eks_pods_service_for_one_service_account(
    variant: Synthesized, config: Config, workload: Workload
) -> None:
    """Every platform component's role and every application's with a policy (the variant: sample-app, orders)."""
    app = variant
    path = workload.construct_id
    role = app.resource(COMMON, "aws_iam_role", f"{path}/role")
    assert role["name"] == f"{config.project}-{workload.name}"  # README: roles are `<project>-<component>`
    (statement,) = json.loads(role["assume_role_policy"])["Statement"]
    assert statement["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert sorted(statement["Action"]) == ["sts:AssumeRole", "sts:TagSession"]
    assert statement["Effect"] == "Allow"
    # Bound to one namespace and service account of this project's clusters, no one cluster, and to no key EKS Auth
    # is not documented to send (tests/test_pod_identity_roles.py checks which, and decides the trust).
    assert sorted(statement["Condition"]["StringEquals"]) == [
        "aws:RequestTag/kubernetes-namespace",
        "aws:RequestTag/kubernetes-service-account",
    ]
    assert statement["Condition"]["StringLike"] == {"aws:RequestTag/eks-cluster-name": f"{config.project}-*"}
    # AWS keeps the CNI's and the EBS CSI driver's policies in step with their add-ons.
    if workload.name in AWS_MANAGED:
        attachment = app.resource(COMMON, "aws_iam_role_policy_attachment", f"{path}/managed-0")
        managed = AWS_MANAGED[workload.name]
        assert attachment["policy_arn"] == f"arn:${{data.aws_partition.partition.partition}}:iam::aws:policy/{managed}"
        assert f"{path}/attachment" not in app.resources(COMMON, "aws_iam_role_policy_attachment")
    else:
        attachment = app.resource(COMMON, "aws_iam_role_policy_attachment", f"{path}/attachment")
        assert attachment["policy_arn"] == ref(app, "aws_iam_policy", f"{path}/policy", "arn")
    assert attachment["role"] == ref(app, "aws_iam_role", f"{path}/role", "name")


def test_an_application_without_a_policy_gets_no_role(variant: Synthesized) -> None:
    roles = {body["name"] for body in variant.resources(COMMON, "aws_iam_role").values()}
    assert {"eks-bg-sample-app", "eks-bg-orders"} <= roles
    assert "eks-bg-catalogue" not in roles


def test_an_applications_policy_is_its_document_filled(variant: Synthesized) -> None:
    """orders' own document (tests/fixtures/applications/orders/policy.json), its placeholders filled at synth."""
    document = policy_of(variant, "orders-role")
    written = json.loads((Path(__file__).parent.parent / ORDERS_POLICY).read_text())
    assert [s["Sid"] for s in document["Statement"]] == [s["Sid"] for s in written["Statement"]]
    assert document["Statement"][0]["Resource"] == ref(variant, "aws_dynamodb_table", "table/table", "arn")
    assert document["Statement"][1]["Resource"] == (
        "arn:${data.aws_partition.partition.partition}:sns:ap-northeast-1:${data.aws_caller_identity.account.account_id}:orders-*"
    )


def test_app_policy_reads_this_table_and_nothing_broader(app: Synthesized) -> None:
    (statement,) = policy_of(app, "sample-app-role")["Statement"]
    assert statement["Resource"] == ref(app, "aws_dynamodb_table", "table/table", "arn")
    assert sorted(statement["Action"]) == [
        "dynamodb:BatchGetItem",
        "dynamodb:DescribeTable",
        "dynamodb:GetItem",
        "dynamodb:Query",
        "dynamodb:Scan",
    ]
    # Attached as a policy of its own, not an AWS-managed one that reaches every table.
    attachment = app.resource(COMMON, "aws_iam_role_policy_attachment", "sample-app-role/attachment")
    assert attachment["policy_arn"] == ref(app, "aws_iam_policy", "sample-app-role/policy", "arn")


def test_external_dns_changes_records_in_the_sub_zone_only(app: Synthesized) -> None:
    statements = policy_of(app, "external-dns-role")["Statement"]
    zone_arn = ref(app, "aws_route53_zone", "dns/zone", "arn")
    writes = [s for s in statements if "route53:ChangeResourceRecordSets" in s["Action"]]
    assert [s["Resource"] for s in writes] == [zone_arn]
    wildcard = [s for s in statements if s["Resource"] == "*"]
    assert sorted(a for s in wildcard for a in s["Action"]) == ["route53:ListHostedZones", "route53:ListTagsForResources"]


def test_load_balancer_controller_grants_what_upstreams_policy_grants(app: Synthesized) -> None:
    """Upstream's action list (argocd/apps/platform/aws-load-balancer-controller/component.yaml, read from its
    iam_policy.json) is granted, and its tag conditions with it; tests/test_pod_identity_roles.py holds the rest."""
    document = policy_of(app, "aws-load-balancer-controller-role")
    granted = {a for s in document["Statement"] for a in _actions(s)}
    (upstream,) = component("aws-load-balancer-controller").identity.upstream  # type: ignore[union-attr]
    assert granted == upstream.action_names()
    assert "arn:aws:" not in json.dumps(document)  # the stack's partition, whichever it is
    creates = [s for s in document["Statement"] if "elasticloadbalancing:CreateLoadBalancer" in _actions(s)]
    assert [s["Condition"] for s in creates] == [{"Null": {"aws:RequestTag/elbv2.k8s.aws/cluster": "false"}}]


def test_what_an_earlier_release_made_moves_its_state_instead_of_being_replaced(everything_on: Synthesized) -> None:
    """The addresses earlier releases gave common's roles, its one image repository and its build (built here, the
    way common built them then) are moved to what the first application with a policy, and with an image, has now:
    Terraform keeps the role running pods assume, and the repository with its images."""
    from cdktf import TerraformResource, TerraformStack, Testing

    from components.image_build import ImageBuild
    from components.image_repository import ImageRepository
    from components.pod_identity_role import PodIdentityRole

    former = TerraformStack(Testing.app(), COMMON)
    for old_id in ("app-role", "lbc-role"):
        PodIdentityRole(
            former,
            old_id,
            role_name="r",
            description="d",
            namespace="n",
            service_account="s",
            cluster_names="p-*",
            permissions_boundary="p",
            policy_json="{}",
        )
    ImageRepository(former, "image", repository_name="r", protected=True)
    ImageBuild(
        former,
        "image-build",
        name="b",
        repository_url="u",
        repository_arn="a",
        source_url="s",
        source_type="GITHUB",
        buildspec="b",
        connection_arn="arn:aws:codeconnections:r:1:connection/c",
        account_id="1",
        kms_key_arn="k",
        permissions_boundary="p",
    )
    old = {
        node.node.path.split("/", 1)[1]: f"{node.terraform_resource_type}.{node.friendly_unique_id}"
        for node in former.node.find_all()
        if isinstance(node, TerraformResource)
    }
    roles = (("app-role", "sample-app-role"), ("lbc-role", "aws-load-balancer-controller-role"))
    role_parts = (("aws_iam_role", "role"), ("aws_iam_policy", "policy"), ("aws_iam_role_policy_attachment", "attachment"))
    image_parts = (("aws_ecr_repository", "repo"), ("aws_ecr_lifecycle_policy", "lifecycle"))
    build_parts = (
        ("aws_cloudwatch_log_group", "logs"),
        ("aws_iam_role", "role"),
        ("aws_iam_role_policy", "policy"),
        ("aws_codebuild_project", "project"),
    )
    expected = {
        (old[f"{old_id}/{part}"], address(everything_on, kind, f"{new_id}/{part}"))
        for old_id, new_id in roles
        for kind, part in role_parts
    }
    expected |= {(old[f"image/{part}"], address(everything_on, kind, f"{IMAGE}/{part}")) for kind, part in image_parts}
    expected |= {
        (old[f"image-build/{part}"], address(everything_on, kind, f"sample-app-image-build/{part}")) for kind, part in build_parts
    }
    assert {(m["from"], m["to"]) for m in everything_on.json(COMMON)["moved"]} == expected


def test_no_oidc_provider_and_no_irsa(app: Synthesized) -> None:
    assert "aws_iam_openid_connect_provider" not in app.json(COMMON)["resource"]
    assert "AssumeRoleWithWebIdentity" not in app.text(COMMON)


# --- outputs, provider, backend ----------------------------------------------------------------


def test_outputs_are_exactly_the_contract_each_described(variant: Synthesized) -> None:
    outputs = variant.json(COMMON)["output"]
    contract = common_outputs(validated(VARIANT))
    assert set(outputs) == set(contract)
    for name, body in outputs.items():
        assert body["description"] == contract[name]
        assert len(body["description"]) > 20
    assert {f"{role.name.replace('-', '_')}_role_arn" for role in VARIANT_ROLES} <= set(outputs)
    # Each application's: its role (with a policy) and its image repository (with an image), named after it.
    assert {"sample_app_role_arn", "orders_role_arn", "sample_app_image_repository_url", "orders_image_repository_url"} <= set(
        outputs
    )
    assert "catalogue_role_arn" not in outputs
    # The add-ons' roles: every colour's vpc-cni and aws-ebs-csi-driver name them.
    assert {"vpc_cni_role_arn", "aws_ebs_csi_driver_role_arn"} <= set(outputs)


def test_outputs_point_at_the_right_resources(app: Synthesized) -> None:
    outputs = app.json(COMMON)["output"]
    assert outputs["certificate_arn"]["value"] == ref(
        app, "aws_acm_certificate_validation", "certificate/validation-wait", "certificate_arn"
    )
    assert outputs["table_arn"]["value"] == ref(app, "aws_dynamodb_table", "table/table", "arn")
    for role in EXAMPLE_ROLES:
        assert outputs[role.output]["value"] == ref(app, "aws_iam_role", f"{role.construct_id}/role", "arn")
    assert outputs["sample_app_image_repository_url"]["value"] == ref(
        app, "aws_ecr_repository", f"{IMAGE}/repo", "repository_url"
    )
    assert outputs["region"]["value"] == "ap-northeast-1"
    assert len(references(outputs["private_subnet_ids"]["value"])) == 3
    assert len(references(outputs["public_subnet_ids"]["value"])) == 3


def test_provider_region_and_default_tags(text: str) -> None:
    assert Testing.to_have_provider_with_properties(
        text,
        "aws",
        {"region": "ap-northeast-1", "default_tags": [{"tags": {"Project": "eks-bg", "Stack": "common", "ManagedBy": "cdktf"}}]},
    )


def test_local_state_file_of_its_own(app: Synthesized, project_dir: Path) -> None:
    (path,) = app.json(COMMON)["terraform"]["backend"]["local"].values()
    assert (app.stack_dir(COMMON) / path).resolve() == (project_dir / "terraform-state" / "common.tfstate").resolve()


# --- image pipeline ----------------------------------------------------------------------------


def test_no_image_build_unless_a_connection_is_configured(app: Synthesized) -> None:
    assert "aws_codebuild_project" not in app.json(COMMON)["resource"]


def test_image_build_runs_the_apps_buildspec_with_docker(everything_on: Synthesized) -> None:
    """A build per application with a buildspec (the sample app's), from its source repository; orders names none."""
    builds = everything_on.resources(COMMON, "aws_codebuild_project")
    assert sorted(builds) == ["sample-app-image-build/project"]
    project = builds["sample-app-image-build/project"]
    assert project["name"] == "eks-bg-sample-app-image"  # the name an earlier release gave it
    assert project["source"] == {
        "type": "GITHUB",
        "location": REPO_URL,
        "buildspec": "app/buildspec.yml",
        "git_clone_depth": 1,
        "auth": {"type": "CODECONNECTIONS", "resource": CONNECTION_ARN},
    }
    environment = project["environment"]
    assert environment["privileged_mode"] is True
    assert environment["image"].startswith("aws/codebuild/standard:")
    repo_url = f"${{{address(everything_on, 'aws_ecr_repository', f'{IMAGE}/repo')}.repository_url}}"
    assert environment["environment_variable"] == [{"name": "IMAGE_REPOSITORY_URL", "value": repo_url}]
    assert project["artifacts"] == {"type": "NO_ARTIFACTS"}


def test_image_build_role_can_push_to_this_repository_only(everything_on: Synthesized) -> None:
    policy = json.loads(everything_on.resource(COMMON, "aws_iam_role_policy", "sample-app-image-build/policy")["policy"])
    repo_arn = f"${{{address(everything_on, 'aws_ecr_repository', f'{IMAGE}/repo')}.arn}}"
    ecr = [s for s in policy["Statement"] if any(a.startswith("ecr:") for a in _actions(s))]
    assert {s["Resource"] for s in ecr if "ecr:PutImage" in _actions(s)} == {repo_arn}
    # Only the login call, which has no resource-level permission, is on "*".
    assert [_actions(s) for s in policy["Statement"] if s["Resource"] == "*"] == [["ecr:GetAuthorizationToken"]]
    connection = [s for s in policy["Statement"] if any(a.endswith(":UseConnection") for a in _actions(s))]
    assert [s["Resource"] for s in connection] == [CONNECTION_ARN]
    trust = json.loads(everything_on.resource(COMMON, "aws_iam_role", "sample-app-image-build/role")["assume_role_policy"])
    assert trust["Statement"][0]["Principal"] == {"Service": "codebuild.amazonaws.com"}


def _actions(statement: dict[str, Any]) -> list[str]:
    action = statement["Action"]
    return [action] if isinstance(action, str) else list(action)


def test_logs_key_rotates_and_lets_cloudwatch_logs_use_it_for_this_accounts_groups_only(app: Synthesized) -> None:
    key = app.resource(COMMON, "aws_kms_key", "logs-key/key")
    assert key["enable_key_rotation"] is True
    statements = {s["Sid"]: s for s in json.loads(key["policy"])["Statement"]}
    logs = statements["CloudWatchLogsEncryptsThisAccountsLogGroups"]
    assert logs["Principal"] == {"Service": "logs.ap-northeast-1.amazonaws.com"}
    context = logs["Condition"]["ArnLike"]["kms:EncryptionContext:aws:logs:arn"]
    assert context.startswith(
        "arn:${data.aws_partition.partition.partition}:logs:ap-northeast-1:${data.aws_caller_identity.account"
    )
