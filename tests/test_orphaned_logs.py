"""A colour can be destroyed and rebuilt under the same name, its control-plane log group included: EKS re-creates
`/aws/eks/<cluster>/cluster` after the destroy, and tools/log_group.py deletes that orphan before the log group is
created again, only when no cluster of that name exists. The tool against moto (EKS, CloudWatch Logs), its errors,
and the synthesized step and log group run by Terraform itself."""

from __future__ import annotations

import io
import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from scripts.emulator import aws_settings, client
from tests.support.synth import Synthesized
from tests.support.terraform import run
from tools.log_group import LOG_GROUP_ENV, main

REGION = "ap-northeast-1"
CLUSTER = "eks-bg-blue"
LOG_GROUP = f"/aws/eks/{CLUSTER}/cluster"
ROLE = "arn:aws:iam::123456789012:role/cluster"


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """moto in-process, fresh for each test (a module-wide mock would also catch the Terraform run's calls to the
    server below); clients on it."""
    from moto import mock_aws

    from tests.support.emulated_aws import one_boto3_session_for_moto

    one_boto3_session_for_moto(monkeypatch)
    for name in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    with mock_aws():
        yield {name: boto3.client(name, region_name=REGION) for name in ("logs", "eks")}


def step_input(**overrides: str) -> str:
    """The step's input, as its provisioner hands it over (jsonencode(self.input))."""
    return json.dumps({"log_group": LOG_GROUP, "cluster": CLUSTER, "region": REGION} | overrides)


def step(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], value: str | None, **clients: Any
) -> tuple[int, str, str]:
    if value is None:
        monkeypatch.delenv(LOG_GROUP_ENV, raising=False)
    else:
        monkeypatch.setenv(LOG_GROUP_ENV, value)
    err = io.StringIO()
    status = main(err=err, **clients)
    return status, capsys.readouterr().out, err.getvalue()


def log_groups(logs: Any) -> list[str]:
    return [g["logGroupName"] for g in logs.describe_log_groups(logGroupNamePrefix="/aws/eks/")["logGroups"]]


def test_a_leftover_group_without_its_cluster_is_deleted(
    aws: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    aws["logs"].create_log_group(logGroupName=LOG_GROUP)  # as EKS re-creates it: no retention, no key
    aws["logs"].create_log_group(logGroupName="/aws/eks/eks-bg-green/cluster")  # another colour's: not this step's
    status, out, err = step(monkeypatch, capsys, step_input())
    assert (status, err) == (0, "")
    assert out == (
        f"log_group: deleted {LOG_GROUP}: an orphan of a previous {CLUSTER} (no cluster of that name exists), "
        "re-created by EKS's last logs after the colour was destroyed\n"
    )
    assert log_groups(aws["logs"]) == ["/aws/eks/eks-bg-green/cluster"]


@pytest.mark.parametrize("status", ["ACTIVE", "DELETING"])
def test_the_group_of_an_existing_cluster_is_left_alone(
    aws: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], status: str
) -> None:
    """A cluster of that name writes to it, whatever its state: a deleting one still holds its name."""
    from moto.eks.models import eks_backends

    aws["logs"].create_log_group(logGroupName=LOG_GROUP)
    aws["eks"].create_cluster(name=CLUSTER, roleArn=ROLE, resourcesVpcConfig={"subnetIds": ["subnet-1"]})
    eks_backends["123456789012"][REGION].clusters[CLUSTER].status = status
    done, out, err = step(monkeypatch, capsys, step_input())
    assert (done, err) == (0, "")
    assert out == f"log_group: {LOG_GROUP} belongs to the cluster {CLUSTER} ({status}), which writes to it; left alone\n"
    assert log_groups(aws["logs"]) == [LOG_GROUP]


@pytest.mark.parametrize("present", [[], [f"{LOG_GROUP}-archive"]], ids=["no-group", "only-a-longer-name"])
def test_no_leftover_changes_nothing(
    aws: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], present: list[str]
) -> None:
    for name in present:
        aws["logs"].create_log_group(logGroupName=name)
    status, out, err = step(monkeypatch, capsys, step_input())
    assert (status, out, err) == (0, f"log_group: no log group {LOG_GROUP} left behind; nothing to do\n", "")
    assert log_groups(aws["logs"]) == present


@pytest.mark.parametrize("failing", ["describe_log_groups", "delete_log_group"])
def test_an_api_error_stops_on_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], failing: str
) -> None:
    keys = {"region_name": REGION, "aws_access_key_id": "k", "aws_secret_access_key": "s"}
    logs, eks = boto3.client("logs", **keys), boto3.client("eks", **keys)
    with Stubber(logs) as logs_stub, Stubber(eks) as eks_stub:
        if failing == "delete_log_group":
            logs_stub.add_response("describe_log_groups", {"logGroups": [{"logGroupName": LOG_GROUP}]})
            eks_stub.add_client_error("describe_cluster", "ResourceNotFoundException", f"No cluster found for name: {CLUSTER}.")
        logs_stub.add_client_error(failing, "AccessDeniedException", f"not authorized to perform: logs:{failing}")
        status, out, err = step(monkeypatch, capsys, step_input(), logs=logs, eks=eks)
    assert (status, out) == (2, "")
    assert err.startswith(f"log_group: cannot check {LOG_GROUP} in {REGION} for a leftover of a previous {CLUSTER} (")
    assert "AccessDeniedException" in err
    assert "nothing was deleted" in err
    assert (err.count("\n"), "Traceback" in err) == (1, False)


