"""Destroy-time hook of a colour's stack: what `cdktf destroy <colour>` does before Terraform removes anything.

Terraform runs it from the colour's `teardown` resource (components/destroy_hook.py), which depends on
every other resource of the stack: on destroy it goes first, and if it fails nothing else goes.

1. Refuses while the colour still has weight (its Route53 record, or the config it was deployed
   with), unless `BLUEGREEN_FORCE_DESTROY=1` (`python -m tools.retire <colour> --force`).
2. Stops the App of Apps from re-creating its children, then deletes the workload Applications
   (sync wave above 0) last-up-first, each waited for: its finalizer deletes the Ingress, and the
   load balancer controller deletes the ALB before the Ingress is gone. With app delivery `helm`,
   it deletes the Ingresses of the app's namespace the same way.
3. Waits until the colour's load balancers, target groups, security groups and Route53 records
   (address and TXT ownership records) are gone: ExternalDNS removes the records on its next sync.
4. Deletes the controllers' Applications (ExternalDNS, then the load balancer controller).

Every wait shares one bound (`traffic.teardown_timeout_seconds`); when it runs out, the error names
what is still there. Re-running `cdktf destroy <colour>` resumes where it stopped.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TextIO

from model.teardown_plan import FORCE_ENV, PLAN_ENV, TeardownPlan
from tools.aws import Aws, colour_leftovers, colour_weight, find_zone
from tools.cli import exit_status
from tools.clock import POLL_SECONDS, Clock, SystemClock
from tools.kube import APPLICATIONS, INGRESSES, KubeApi, KubeError


class UnsafeTeardownError(Exception):
    """The colour still serves traffic; nothing was deleted."""


class TeardownError(Exception):
    """Something could not be removed in time; the message names it."""


# The hook also runs when a `cdktf deploy` replaces the colour's cluster (stacks/cluster.py).
REPLACING = (
    "if a deploy is replacing the cluster, make that change as a new colour instead (README: 'Changes that replace a cluster')"
)


def check_weight(plan: TeardownPlan, live_weight: int | None, *, config: str = "") -> None:
    """Refuse to take down a colour clients may still be sent to. config: where plan.weight comes from
    (default: the config the colour was deployed with, which its stack carries)."""
    if live_weight:
        raise UnsafeTeardownError(
            f"{plan.colour} still has weight {live_weight} in Route53 for {plan.hostname}: shift its traffic away "
            f"first (python -m tools.shift --to <colour>), or destroy anyway with python -m tools.retire {plan.colour} "
            f"--force; {REPLACING}"
        )
    if plan.weight:
        raise UnsafeTeardownError(
            f"clusters.{plan.colour}.weight is {plan.weight} in {config or f'the config {plan.colour} was deployed with'}: "
            "set it to 0 "
            f"and deploy {plan.colour} (the shift does both), or destroy anyway with python -m tools.retire {plan.colour} "
            f"--force; {REPLACING}"
        )


@dataclass
class Teardown:
    plan: TeardownPlan
    aws: Aws  # its Kubernetes API is asked for only when the cluster exists
    clock: Clock
    out: TextIO
    force: bool = False

    def run(self) -> None:
        self._deadline = self.clock.now() + timedelta(seconds=self.plan.timeout_seconds)
        zone = self._zone()
        if self.force:
            self._say(f"--force: not checking {self.plan.colour}'s weight")
        else:
            check_weight(self.plan, colour_weight(self.aws.route53, zone, self.plan.hostname, self.plan.colour))
        api = self.aws.kube(self.plan.cluster) if self._cluster_exists() else None
        if api:
            self._through_kubernetes(functools.partial(self._remove_workloads, api))
        if zone:
            self._wait_until_gone(zone)
        if api:
            self._through_kubernetes(functools.partial(self._remove, self.plan.controller_applications, api))
        self._say(f"{self.plan.colour}: applications, load balancers and records are gone; Terraform removes the rest")

    def _zone(self) -> str | None:
        """None when common's zone is gone: then no record of ours can be left in it."""
        try:
            return find_zone(self.aws.route53, self.plan.zone_name)
        except LookupError as err:
            raise TeardownError(f"{err}; nothing of {self.plan.colour} has been deleted") from None

    def _cluster_exists(self) -> bool:
        try:
            self.aws.eks.describe_cluster(name=self.plan.cluster)
        except self.aws.eks.exceptions.ResourceNotFoundException:
            return False
        return True

    def _through_kubernetes(self, action: Callable[[], None]) -> None:
        try:
            action()
        except KubeError as err:
            if not self.force:
                raise TeardownError(
                    f"cannot reach {self.plan.cluster}'s Kubernetes API ({err}): the apps must go first so their "
                    f"load balancer and records do not outlive the cluster. Fix access (your identity needs a cluster "
                    f"admin access entry), or go on without it: python -m tools.retire {self.plan.colour} --force"
                ) from None
            self._say(f"--force: skipping the applications, the Kubernetes API is unreachable ({err})")

    def _remove_workloads(self, api: KubeApi) -> None:
        parent = self._application(self.plan.parent_application)
        if api.get(parent) is not None:
            # Automated sync would re-create the children the next steps delete.
            api.merge_patch(parent, {"spec": {"syncPolicy": {"automated": None}}})
            self._say(f"{self.plan.parent_application}: automated sync off")
        self._remove(self.plan.workload_applications, api)
        for namespace in self.plan.ingress_namespaces:
            self._remove_ingresses(api, namespace)

    def _remove(self, names: tuple[str, ...], api: KubeApi) -> None:
        for name in names:
            path = self._application(name)
            if api.get(path) is None:
                continue
            api.delete(path)
            self._say(f"application {name}: deleting")
            self._wait(functools.partial(self._still_there, api, path, f"Argo CD application {name}"))
            self._say(f"application {name}: gone")

    @staticmethod
    def _still_there(api: KubeApi, path: str, what: str) -> list[str]:
        return [] if api.get(path) is None else [what]

    def _remove_ingresses(self, api: KubeApi, namespace: str) -> None:
        collection = INGRESSES.format(namespace=namespace)

        def remaining() -> list[str]:
            listing = api.get(collection) or {}
            return [f"Ingress {namespace}/{item['metadata']['name']}" for item in listing.get("items", [])]

        for item in remaining():
            api.delete(f"{collection}/{item.rsplit('/', 1)[1]}")
            self._say(f"{item}: deleting")
        self._wait(remaining)

    def _wait_until_gone(self, zone: str) -> None:
        def remaining() -> list[str]:
            return colour_leftovers(
                route53=self.aws.route53,
                elbv2=self.aws.elbv2,
                ec2=self.aws.ec2,
                zone=zone,
                colour=self.plan.colour,
                cluster=self.plan.cluster,
            )

        self._wait(remaining)

    def _wait(self, remaining: Callable[[], list[str]]) -> None:
        while left := remaining():
            if self.clock.now() >= self._deadline:
                raise TeardownError(
                    f"after {self.plan.timeout_seconds} s (traffic.teardown_timeout_seconds) still there: "
                    f"{'; '.join(left)}. Its controllers may still be at work: run `cdktf destroy {self.plan.colour}` "
                    "again to wait more; nothing else of the colour has been deleted"
                )
            self.clock.sleep(POLL_SECONDS)

    def _application(self, name: str) -> str:
        return f"{APPLICATIONS.format(namespace=self.plan.argocd_namespace)}/{name}"

    def _say(self, line: str) -> None:
        print(f"teardown: {line}", file=self.out, flush=True)


def main() -> int:
    try:
        plan = TeardownPlan.from_json(os.environ[PLAN_ENV])
    except (KeyError, ValueError) as err:
        print(f"teardown: no usable plan in {PLAN_ENV}: {err}", file=sys.stderr)
        return 2
    teardown = Teardown(
        plan=plan,
        aws=Aws(plan.region),
        clock=SystemClock(),
        out=sys.stdout,
        force=os.environ.get(FORCE_ENV) == "1",
    )
    return exit_status(teardown.run, refused=(UnsafeTeardownError,), failed=(TeardownError,), prefix="teardown ")


if __name__ == "__main__":
    sys.exit(main())
