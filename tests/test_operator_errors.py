"""The operator commands never answer with a traceback: missing, expired or refused credentials, a denied action,
an unreachable AWS or cluster, an unreadable state, a refused config each end in one line that says what and what to
do, with README's exit status (2: refused, nothing changed; 1: failed part-way, the message says what is in place).

Through the commands' entry points: `python -m tools.retire` as a process (what an operator runs), the others'
`main` in-process with AWS errors raised by real botocore clients (Stubber) or by botocore's own credential chain.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from model.paths import PROJECT_DIR
from model.teardown_plan import FORCE_ENV, PLAN_ENV
from tests.support.configs import write_project
from tests.support.emulated_aws import EXPIRED, REGION, Emulated, FakeClock, aws_error, base_config, without_credentials
from tests.support.fake_kubernetes import FakeKubernetes
from tests.test_teardown import PLAN
from tools import retire
from tools.aws import Aws
from tools.aws_problems import aws_problem
from tools.hooks import teardown
from tools.shift.command import main as shift

DENIED = (
    "User: arn:aws:sts::123456789012:assumed-role/ci/session is not authorized to perform: eks:DescribeCluster on "
    "resource: arn:aws:eks:ap-northeast-1:123456789012:cluster/eks-bg-green"
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """blue serves, green is deployed (its state holds resources) with weight 0."""
    path = write_project(
        tmp_path, base_config(blue={"kubernetes_version": "1.35", "weight": 100}, green={"kubernetes_version": "1.36"})
    )
    state = tmp_path / "terraform-state"
    state.mkdir()
    for colour in ("blue", "green"):
        (state / f"{colour}.tfstate").write_text(json.dumps({"version": 4, "resources": [{"type": "aws_eks_cluster"}]}))
    return path


def no_traceback(printed: str) -> None:
    assert "Traceback" not in printed, printed
    assert len(printed.strip().splitlines()) <= 2, printed


def test_retire_without_credentials_says_log_in_and_exits_2(project: Path, tmp_path: Path) -> None:
    """As an operator runs it, in a process of its own: botocore's real credential chain finds nothing."""
    done = subprocess.run(
        [sys.executable, "-m", "tools.retire", "green", "--config", str(project)],
        cwd=PROJECT_DIR,
        env=without_credentials(dict(os.environ), tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("refused: no usable AWS credentials (Unable to locate credentials): log in"), done.stderr
    assert done.stderr.rstrip().endswith("nothing was changed")
    no_traceback(done.stdout + done.stderr)


@pytest.mark.usefixtures("no_aws_credentials")
def test_shift_without_credentials_is_refused_before_any_weight_moves(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = project.read_text()
    assert shift(["--to", "green", "--config", str(project)]) == 2
    printed = capsys.readouterr()
    assert printed.err.startswith("refused: no usable AWS credentials (Unable to locate credentials)"), printed.err
    no_traceback(printed.out + printed.err)
    assert project.read_text() == before


@pytest.fixture
def stubbed_eks(emulated: Emulated) -> Iterator[Stubber]:
    """The emulator's EKS client answering from a script (its real botocore errors), for one test."""
    with Stubber(emulated.eks) as stub:
        yield stub


@pytest.fixture
def stubbed_elbv2(emulated: Emulated) -> Iterator[Stubber]:
    """The emulator's ELBv2 client answering from a script: the shift's first AWS call reads the shared load balancer."""
    with Stubber(emulated.elbv2) as stub:
        yield stub


@pytest.mark.parametrize(
    ("code", "message", "said"),
    [
        ("AccessDenied", DENIED, f"AWS denied DescribeLoadBalancers to this identity (AccessDenied: {DENIED})"),
        ("ExpiredToken", "The security token included in the request is expired", "the AWS credentials have expired"),
        ("InvalidClientTokenId", "The security token included in the request is invalid", "AWS does not accept these"),
    ],
)
def test_shift_denied_or_with_an_expired_login_is_refused_in_one_line(
    project: Path,
    emulated: Emulated,
    stubbed_elbv2: Stubber,
    capsys: pytest.CaptureFixture[str],
    code: str,
    message: str,
    said: str,
) -> None:
    stubbed_elbv2.add_client_error(
        "describe_load_balancers", service_error_code=code, service_message=message, http_status_code=403
    )
    aws = Aws(REGION, eks=emulated.eks, sts=emulated.sts, ssm=emulated.ssm, elbv2=emulated.elbv2)
    assert shift(["--to", "green", "--config", str(project)], aws=aws) == 2
    printed = capsys.readouterr()
    assert printed.err.startswith(f"refused: {said}"), printed.err
    assert printed.err.rstrip().endswith("nothing was changed")
    no_traceback(printed.out + printed.err)


def test_a_denial_names_the_policy_to_get(emulated: Emulated, stubbed_eks: Stubber) -> None:
    stubbed_eks.add_client_error("list_clusters", service_error_code="AccessDeniedException", service_message=DENIED)
    with pytest.raises(Exception) as raised:  # noqa: PT011 - any botocore error: what matters is its wording
        emulated.eks.list_clusters()
    line = aws_problem(raised.value)
    assert line is not None
    assert "the deployer's policies, or to move traffic the traffic operator's (policies/README.md)" in line
    assert aws_problem(ValueError("a bug")) is None  # not AWS's: stays a traceback


@pytest.mark.parametrize(
    ("held", "why"),
    [
        (b"{ not json", "not Terraform state: Expecting property name enclosed in double quotes"),
        (b'{"version": 4, "lineage": "\xff"}', "not Terraform state: byte 0xff at 27 is no UTF-8"),  # was a traceback
    ],
)
def test_retire_with_an_unreadable_state_destroys_nothing_and_says_why(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], held: bytes, why: str
) -> None:
    (project.parent / "terraform-state" / "green.tfstate").write_bytes(held)
    ran: list[Any] = []

    def run_cdktf(*args: Any, **kwargs: Any) -> int:
        ran.append(args)
        return 0

    monkeypatch.setattr(retire, "run_cdktf", run_cdktf)
    assert retire.main(["green", "--config", str(project)]) == 2
    printed = capsys.readouterr()
    assert printed.err.startswith("refused: cannot read green's Terraform state "), printed.err
    assert why in printed.err
    assert "nothing was destroyed" in printed.err
    no_traceback(printed.out + printed.err)
    assert ran == []


def test_retire_with_a_state_bucket_it_may_not_read_destroys_nothing(
    tmp_path: Path, emulated: Emulated, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = base_config(blue={"kubernetes_version": "1.35", "weight": 100}, green={"kubernetes_version": "1.36"})
    config["state"] = {"backend": "s3", "bucket": "acme-state", "region": REGION}
    path = write_project(tmp_path, config)
    client = boto3.client("s3", region_name=REGION)
    monkeypatch.setattr(retire, "Aws", lambda region: Aws(region, s3=client, route53=emulated.route53))
    with Stubber(client) as stub:
        stub.add_client_error(
            "get_object", service_error_code="AccessDenied", service_message="Access Denied", http_status_code=403
        )
        assert retire.main(["green", "--config", str(path)]) == 2
    printed = capsys.readouterr()
    assert printed.err.startswith("refused: cannot read green's Terraform state s3://acme-state/"), printed.err
    assert "AWS denied GetObject to this identity (AccessDenied: Access Denied)" in printed.err
    no_traceback(printed.out + printed.err)


class ExpiringElbv2:
    """The emulator's ELBv2 until the teardown waits for the load balancer to go: then the login has expired."""

    def __init__(self, elbv2: Any) -> None:
        self._elbv2 = elbv2

    def get_paginator(self, operation: str) -> Any:
        raise aws_error(EXPIRED[0], "DescribeLoadBalancers", EXPIRED[1])

    def __getattr__(self, name: str) -> Any:
        return getattr(self._elbv2, name)


def test_the_destroy_hook_that_loses_aws_part_way_says_what_is_gone_and_exits_1(
    emulated: Emulated, argocd: FakeKubernetes, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Once applications are deleted, an AWS error is a failure part-way (exit 1), not 'nothing changed'."""
    emulated.deploy_cluster("blue")
    emulated.make_load_balancer("blue")
    emulated.write_records("blue", 0)
    monkeypatch.setenv(PLAN_ENV, json.dumps(PLAN.to_json()))
    monkeypatch.setenv(FORCE_ENV, "0")
    aws = Aws(
        REGION,
        route53=emulated.route53,
        eks=emulated.eks,
        ec2=emulated.ec2,
        ssm=emulated.ssm,
        sts=emulated.sts,
        elbv2=ExpiringElbv2(emulated.elbv2),
        kube=lambda _: argocd.api(),
    )
    monkeypatch.setattr(teardown, "Aws", lambda region: aws)
    monkeypatch.setattr(teardown, "SystemClock", FakeClock)
    assert teardown.main() == 1
    printed = capsys.readouterr()
    assert printed.err.startswith("teardown failed: the AWS credentials have expired (DescribeLoadBalancers: ExpiredToken)")
    assert "run `cdktf destroy blue` again once AWS answers" in printed.err
    no_traceback(printed.err)
    # It had begun (the App of Apps no longer re-creates its children): "nothing was changed" would be untrue.
    assert argocd.events[0].startswith("patch app-of-apps")
