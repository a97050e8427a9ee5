"""No control-plane log group outlives its colour, and a colour can be destroyed and rebuilt under the same name: EKS
re-creates `/aws/eks/<cluster>/cluster` after the destroy; tools/hooks/log_group.py watches for it once the cluster and its
group are deleted, deleting it each time it comes back, and deletes an orphan left all the same before the log group is
created again; each only when no cluster of that name exists. The tool against moto (EKS, CloudWatch Logs), its
errors, the synthesized step (which resource depends on which, so that a destroy runs the watch after the cluster and
its group), and the step and log group run by Terraform itself."""

from __future__ import annotations

import io
import json
import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from model.hooks import LOG_GROUP_ENV, WATCH_ENV, WATCH_SECONDS
from scripts.emulator import aws_settings, client
from tests.support.emulated_aws import in_process_aws
from tests.support.synth import Synthesized, references
from tests.support.terraform import run
from tools.hooks.log_group import POLL_SECONDS, main

REGION = "ap-northeast-1"
CLUSTER = "eks-bg-blue"
LOG_GROUP = f"/aws/eks/{CLUSTER}/cluster"
ROLE = "arn:aws:iam::123456789012:role/cluster"


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """moto in-process, fresh for each test (a module-wide mock would also catch the Terraform run's calls to the
    server below); clients on it."""
    with in_process_aws(monkeypatch):
        yield {name: boto3.client(name, region_name=REGION) for name in ("logs", "eks")}


def step_input(**overrides: str) -> str:
    """The step's input, as its provisioner hands it over (jsonencode(self.input))."""
    return json.dumps({"log_group": LOG_GROUP, "cluster": CLUSTER, "region": REGION} | overrides)


def step(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    value: str | None,
    *,
    watch: str | None = None,
    **clients: Any,
) -> tuple[int, str, str]:
    """The tool as a provisioner runs it: the create-time one, or with `watch` the destroy-time one."""
    for name, set_to in ((LOG_GROUP_ENV, value), (WATCH_ENV, watch)):
        if set_to is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, set_to)
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


# --- after the destroy: the watch ----------------------------------------------------------------------------


class Watch:
    """The watch's time, standing still but for its sleeps; `deliveries`: after which sleeps (1 = the first) EKS's last
    logs create the group again, as CloudWatch Logs does on a delivery to a group that does not exist."""

    def __init__(self, logs: Any, *deliveries: int) -> None:
        self.logs, self.deliveries, self.now, self.sleeps = logs, deliveries, 0.0, 0

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        self.sleeps += 1
        if self.sleeps in self.deliveries:
            self.logs.create_log_group(logGroupName=LOG_GROUP)


def watched(
    aws: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], watch: Watch
) -> tuple[int, str, str]:
    return step(monkeypatch, capsys, step_input(), watch=str(WATCH_SECONDS), **aws, sleep=watch.sleep, clock=watch.clock)


START = (
    f"log_group: {CLUSTER} is deleted; watching {LOG_GROUP} for {WATCH_SECONDS} s, as EKS may still deliver its last "
    "logs (within a few minutes, AWS says) and CloudWatch Logs would create the group again\n"
)