def test_no_credentials_stops_on_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """boto3's own clients, with nowhere to find credentials (and no instance metadata to ask)."""
    for name in [n for n in os.environ if n.startswith("AWS_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    status, out, err = step(monkeypatch, capsys, step_input())
    assert (status, out) == (2, "")
    assert "Unable to locate credentials" in err
    assert (err.count("\n"), "Traceback" in err) == (1, False)


@pytest.mark.parametrize("value", [None, "not json", json.dumps({"cluster": CLUSTER})], ids=["unset", "not-json", "partial"])
def test_without_a_usable_input_it_stops(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], value: str | None
) -> None:
    status, out, err = step(monkeypatch, capsys, value)
    assert (status, out) == (2, "")
    assert err.startswith("log_group: cannot check for a leftover control-plane log group: ")
    assert err.endswith("; nothing was deleted\n")


# --- Terraform runs the step ------------------------------------------------------------------------------------


# Terraform against the emulator server: the out-of-process tier, beside the unit tier (`make test`), not on its path.
@pytest.mark.background("moto_endpoint")
def test_terraform_rebuilds_a_colour_whose_log_group_eks_recreated(
    example_app: Synthesized, moto_endpoint: str, inside_project: Path
) -> None:
    """The synthesized step and log group (without the key, not here), in a directory inside the project (as
    cdktf.out/stacks/<colour> is), against the moto server, under a name of their own. A leftover group without
    its cluster: deleted, and the log group created as configured. Once destroyed, and a cluster of that name
    running, a group of that name is left alone: the create fails on it and deletes nothing."""
    name = f"rebuilt-{uuid.uuid4().hex[:8]}"  # the server lives for the session: nothing another test made
    log_group = f"/aws/eks/{name}/cluster"
    bodies = {
        kind: json.loads(json.dumps(example_app.resources("blue", kind)[path]).replace(CLUSTER, name))
        for kind, path in (("terraform_data", "eks/orphaned-logs"), ("aws_cloudwatch_log_group", "eks/logs"))
    }
    (step_name,) = [
        n
        for n, b in example_app.json("blue")["resource"]["terraform_data"].items()
        if b["//"]["metadata"]["path"] == "blue/eks/orphaned-logs"
    ]
    del bodies["aws_cloudwatch_log_group"]["kms_key_id"]
    assert bodies["aws_cloudwatch_log_group"]["depends_on"] == [f"terraform_data.{step_name}"]
    directory = inside_project / "orphaned-logs" / "stacks" / "blue"
    directory.mkdir(parents=True)
    document = {
        "provider": {"aws": {"region": REGION}},
        "resource": {
            "terraform_data": {step_name: bodies["terraform_data"]},
            "aws_cloudwatch_log_group": {"logs": bodies["aws_cloudwatch_log_group"]},
        },
    }
    (directory / "main.tf.json").write_text(json.dumps(document))
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("AWS_")}, **aws_settings(moto_endpoint, REGION)}
    logs, eks = client("logs", moto_endpoint, REGION), client("eks", moto_endpoint, REGION)

    def terraform(*arguments: str) -> tuple[int, str]:
        done = run(directory, *arguments, "-input=false", "-no-color", env=env)
        return done.returncode, " ".join((done.stdout + done.stderr).split())  # Terraform wraps provisioner output

    def groups() -> dict[str, int | None]:
        found = logs.describe_log_groups(logGroupNamePrefix=log_group)["logGroups"]
        return {g["logGroupName"]: g.get("retentionInDays") for g in found}

    try:
        assert terraform("init")[0] == 0
        logs.create_log_group(logGroupName=log_group)  # EKS's last logs, after the previous incarnation's destroy
        status, output = terraform("apply", "-auto-approve")
        assert status == 0, output
        assert f"log_group: deleted {log_group}: an orphan of a previous {name}" in output
        assert groups() == {log_group: 365}  # the colour's own group, created after the step

        assert terraform("destroy", "-auto-approve")[0] == 0
        eks.create_cluster(name=name, roleArn=ROLE, resourcesVpcConfig={"subnetIds": ["subnet-1"]})
        logs.create_log_group(logGroupName=log_group)
        logs.put_retention_policy(logGroupName=log_group, retentionInDays=7)
        status, output = terraform("apply", "-auto-approve")
        assert status != 0
        assert f"log_group: {log_group} belongs to the cluster {name} (ACTIVE), which writes to it; left alone" in output
        assert "ResourceAlreadyExistsException" in output
        assert groups() == {log_group: 7}
    finally:
        for cluster in eks.list_clusters()["clusters"]:
            if cluster == name:
                eks.delete_cluster(name=cluster)
        for group in groups():
            logs.delete_log_group(logGroupName=group)
