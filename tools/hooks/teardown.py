"""Destroy-time hook of a colour's stack: what `cdktf destroy <colour>` does before Terraform removes anything.

Terraform runs it from the colour's `teardown` resource (components/destroy_hook.py), which depends on
every other resource of the stack: on destroy it goes first, and if it fails nothing else goes.

1. Refuses while the colour still has live weight (in the shared load balancer: the weights parameter or a rule),
   unless `BLUEGREEN_FORCE_DESTROY=1` (`python -m tools.retire <colour> --force`). The configuration's weights are
   not asked: they only seed a new traffic stack.
2. Reads the Argo CD Applications the cluster runs, and their sync waves: the colour's Git revision
   decides them, not this checkout. It deletes those that carry Argo CD's resources finalizer (deleting
   them deletes what they installed), highest wave first; the others (Argo CD's own, which must keep
   running until the end) go with the cluster, and it says which.
3. Stops the App of Apps from re-creating its children, then deletes the applications' Applications
   (sync wave above 0), each wave waited for; then the claims left in their namespaces (a StatefulSet's outlive it),
   waiting until the volumes the EBS CSI driver deletes with them are gone (a volume kept by its `Retain` policy is
   named); then their TargetGroupBindings: the load balancer controller takes the colour's pods out of the shared
   load balancer's target groups.
4. Waits until no target of the colour is registered in the shared load balancer, and until what the colour's own
   controllers made outside it (load balancers, target groups, security groups, Route53 records and their TXT
   ownership records) is gone. When the colour's cluster is gone, or `--force` goes on past a Kubernetes
   API it cannot reach, no controller of the colour is left to take its pods out: it deregisters them itself first.
   Then it takes the colour's target groups out of every application's weighted rule (at weight 0, under the traffic
   lock), so the traffic stack can delete them.
5. Deletes the controllers' Applications (sync wave 0 and below: ExternalDNS, then the load balancer
   controller).

Every wait shares one bound (`traffic.teardown_timeout_seconds`); when it runs out, the error names
what is still there. Re-running `cdktf destroy <colour>` resumes where it stopped.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TextIO

from model.platform import RESOURCES_FINALIZER, SYNC_WAVE_ANNOTATION
from model.teardown_plan import FORCE_ENV, PLAN_ENV, TeardownPlan
from tools.aws import Aws
from tools.aws_problems import aws_errors_as
from tools.cli import exit_status
from tools.clock import POLL_SECONDS, Clock, SystemClock
from tools.kube import (
    APPLICATIONS,
    CLAIMS_IN,
    TARGET_GROUP_BINDINGS,
    TARGET_GROUP_BINDINGS_IN,
    VOLUMES,
    KubeApi,
    KubeError,
)
from tools.leftovers import colour_leftovers, find_zone
from tools.live_routes import RoutesError, deregister_all, read_routes, registered, write_rules
from tools.live_weights import colour_weight, colour_weights, read_live, write_live
from tools.traffic_lock import LockedError, LockLostError, TrafficLock


class UnsafeTeardownError(Exception):
    """The colour still serves traffic; nothing was deleted."""


class TeardownError(Exception):
    """Something could not be removed in time; the message names it."""


# The hook also runs when a `cdktf deploy` replaces the colour's cluster (stacks/cluster.py).
REPLACING = (
    "if a deploy is replacing the cluster, make that change as a new colour instead "
    "(README: 'Patches, and changes that would replace')"
)


def live_weight(aws: Aws, plan: TeardownPlan) -> int:
    """The colour's live weight in the shared load balancer of its project."""
    return colour_weight(aws.elbv2, aws.ssm, plan.project, plan.colour)


def check_weight(plan: TeardownPlan, weight: int) -> None:
    """Refuse to take down a colour clients may still be sent to: what the live weights give it (the configuration's
    weights only seed a new traffic stack; the shift never writes them)."""
    if weight:
        raise UnsafeTeardownError(
            f"{plan.colour} still has weight {weight} in the shared load balancer: shift its traffic away first "
            f"(python -m tools.shift --to <colour>; in an emergency --now), or destroy anyway with python -m tools.retire "
            f"{plan.colour} --force; "
            f"{REPLACING}"
        )


