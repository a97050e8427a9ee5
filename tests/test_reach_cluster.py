"""`python -m scripts.ci.reach_cluster <colour>`: the check the jobs that operate a colour run first (issue 43).

The connection on real sockets: a TLS listener on a loopback port with a certificate of its own authority
(tests/support/tls_listener.py) passes; a port nobody listens on, or a certificate of another authority, fails with
the one line naming the repository variable and the configuration key. DescribeCluster in the AWS emulator (moto):
a colour not created yet passes, and a created one is reached at the endpoint its description gives, which a test
points at its listener in moto's own record of the cluster (moto's endpoints resolve nowhere).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scripts.ci.reach_cluster import Endpoint, endpoint_of, main, unreachable
from tests.support.emulated_aws import PROJECT, REGION, Emulated, base_config
from tests.support.tls_listener import TlsListener, closed_port

ACCOUNT = "123456789012"  # moto's
BLUE = {"kubernetes_version": "1.35", "weight": 100}
GREEN = {"kubernetes_version": "1.36"}


@pytest.fixture(scope="module")
def listener() -> Iterator[TlsListener]:
    served = TlsListener()
    yield served
    served.close()


def project(tmp_path: Path, **eks: Any) -> Path:
    from tests.support.configs import OPERATORS_NETWORK, write_project

    raw = base_config(blue=BLUE, green=GREEN)
    # A private endpoint leaves the preview hosts no networks to default to (model/config/): the operators' own.
    previews = {"traffic": {"preview_cidrs": [OPERATORS_NETWORK]}} if eks.get("endpoint_public_access") is False else {}
    return write_project(tmp_path, {**raw, "eks": eks, **previews} if eks else raw)


def point_at(cluster: str, url: str, authority: str) -> None:
    """moto's record of the cluster: its endpoint and authority, what DescribeCluster answers."""
    from moto.eks.models import eks_backends

    record = eks_backends[ACCOUNT][REGION].clusters[cluster]
    record.endpoint, record.certificate_authority = url, {"data": authority}


# --- the connection -------------------------------------------------------------------------------------------------


def test_a_listener_that_completes_the_handshake_is_reachable(listener: TlsListener) -> None:
    before = listener.handshakes
    assert unreachable(Endpoint(listener.url, listener.authority), timeout=5) is None
    assert listener.handshakes_reach(before + 1) == before + 1


def test_a_port_nobody_listens_on_is_not(listener: TlsListener) -> None:
    why = unreachable(Endpoint(f"https://localhost:{closed_port()}", listener.authority), timeout=2)
    assert why is not None
    assert "refused" in why.lower()


def test_a_certificate_of_another_authority_is_not() -> None:
    """Something answers, but not the cluster: a proxy in between, or another cluster's endpoint."""
    served, other = TlsListener(), TlsListener()
    try:
        why = unreachable(Endpoint(served.url, other.authority), timeout=5)
    finally:
        served.close()
        other.close()
    assert why is not None
    assert "certificate verify failed" in why


# --- DescribeCluster, then the connection: the command -------------------------------------------------------------


def test_describe_cluster_gives_the_endpoint_and_nothing_for_a_colour_not_created(emulated: Emulated) -> None:
    emulated.deploy_cluster("green", "1.36")
    found = endpoint_of(emulated.eks, f"{PROJECT}-green")
    described = emulated.eks.describe_cluster(name=f"{PROJECT}-green")["cluster"]
    assert found == Endpoint(described["endpoint"], described["certificateAuthority"]["data"])
    assert endpoint_of(emulated.eks, f"{PROJECT}-blue") is None


def test_a_colour_not_created_yet_passes_saying_so(
    emulated: Emulated, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["green", "--config", str(project(tmp_path))]) == 0
    out = capsys.readouterr().out
    assert out == "reach_cluster: eks-bg-green has no API endpoint yet (not created, or still being created): nothing to reach\n"


def test_a_colour_not_created_yet_on_a_hosted_runner_with_a_private_endpoint_passes_with_a_warning(
    emulated: Emulated, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deploy that creates it installs Argo CD into it next, from the same runner: outside the VPC, it cannot."""
    monkeypatch.setenv("RUNNER_ENVIRONMENT", "github-hosted")
    assert main(["green", "--config", str(project(tmp_path, endpoint_public_access=False))]) == 0
    assert capsys.readouterr().out.endswith(
        "nothing to reach; but this GitHub-hosted runner is outside the VPC, and eks.endpoint_public_access is false: "
        "set the repository variable CLUSTER_RUNNER to a runner inside it, or the deploy fails once the cluster exists\n"
    )
    monkeypatch.setenv("RUNNER_ENVIRONMENT", "self-hosted")
    assert main(["green", "--config", str(project(tmp_path, endpoint_public_access=False))]) == 0
    assert capsys.readouterr().out.endswith("nothing to reach\n")


def test_a_cluster_whose_endpoint_answers_passes(
    emulated: Emulated, listener: TlsListener, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    emulated.deploy_cluster("green", "1.36")
    point_at(f"{PROJECT}-green", listener.url, listener.authority)
    assert main(["green", "--config", str(project(tmp_path))]) == 0
    assert capsys.readouterr().out == (
        f"reach_cluster: eks-bg-green's Kubernetes API ({listener.url}) answered a TLS handshake: reachable from this runner\n"
    )


def test_an_unreachable_cluster_fails_in_one_line_naming_the_variable_and_the_keys(
    emulated: Emulated, listener: TlsListener, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    emulated.deploy_cluster("green", "1.36")
    url = f"https://localhost:{closed_port()}"
    point_at(f"{PROJECT}-green", url, listener.authority)
    assert main(["green", "--config", str(project(tmp_path)), "--timeout", "2"]) == 1
    captured = capsys.readouterr()
    (line,) = captured.err.splitlines()
    assert captured.out == ""
    assert line.startswith(
        f"reach_cluster: eks-bg-green's Kubernetes API ({url}) cannot be reached from this runner within 2 s ("
    )
    assert line.endswith(
        "set the repository variable CLUSTER_RUNNER to the label of a runner inside the VPC, admitted by the cluster "
        "security group on 443 (the private endpoint), or whose egress addresses eks.public_access_cidrs lists (the "
        'public endpoint) (docs/ci.md, "Reaching the clusters")'
    )


def test_with_the_private_endpoint_alone_it_names_the_vpc_only(
    emulated: Emulated, listener: TlsListener, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    emulated.deploy_cluster("green", "1.36")
    point_at(f"{PROJECT}-green", f"https://localhost:{closed_port()}", listener.authority)
    assert main(["green", "--config", str(project(tmp_path, endpoint_public_access=False)), "--timeout", "2"]) == 1
    line = capsys.readouterr().err
    assert "a runner inside the VPC, admitted by the cluster security group on 443 (the private endpoint); " in line
    assert "eks.endpoint_public_access is false" in line
    assert "public_access_cidrs" not in line


def test_an_unknown_colour_is_refused(emulated: Emulated, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["purple", "--config", str(project(tmp_path))]) == 2
    assert capsys.readouterr().err == "reach_cluster: refused: 'purple' is not a configured colour; use one of blue, green\n"
