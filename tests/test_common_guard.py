"""`cdktf destroy common` refuses while a colour's cluster runs in common's VPC, whatever deletion_protection says:
tools/hooks/common_guard.py against moto (EKS, EC2), its errors, and the guard run by Terraform itself."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from model.hooks import GUARD_ENV
from scripts.emulator import aws_settings, client
from tests.support.emulated_aws import in_process_aws
from tests.support.synth import Synthesized
from tests.support.terraform import run
from tools.hooks.common_guard import main

REGION = "ap-northeast-1"
PROJECT = "eks-bg"
ROLE = "arn:aws:iam::123456789012:role/cluster"


@pytest.fixture
def eks_knows_the_vpc(monkeypatch: pytest.MonkeyPatch) -> None:
    """AWS's DescribeCluster names the VPC of the cluster's subnets (resourcesVpcConfig.vpcId); moto 5.2 echoes the
    request, which has no vpcId. Taught here: the cluster's VPC is its first subnet's."""
    from moto.ec2.models import ec2_backends
    from moto.eks.models import EKSBackend

    from tests.support.emulated_aws import one_boto3_session_for_moto

    one_boto3_session_for_moto(monkeypatch)
    original = EKSBackend.create_cluster

    def create_cluster(self: EKSBackend, *, resources_vpc_config: dict[str, Any], **kwargs: Any) -> Any:
        subnet = ec2_backends[self.account_id][self.region_name].get_subnet(resources_vpc_config["subnetIds"][0])
        return original(self, resources_vpc_config={**resources_vpc_config, "vpcId": subnet.vpc_id}, **kwargs)

    monkeypatch.setattr(EKSBackend, "create_cluster", create_cluster)


@pytest.fixture
def aws(eks_knows_the_vpc: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """moto in-process, fresh for each test (a module-wide mock would also catch the real run's calls to the
    server below); clients on it."""
    with in_process_aws(monkeypatch):
        yield {name: boto3.client(name, region_name=REGION) for name in ("ec2", "eks")}


def vpc_with_subnet(ec2: Any, cidr: str) -> tuple[str, str]:
    vpc = ec2.create_vpc(CidrBlock=cidr)["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock=cidr.replace("/16", "/24"))["Subnet"]["SubnetId"]
    return vpc, subnet


def create_cluster(eks: Any, name: str, subnet: str) -> None:
    eks.create_cluster(name=name, roleArn=ROLE, resourcesVpcConfig={"subnetIds": [subnet]})


def guard_input(vpc_id: str, **overrides: Any) -> str:
    """The guard's input, as its provisioner hands it over (jsonencode(self.input))."""
    return json.dumps(
        {
            "protected": False,
            "message": "deletion_protection is on: ...",
            "vpc_id": vpc_id,
            "region": REGION,
            "project": PROJECT,
            "stack": "common",
            "uses": "its subnets, NAT gateways and Pod Identity roles",
        }
        | overrides
    )


def guard(monkeypatch: pytest.MonkeyPatch, value: str | None, eks: Any = None) -> tuple[int, str]:
    if value is None:
        monkeypatch.delenv(GUARD_ENV, raising=False)
    else:
        monkeypatch.setenv(GUARD_ENV, value)
    err = io.StringIO()
    status = main(eks=eks, err=err)
    return status, err.getvalue()