# What Argo CD reads as a sync wave (strconv.Atoi): an optional sign and decimal digits, nothing around them.
_WAVE = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True)
class LiveApplication:
    """An Argo CD Application as the cluster has it."""

    name: str
    wave: int  # its sync wave; Argo CD's default, 0, without the annotation
    finalized: bool  # it carries the resources finalizer: deleting it deletes what it installed
    namespace: str = ""  # where it installs (spec.destination.namespace), when it says


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
        namespace = str(((item.get("spec") or {}).get("destination") or {}).get("namespace") or "")
        found.append(LiveApplication(name, int(text), cascades, namespace))
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
            check_weight(self.plan, live_weight(self.aws, self.plan))
        api = self.aws.kube(self.plan.cluster) if self._cluster_exists() else None
        # AWS stopping to answer part-way is a failure part-way: say so, and that a re-run resumes.
        resume = f"run `cdktf destroy {self.plan.colour}` again once AWS answers: it resumes where this stopped"
        with aws_errors_as(
            lambda said: TeardownError(f"{said}. Part of {self.plan.colour}'s apps may be gone already; {resume}")
        ):
            self._remove(api, zone)
        self._say(f"{self.plan.colour}: applications, targets, load balancers and records are gone; Terraform removes the rest")

    def _remove(self, api: KubeApi | None, zone: str | None) -> None:
        reached = api is not None and self._through_kubernetes(functools.partial(self._remove_workloads, api))
        if not reached:
            self._deregister_targets()
        self._wait_until_gone(zone)
        self._detach()
        if api is not None and reached:
            self._through_kubernetes(functools.partial(self._remove_controllers, api))

    def _deregister_targets(self) -> None:
        """The colour's pods out of its target groups, by hand: its cluster is gone (or unreachable, with --force), so no
        load balancer controller of the colour will take out what it registered, and the wait below would never end."""
        try:
            groups = read_routes(self.aws.elbv2, self.plan.project).of_colour(self.plan.colour)
        except RoutesError:
            return  # no shared load balancer: no target of the colour in it
        for app, count in deregister_all(self.aws.elbv2, groups).items():
            self._say(
                f"{count} target(s) of {app} deregistered from {self.plan.colour}'s target group: no controller of "
                f"{self.plan.colour} is left to do it"
            )

    def _detach(self) -> None:
        """The colour's target groups out of every weighted rule, at weight 0: the rules are the shift's, and a target
        group a rule forwards to cannot be deleted (the traffic stack's next deploy without the colour deletes it)."""
        try:
            routes = read_routes(self.aws.elbv2, self.plan.project)
        except RoutesError:
            return  # no shared load balancer (any more): nothing forwards to the colour
        forwarded = any(self.plan.colour in route.target_groups for route in routes.public.values())
        try:
            named = self.plan.colour in colour_weights(self.aws.ssm, self.plan.project)
        except RoutesError:
            named = False
        if not forwarded and not named:
            return
        lock = TrafficLock(self.aws.ssm, self.aws.sts, self.plan.project, f"teardown of {self.plan.colour}", self.clock)
        writers = {"elbv2": self.aws.elbv2, "ssm": self.aws.ssm}
        try:
            with lock.held(say=self._say), lock.fenced(writers):
                live = read_live(self.aws.ssm, self.plan.project)
                if live.colours.get(self.plan.colour, 0) and not self.force:
                    raise UnsafeTeardownError(f"{self.plan.colour} got weight {live.colours[self.plan.colour]} meanwhile")
                # Each application's rule at its own split, less the colour.
                splits = {app: live.of(app) for app in routes.public}
                changed = write_rules(self.aws.elbv2, routes, splits, without=self.plan.colour) if forwarded else 0
                # The live weights keep configured colours only: the retired one leaves them too, under the lock.
                write_live(self.aws.ssm, self.plan.project, live.updated(splits, keep=routes.public).without(self.plan.colour))
        except (LockedError, LockLostError) as err:
            raise TeardownError(f"{err}; {self.plan.colour}'s applications are gone already, its target groups stay") from None
        self._say(
            f"{self.plan.colour}'s target groups taken out of {changed} weighted rule(s), and {self.plan.colour} out of "
            "the live weights"
        )

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

    def _through_kubernetes(self, action: Callable[[], None]) -> bool:
        """True when the action ran; False when --force went on past a Kubernetes API it could not reach."""
        try:
            action()
            return True
        except KubeError as err:
            if not self.force:
                raise TeardownError(
                    f"cannot reach {self.plan.cluster}'s Kubernetes API ({err}): the apps must go first so their "
                    f"load balancer and records do not outlive the cluster. Fix access (your identity needs a cluster "
                    f"admin access entry), or go on without it: python -m tools.retire {self.plan.colour} --force"
                ) from None
            self._say(
                f"--force: skipping the applications, the Kubernetes API is unreachable ({err}); volumes their claims "
                f"hold stay (EBS volumes tagged ebs.csi.aws.com/cluster-name={self.plan.cluster})"
            )
            return False

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
        # The applications, the volumes their claims kept, then what binds their pods to the target groups.
        workloads = [a for a in applications if a.finalized and a.wave > 0]
        self._remove_waves(api, workloads)
        self._remove_claims(api, sorted({a.namespace for a in workloads if a.namespace}))
        self._remove_bindings(api)

    def _remove_claims(self, api: KubeApi, namespaces: list[str]) -> None:
        """The claims left in the applications' namespaces (a StatefulSet's outlive it: Kubernetes keeps them unless its
        persistentVolumeClaimRetentionPolicy says Delete), then a wait until each volume bound to them whose reclaim
        policy is Delete is gone (the EBS CSI driver deletes the EBS volume, then the PersistentVolume goes): before the
        driver's add-on and the nodes go with the cluster. A volume its policy keeps (Retain) is named, and left."""
        claims = {
            namespace: [item for item in (api.get(CLAIMS_IN.format(namespace=namespace)) or {}).get("items", [])]
            for namespace in namespaces
        }
        bound = {
            str(claim["spec"]["volumeName"])
            for items in claims.values()
            for claim in items
            if (claim.get("spec") or {}).get("volumeName")
        }
        volumes = [v for v in (api.get(VOLUMES) or {}).get("items", []) if v["metadata"]["name"] in bound]
        kept = [v for v in volumes if (v.get("spec") or {}).get("persistentVolumeReclaimPolicy") == "Retain"]
        deleted = {v["metadata"]["name"] for v in volumes} - {v["metadata"]["name"] for v in kept}
        for namespace, items in claims.items():
            for claim in items:
                api.delete(f"{CLAIMS_IN.format(namespace=namespace)}/{claim['metadata']['name']}")
                self._say(f"claim {namespace}/{claim['metadata']['name']}: deleting")
        for volume in kept:
            handle = ((volume.get("spec") or {}).get("csi") or {}).get("volumeHandle", "?")
            self._say(
                f"volume {volume['metadata']['name']} (EBS volume {handle}) is kept: its reclaim policy is Retain; delete "
                "it yourself once its data is safe elsewhere (docs/stateful-workloads.md)"
            )

        def remaining() -> list[str]:
            left = [
                f"claim {namespace}/{item['metadata']['name']}"
                for namespace in namespaces
                for item in (api.get(CLAIMS_IN.format(namespace=namespace)) or {}).get("items", [])
            ]
            live = {v["metadata"]["name"] for v in (api.get(VOLUMES) or {}).get("items", [])}
            return left + [f"volume {name} (the EBS CSI driver deletes it)" for name in sorted(deleted & live)]

        self._wait(remaining)

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

    def _remove_bindings(self, api: KubeApi) -> None:
        """Every TargetGroupBinding: the load balancer controller deregisters its targets, then lets it go."""

        def remaining() -> list[str]:
            listing = api.get(TARGET_GROUP_BINDINGS) or {}
            return [f"{item['metadata']['namespace']}/{item['metadata']['name']}" for item in listing.get("items", [])]

        for binding in remaining():
            namespace, name = binding.split("/")
            api.delete(f"{TARGET_GROUP_BINDINGS_IN.format(namespace=namespace)}/{name}")
            self._say(f"TargetGroupBinding {binding}: deleting")
        self._wait(lambda: [f"TargetGroupBinding {b}" for b in remaining()])

    def _wait_until_gone(self, zone: str | None) -> None:
        def remaining() -> list[str]:
            left = []
            with contextlib.suppress(RoutesError):  # no shared load balancer: no target of the colour in it
                groups = read_routes(self.aws.elbv2, self.plan.project).of_colour(self.plan.colour)
                left += registered(self.aws.elbv2, groups)
            if zone:
                left += colour_leftovers(
                    route53=self.aws.route53,
                    elbv2=self.aws.elbv2,
                    ec2=self.aws.ec2,
                    zone=zone,
                    colour=self.plan.colour,
                    cluster=self.plan.cluster,
                )
            return left

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
