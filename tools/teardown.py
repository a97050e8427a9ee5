"""Destroy-time hook of a colour's stack: what `cdktf destroy <colour>` does before Terraform removes anything.

Terraform runs it from the colour's `teardown` resource (components/destroy_hook.py), which depends on
every other resource of the stack: on destroy it goes first, and if it fails nothing else goes.

1. Refuses while the colour still has weight (its Route53 record, or the config it was deployed
   with), unless `BLUEGREEN_FORCE_DESTROY=1` (`python -m tools.retire <colour> --force`).
2. Reads the Argo CD Applications the cluster runs, and their sync waves: the colour's Git revision
   decides them, not this checkout. It deletes those that carry Argo CD's resources finalizer (deleting
   them deletes what they installed), highest wave first; the others (Argo CD's own, which must keep
   running until the end) go with the cluster, and it says which.
3. Stops the App of Apps from re-creating its children, then deletes the workload Applications
   (sync wave above 0), each wave waited for: their finalizer deletes the Ingresses, and the load
   balancer controller deletes the ALB before an Ingress is gone. With app delivery `helm`, it deletes
   the Ingresses of the app's namespace the same way.
4. Waits until the colour's load balancers, target groups, security groups and Route53 records
   (address and TXT ownership records) are gone: ExternalDNS removes the records on its next sync.
5. Deletes the controllers' Applications (sync wave 0 and below: ExternalDNS, then the load balancer
   controller).

Every wait shares one bound (`traffic.teardown_timeout_seconds`); when it runs out, the error names
what is still there. Re-running `cdktf destroy <colour>` resumes where it stopped.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TextIO

from model.teardown_plan import FORCE_ENV, PLAN_ENV, TeardownPlan
from model.workloads import RESOURCES_FINALIZER, SYNC_WAVE_ANNOTATION
from tools.aws import Aws, aws_errors_as, colour_leftovers, colour_weight, find_zone
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


# What Argo CD reads as a sync wave (strconv.Atoi): an optional sign and decimal digits, nothing around them.
_WAVE = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True)
class LiveApplication:
    """An Argo CD Application as the cluster has it."""

    name: str
    wave: int  # its sync wave; Argo CD's default, 0, without the annotation
    finalized: bool  # it carries the resources finalizer: deleting it deletes what it installed


def live_applications(listing: dict[str, Any] | None, colour: str) -> list[LiveApplication]:
    """The Applications of a listing (None: the Application kind is not installed), in the order of their names.

    A wave that is not an integer stops the teardown: Argo CD would sync that child as wave 0, but
    guessing the order here could delete a controller before what it has to clean up."""
    found = []
    for item in (listing or {}).get("items", []):
        metadata = item["metadata"]
        name = metadata["name"]
        text = (metadata.get("annotations") or {}).get(SYNC_WAVE_ANNOTATION, "0")
        if not _WAVE.fullmatch(text):
            raise TeardownError(
                f"application {name}: its annotation {SYNC_WAVE_ANNOTATION} is {text!r}, not an integer, so the order "
                f"to delete the applications in is unknown. Fix it in the Git revision {colour} follows, let "
                f"Argo CD sync it, then run `cdktf destroy {colour}` again"
            )
        # Argo CD's finalizer comes plain or with a deletion mode (`/foreground`, `/background`): either cascades.
        cascades = any(f.split("/")[0] == RESOURCES_FINALIZER for f in metadata.get("finalizers") or [])
        found.append(LiveApplication(name, int(text), cascades))
    return sorted(found, key=lambda a: a.name)


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
        # AWS stopping to answer part-way is a failure part-way: say so, and that a re-run resumes.
        resume = f"run `cdktf destroy {self.plan.colour}` again once AWS answers: it resumes where this stopped"
        with aws_errors_as(
            lambda said: TeardownError(f"{said}. Part of {self.plan.colour}'s apps may be gone already; {resume}")
        ):
            self._remove(api, zone)
        self._say(f"{self.plan.colour}: applications, load balancers and records are gone; Terraform removes the rest")

    def _remove(self, api: KubeApi | None, zone: str | None) -> None:
        if api:
            self._through_kubernetes(functools.partial(self._remove_workloads, api))
        if zone:
            self._wait_until_gone(zone)
        if api:
            self._through_kubernetes(functools.partial(self._remove_controllers, api))

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
        # Read before anything changes: a wave that is not an integer stops the teardown with nothing deleted.
        applications = self._live(api, untouched=True)
        if kept := [a.name for a in applications if not a.finalized]:
            # Deleting one would not remove what it installed; Argo CD itself must keep running until the end.
            self._say(f"leaving {', '.join(kept)} (no {RESOURCES_FINALIZER}): Terraform removes the cluster they run in")
        parent = self._application(self.plan.parent_application)
        if api.get(parent) is not None:
            # Automated sync would re-create the children the next steps delete.
            api.merge_patch(parent, {"spec": {"syncPolicy": {"automated": None}}})
            self._say(f"{self.plan.parent_application}: automated sync off")
        # Workloads: their Ingresses make the load balancer and the records.
        self._remove_waves(api, [a for a in applications if a.finalized and a.wave > 0])
        for namespace in self.plan.ingress_namespaces:
            self._remove_ingresses(api, namespace)

    def _remove_controllers(self, api: KubeApi) -> None:
        """What cleaned up after the workloads, once that is done: ExternalDNS, then the load balancer controller."""
        self._remove_waves(api, [a for a in self._live(api, untouched=False) if a.finalized and a.wave <= 0])

    def _live(self, api: KubeApi, *, untouched: bool) -> list[LiveApplication]:
        """The Applications of the cluster but the parent: Terraform removes it (its release), after the hook."""
        try:
            found = live_applications(api.get(APPLICATIONS.format(namespace=self.plan.argocd_namespace)), self.plan.colour)
        except TeardownError as err:
            raise TeardownError(f"{err}; nothing of {self.plan.colour} has been deleted" if untouched else str(err)) from None
        return [a for a in found if a.name != self.plan.parent_application]

    def _remove_waves(self, api: KubeApi, applications: list[LiveApplication]) -> None:
        """Highest wave first, each wave waited for; the Applications of one wave go together."""
        for wave in sorted({a.wave for a in applications}, reverse=True):
            names = [a.name for a in applications if a.wave == wave]
            for name in names:
                api.delete(self._application(name))
                self._say(f"application {name} (sync wave {wave}): deleting")
            self._wait(functools.partial(self._still_there, api, names))
            for name in names:
                self._say(f"application {name}: gone")

    def _still_there(self, api: KubeApi, names: list[str]) -> list[str]:
        return [f"Argo CD application {name}" for name in names if api.get(self._application(name)) is not None]

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