def test_colours_in_commons_vpc_are_named_and_nothing_goes(aws: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    vpc, subnet = vpc_with_subnet(aws["ec2"], "10.0.0.0/16")
    for colour in ("blue", "green"):
        create_cluster(aws["eks"], f"{PROJECT}-{colour}", subnet)
    create_cluster(aws["eks"], "someone-elses", subnet)

    status, err = guard(monkeypatch, guard_input(vpc))
    assert status == 1
    assert err.startswith(
        "common_guard refused: colour blue (cluster eks-bg-blue); colour green (cluster eks-bg-green); "
        f"cluster someone-elses (not a colour of this project) still in common's VPC {vpc}"
    )
    assert "nothing was destroyed" in err
    for colour in ("blue", "green"):
        assert f"python -m tools.retire {colour} (or cdktf destroy {colour})" in err
    assert "delete someone-elses yourself" in err
    assert err.count("\n") == 1  # one line: the last Terraform shows


def test_a_colour_being_deleted_still_holds_the_vpc(aws: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """Its nodes and network interfaces are still in common's subnets until EKS is done (minutes)."""
    from moto.eks.models import eks_backends

    vpc, subnet = vpc_with_subnet(aws["ec2"], "10.0.0.0/16")
    create_cluster(aws["eks"], f"{PROJECT}-blue", subnet)
    # moto deletes a cluster at once; AWS shows DELETING until it is done.
    eks_backends["123456789012"][REGION].clusters[f"{PROJECT}-blue"].status = "DELETING"
    status, err = guard(monkeypatch, guard_input(vpc))
    assert (status, err.split(" still in")[0]) == (1, "common_guard refused: colour blue (cluster eks-bg-blue, DELETING)")


def test_clusters_in_other_vpcs_do_not_hold_common(aws: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    vpc, _ = vpc_with_subnet(aws["ec2"], "10.0.0.0/16")
    _, elsewhere = vpc_with_subnet(aws["ec2"], "10.1.0.0/16")
    create_cluster(aws["eks"], f"{PROJECT}-blue", elsewhere)  # named like a colour, but another project's VPC
    assert guard(monkeypatch, guard_input(vpc)) == (0, "")


def test_no_cluster_at_all_lets_the_destroy_go_on(aws: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    vpc, _ = vpc_with_subnet(aws["ec2"], "10.0.0.0/16")
    assert guard(monkeypatch, guard_input(vpc)) == (0, "")


def test_an_api_error_refuses_on_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    eks = boto3.client("eks", region_name=REGION, aws_access_key_id="k", aws_secret_access_key="s")
    with Stubber(eks) as stub:
        stub.add_client_error("list_clusters", "AccessDeniedException", "not authorized to perform: eks:ListClusters")
        status, err = guard(monkeypatch, guard_input("vpc-1"), eks=eks)
    assert status == 2
    assert err.startswith("common_guard: cannot list the EKS clusters in ap-northeast-1 to check common's VPC vpc-1")
    assert "AccessDeniedException" in err
    assert "nothing was destroyed" in err
    assert (err.count("\n"), "Traceback" in err) == (1, False)


def test_no_credentials_refuses_on_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """boto3's own client, with nowhere to find credentials (and no instance metadata to ask)."""
    for name in [n for n in os.environ if n.startswith("AWS_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    status, err = guard(monkeypatch, guard_input("vpc-1"))
    assert status == 2
    assert "Unable to locate credentials" in err
    assert (err.count("\n"), "Traceback" in err) == (1, False)


@pytest.mark.parametrize(
    "value",
    [None, "not json", json.dumps({"protected": False, "message": "deletion_protection is on: ..."})],
    ids=["unset", "not-json", "state-before-the-check"],
)
def test_without_the_vpc_it_refuses_and_says_to_deploy_common_first(monkeypatch: pytest.MonkeyPatch, value: str | None) -> None:
    status, err = guard(monkeypatch, value)
    assert status == 2
    assert err.startswith("common_guard: cannot check common's VPC for clusters: ")
    assert err.endswith("nothing was destroyed\n")
    if value and value.startswith("{"):  # a guard deployed before it checked clusters
        assert "has no vpc_id, region, project, stack, uses: run `cdktf deploy common`" in err


# --- Terraform runs the guard ------------------------------------------------------------------------------------


# Terraform against the emulator server: the out-of-process tier, beside the unit tier (`make test`), not on its path.
@pytest.mark.background("moto_endpoint")
@pytest.mark.usefixtures("eks_knows_the_vpc")
def test_terraform_runs_the_guard_first_and_keeps_common_while_a_colour_runs_in_its_vpc(
    example_app: Synthesized, moto_endpoint: str, inside_project: Path
) -> None:
    """The synthesized guard alone (deletion_protection off, as in the outage this prevents), with a real VPC id,
    in a directory inside the project (as cdktf.out/stacks/common is), against the moto server: destroyed while
    blue runs in the VPC, it fails and stays; once blue is gone, it goes."""
    ec2, eks = (client(name, moto_endpoint, REGION) for name in ("ec2", "eks"))
    vpc, subnet = vpc_with_subnet(ec2, "10.42.0.0/16")
    create_cluster(eks, f"{PROJECT}-blue", subnet)

    body = json.loads(json.dumps(example_app.resource("common", "terraform_data", "deletion-guard/guard")))
    body.pop("depends_on")  # the rest of common is not here
    body["input"].update(protected=False, vpc_id=vpc)
    directory = inside_project / "common-guard" / "stacks" / "common"
    directory.mkdir(parents=True)
    (directory / "main.tf.json").write_text(json.dumps({"resource": {"terraform_data": {"guard": body}}}))
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("AWS_") and k != GUARD_ENV}
    env = {**inherited, **aws_settings(moto_endpoint, REGION)}
    try:
        for step in (("init", "-input=false", "-no-color"), ("apply", "-auto-approve", "-input=false", "-no-color")):
            done = run(directory, *step, env=env)
            assert done.returncode == 0, done.stdout + done.stderr

        refused = run(directory, "destroy", "-auto-approve", "-input=false", "-no-color", env=env)
        output = " ".join((refused.stdout + refused.stderr).split())  # Terraform wraps the provisioner's output
        assert refused.returncode != 0
        assert f"common_guard refused: colour blue (cluster eks-bg-blue) still in common's VPC {vpc}" in output
        assert "python -m tools.retire blue" in output
        assert run(directory, "state", "list", env=env).stdout.split() == ["terraform_data.guard"]

        eks.delete_cluster(name=f"{PROJECT}-blue")
        destroyed = run(directory, "destroy", "-auto-approve", "-input=false", "-no-color", env=env)
        assert destroyed.returncode == 0, destroyed.stdout + destroyed.stderr
        assert f"common_guard: no EKS cluster in common's VPC {vpc}" in destroyed.stdout
        assert run(directory, "state", "list", env=env).stdout.split() == []
    finally:
        for name in eks.list_clusters()["clusters"]:
            eks.delete_cluster(name=name)