def test_after_the_destroy_a_group_that_never_comes_back_is_watched_for_the_whole_window(
    aws: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    aws["logs"].create_log_group(logGroupName="/aws/eks/eks-bg-green/cluster")  # another colour's: not this step's
    watch = Watch(aws["logs"])
    status, out, err = watched(aws, monkeypatch, capsys, watch)
    assert (status, err) == (0, "")
    assert out == START + (
        f"log_group: {LOG_GROUP} did not come back within {WATCH_SECONDS} s of the cluster's deletion; nothing to delete\n"
    )
    assert (watch.now, watch.sleeps) == (WATCH_SECONDS, -(-WATCH_SECONDS // POLL_SECONDS))
    assert log_groups(aws["logs"]) == ["/aws/eks/eks-bg-green/cluster"]


def test_after_the_destroy_a_group_recreated_by_late_logs_is_deleted_each_time_it_comes_back(
    aws: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Back once before the watch's first look (between Terraform's deletion of the group and the step), and twice
    during it; the watch goes on to its end after each."""
    aws["logs"].create_log_group(logGroupName=LOG_GROUP)
    watch = Watch(aws["logs"], 2, 7)
    status, out, err = watched(aws, monkeypatch, capsys, watch)
    assert (status, err) == (0, "")
    back = f"log_group: {LOG_GROUP} was back {{}} s into the watch (EKS's last logs of {CLUSTER}); deleted\n"
    assert out == START + back.format(0) + back.format(2 * POLL_SECONDS) + back.format(7 * POLL_SECONDS) + (
        f"log_group: {LOG_GROUP} came back 3 times within {WATCH_SECONDS} s of the cluster's deletion and was deleted "
        "each time; none is left. A delivery later still makes it again: the colour's next create deletes that one\n"
    )
    assert watch.now == WATCH_SECONDS
    assert log_groups(aws["logs"]) == []


def test_after_the_destroy_the_group_of_a_cluster_of_that_name_is_left_alone(
    aws: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A cluster of that name exists although the colour's was destroyed (made outside this state): its group, at
    once, and no watch."""
    aws["logs"].create_log_group(logGroupName=LOG_GROUP)
    aws["eks"].create_cluster(name=CLUSTER, roleArn=ROLE, resourcesVpcConfig={"subnetIds": ["subnet-1"]})
    watch = Watch(aws["logs"])
    status, out, err = watched(aws, monkeypatch, capsys, watch)
    assert (status, err) == (0, "")
    assert out == START + f"log_group: {LOG_GROUP} belongs to the cluster {CLUSTER} (ACTIVE), which writes to it; left alone\n"
    assert watch.sleeps == 0
    assert log_groups(aws["logs"]) == [LOG_GROUP]


def test_an_api_error_during_the_watch_stops_on_one_line_saying_how_to_run_it_again(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    keys = {"region_name": REGION, "aws_access_key_id": "k", "aws_secret_access_key": "s"}
    logs, eks = boto3.client("logs", **keys), boto3.client("eks", **keys)
    with Stubber(logs) as logs_stub, Stubber(eks):
        logs_stub.add_response("describe_log_groups", {"logGroups": []})
        logs_stub.add_client_error("describe_log_groups", "ThrottlingException", "Rate exceeded")
        watch = Watch(logs)
        status, out, err = step(
            monkeypatch, capsys, step_input(), watch="60", logs=logs, eks=eks, sleep=watch.sleep, clock=watch.clock
        )
    assert (status, out.count("\n")) == (2, 1)  # the watch's first line only
    assert err.startswith(f"log_group: cannot check {LOG_GROUP} in {REGION} for a leftover of a previous {CLUSTER} (")
    assert "ThrottlingException" in err
    assert err.endswith(
        "; nothing more was deleted. Fix the credentials (they need logs:DescribeLogGroups, "
        "logs:DeleteLogGroup and eks:DescribeCluster), then destroy the colour again (the step stays in its "
        "state and runs again)\n"
    )
    assert (err.count("\n"), "Traceback" in err) == (1, False)


@pytest.mark.parametrize("value", ["", "soon", "-1", "nan"])
def test_a_watch_of_no_number_of_seconds_stops(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    status, out, err = step(monkeypatch, capsys, step_input(), watch=value)
    assert (status, out) == (2, "")
    assert err == (
        f"log_group: cannot check for a leftover control-plane log group: {WATCH_ENV} is {value!r}, not a number of "
        "seconds; nothing was deleted\n"
    )


# --- the synthesized step: which resource depends on which -------------------------------------------------------


def dependencies(document: dict[str, Any]) -> dict[str, set[str]]:
    """Each resource's address -> the resources it depends on, by depends_on or by a reference (what Terraform orders
    by: a resource is destroyed only after every resource that depends on it)."""
    found: dict[str, set[str]] = {}
    for kind, items in document["resource"].items():
        for name, body in items.items():
            named = references({k: v for k, v in body.items() if k != "//"}) | set(body.get("depends_on", []))
            found[f"{kind}.{name}"] = {".".join(r.split(".")[:2]) for r in named if r.split(".")[0] in document["resource"]}
    return found


def depends_on(graph: dict[str, set[str]], address: str, on: str) -> bool:
    seen: set[str] = set()
    todo = [address]
    while todo:
        for found in graph[todo.pop()] - seen:
            seen.add(found)
            todo.append(found)
    return on in seen


def test_a_destroy_runs_the_watch_after_the_cluster_and_its_log_group_are_deleted(example_app: Synthesized) -> None:
    document = example_app.json("blue")
    graph = dependencies(document)
    address = {
        path: f"{kind}.{name}"
        for kind, items in document["resource"].items()
        for name, body in items.items()
        for path in [body["//"]["metadata"]["path"].split("/", 1)[1]]
    }
    step_at, logs_at, cluster_at = address["eks/orphaned-logs"], address["eks/logs"], address["eks/cluster"]
    # The cluster and its group depend on the step: Terraform creates the step first and destroys it last.
    assert depends_on(graph, logs_at, step_at)
    assert depends_on(graph, cluster_at, step_at)
    assert depends_on(graph, cluster_at, logs_at)  # and the group goes after its cluster
    assert graph[step_at] == set()  # the step itself waits on nothing (a cycle, or a destroy before the cluster's)
    kind, name = step_at.split(".")
    body = document["resource"][kind][name]
    (created, destroyed) = body["provisioner"]
    assert "when" not in created["local-exec"]
    watch = destroyed["local-exec"]
    assert watch["when"] == "destroy"
    assert "-m tools.log_group" in watch["command"]
    assert watch["environment"] == {LOG_GROUP_ENV: "${jsonencode(self.input)}", WATCH_ENV: str(WATCH_SECONDS)}
    assert body["input"] == {"log_group": LOG_GROUP, "cluster": CLUSTER, "region": REGION}


# --- Terraform runs the step ------------------------------------------------------------------------------------


# Terraform against the emulator server: the out-of-process tier, beside the unit tier (`make test`), not on its path.
@pytest.mark.background("moto_endpoint")
def test_terraform_rebuilds_a_colour_whose_log_group_eks_recreated(
    example_app: Synthesized, moto_endpoint: str, inside_project: Path
) -> None:
    """The synthesized step and log group (without the key, not here), in a directory inside the project (as
    cdktf.out/stacks/<colour> is), against the moto server, under a name of their own. A leftover group without
    its cluster: deleted, and the log group created as configured. Destroyed, with EKS's last delivery standing in
    between the group's deletion and the step's (a `terraform_data` the group depends on, depending on the step, whose
    destroy provisioner creates the group as CloudWatch Logs would): the step's watch runs after it and deletes the
    group, so none is left. Then, a cluster of that name running, a group of that name is left alone: the create fails
    on it and deletes nothing."""
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
    # The watch for a second, not WATCH_SECONDS: what it does over time is the unit tests' (above).
    (_, destroyed) = bodies["terraform_data"]["provisioner"]
    destroyed["local-exec"]["environment"][WATCH_ENV] = "1"
    delivery = (
        f"{sys.executable} -c \"import boto3; boto3.client('logs').create_log_group(logGroupName='{log_group}'); "
        "print('late delivery: group made again')\""
    )
    late = {
        "input": "late",
        "depends_on": [f"terraform_data.{step_name}"],
        "provisioner": [{"local-exec": {"when": "destroy", "command": delivery}}],
    }
    bodies["aws_cloudwatch_log_group"]["depends_on"].append("terraform_data.late_delivery")
    directory = inside_project / "orphaned-logs" / "stacks" / "blue"
    directory.mkdir(parents=True)
    document = {
        "provider": {"aws": {"region": REGION}},
        "resource": {
            "terraform_data": {step_name: bodies["terraform_data"], "late_delivery": late},
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

        status, output = terraform("destroy", "-auto-approve")
        assert status == 0, output
        # In Terraform's order: the group deleted, the late delivery making it again, then the step's watch.
        deleted = output.index("aws_cloudwatch_log_group.logs: Destruction complete")
        made_again = output.index("late delivery: group made again")
        watching = output.index(f"log_group: {name} is deleted; watching {log_group} for 1 s")
        assert deleted < made_again < watching, output
        assert f"log_group: {log_group} was back 0 s into the watch (EKS's last logs of {name}); deleted" in output
        assert f"log_group: {log_group} came back 1 time within 1 s of the cluster's deletion" in output
        assert groups() == {}

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
