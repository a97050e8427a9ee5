"""Can this runner reach a colour's Kubernetes API? The first step of each job that deploys, retires or shifts to a
colour (deploy.yml's colour job, retire.yml, shift.yml), after `make synth` and the credentials, before any Terraform or
operator command:

    python -m scripts.ci.reach_cluster green

DescribeCluster of the colour's cluster (model/config/, cluster_name): a cluster not created yet passes, saying so
(the deploy creates it; on a GitHub-hosted runner with the private endpoint alone it adds that the deploy cannot go on
to Argo CD from there). Then a TCP connection to its API endpoint and a TLS handshake verified against the cluster's
own certificate authority, each within a few seconds: a runner outside the networks the endpoint admits waits forever
on its first packet, and a proxy in between fails the handshake. A failure is one line naming the repository variable
the jobs run on (RUNNER_VARIABLE) and what must admit that runner: the public endpoint's `eks.public_access_cidrs`, or
the private endpoint from inside the VPC; exit 1. Hosted runners' egress addresses cannot be listed, so the jobs run
where the team says (docs/ci.md, "Reaching the clusters").

Runs with the project's virtualenv (`make synth` made it): it reads the configuration through model/ and calls AWS
with boto3, as the operator commands do.
"""

from __future__ import annotations

import argparse
import base64
import os
import socket
import ssl
import sys
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model.config import Config, cluster_name
from model.loading import ConfigError, load_config

# The repository variable the jobs' `runs-on` reads (.github/workflows/: deploy's colour job, retire, shift).
RUNNER_VARIABLE = "CLUSTER_RUNNER"
# GitHub's own runners say so in the job's environment ("Variables reference", default variables: RUNNER_ENVIRONMENT).
HOSTED = ("RUNNER_ENVIRONMENT", "github-hosted")
# Per step (the connection, then the handshake): an endpoint that admits the runner answers in well under a second.
CONNECT_SECONDS = 5.0
EXIT_UNREACHABLE = 1
EXIT_REFUSED = 2


@dataclass(frozen=True)
class Endpoint:
    url: str  # https://<id>.<suffix>.<region>.eks.amazonaws.com
    certificate_authority: str  # base64 of the PEM, as DescribeCluster gives it


def endpoint_of(eks: Any, cluster: str) -> Endpoint | None:
    """The cluster's API endpoint, from DescribeCluster; None while there is none (no cluster yet, or one still being
    created, which has no endpoint until it is)."""
    try:
        found = eks.describe_cluster(name=cluster)["cluster"]
    except eks.exceptions.ResourceNotFoundException:
        return None
    if not found.get("endpoint"):
        return None
    return Endpoint(found["endpoint"], found.get("certificateAuthority", {}).get("data", ""))


def unreachable(endpoint: Endpoint, *, timeout: float = CONNECT_SECONDS) -> str | None:
    """Why no TLS session with the endpoint could be had within the timeout, or None when one was."""
    url = urllib.parse.urlsplit(endpoint.url)
    host, port = url.hostname or "", url.port or 443
    try:
        authority = base64.b64decode(endpoint.certificate_authority).decode()
        context = ssl.create_default_context(cadata=authority)
    except (ValueError, ssl.SSLError) as err:
        return f"its certificate authority cannot be read: {err}"
    try:
        with (
            socket.create_connection((host, port), timeout=timeout) as connection,
            context.wrap_socket(connection, server_hostname=host),
        ):
            return None
    except OSError as err:  # refused, timed out, no route, no such name, a certificate of another authority
        return str(err) or type(err).__name__


def where_to_run(config: Config) -> str:
    """The runners the configuration's endpoints admit."""
    eks = config.eks
    public = "whose egress addresses eks.public_access_cidrs lists (the public endpoint)"
    private = "inside the VPC, admitted by the cluster security group on 443 (the private endpoint)"
    if eks.endpoint_public_access and eks.endpoint_private_access:
        return f"a runner {private}, or {public}"
    if eks.endpoint_private_access:
        return f"a runner {private}; eks.endpoint_public_access is false"
    return f"a runner {public}; eks.endpoint_private_access is false"


def check(config: Config, colour: str, eks: Any, *, timeout: float = CONNECT_SECONDS, hosted: bool = False) -> tuple[bool, str]:
    """(reachable, the one line to print). hosted: a GitHub-hosted runner (RUNNER_ENVIRONMENT), outside any VPC."""
    cluster = cluster_name(config, colour)
    endpoint = endpoint_of(eks, cluster)
    if endpoint is None:
        line = f"{cluster} has no API endpoint yet (not created, or still being created): nothing to reach"
        if hosted and not config.eks.endpoint_public_access:
            # It passes all the same; but the apply that creates the cluster installs Argo CD into it next, from here,
            # through a private endpoint only. (A public one may admit a larger hosted runner's fixed addresses.)
            line += (
                f"; but this GitHub-hosted runner is outside the VPC, and eks.endpoint_public_access is false: set the "
                f"repository variable {RUNNER_VARIABLE} to a runner inside it, or the deploy fails once the cluster exists"
            )
        return True, line
    why = unreachable(endpoint, timeout=timeout)
    if why is None:
        return True, f"{cluster}'s Kubernetes API ({endpoint.url}) answered a TLS handshake: reachable from this runner"
    return False, (
        f"{cluster}'s Kubernetes API ({endpoint.url}) cannot be reached from this runner within {timeout:g} s ({why}): "
        f"set the repository variable {RUNNER_VARIABLE} to the label of {where_to_run(config)} (docs/ci.md, "
        '"Reaching the clusters")'
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.ci.reach_cluster", description=__doc__.split("\n\n")[0])
    parser.add_argument("colour", help="the colour whose cluster the job operates")
    parser.add_argument("--config", type=Path, default=Path("cdktf.json"), help="the project file (default: cdktf.json)")
    parser.add_argument("--timeout", type=float, default=CONNECT_SECONDS, help="seconds per step (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        config = load_config(args.config)
    except ConfigError as err:
        print(f"reach_cluster: refused: {err}", file=sys.stderr)
        return EXIT_REFUSED
    if args.colour not in config.clusters:
        known = ", ".join(config.clusters)
        print(f"reach_cluster: refused: {args.colour!r} is not a configured colour; use one of {known}", file=sys.stderr)
        return EXIT_REFUSED
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        eks = boto3.client("eks", region_name=config.region)
        hosted = os.environ.get(HOSTED[0]) == HOSTED[1]
        reachable, line = check(config, args.colour, eks, timeout=args.timeout, hosted=hosted)
    except (BotoCoreError, ClientError) as err:  # no credentials, a denial: the job's role needs eks:DescribeCluster
        print(f"reach_cluster: refused: DescribeCluster of {cluster_name(config, args.colour)}: {err}", file=sys.stderr)
        return EXIT_REFUSED
    print(f"reach_cluster: {line}", file=sys.stdout if reachable else sys.stderr)
    return 0 if reachable else EXIT_UNREACHABLE


if __name__ == "__main__":
    sys.exit(main())
