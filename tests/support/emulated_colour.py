"""A colour on the AWS emulator: its synthesized stack cut down to what the emulator (moto 5.2.5, in scripts/emulator.py)
can hold, so that the deploy workflow's own step applies it there for real, and its destroy runs the real teardown hook.

    project = EmulatedProject.create(root, endpoint, config)   # a scratch project (scripts/scratch_project.py) whose
    ...                                                         #   every synthesis writes the colours cut down
    hold_colours(project.root / "cdktf.out")                    # or cut down a synthesis copied in
    python -m scripts.ci.deploy_stacks blue --project-dir <root> # terraform init + apply, as deploy.yml runs it
    python -m tools.retire blue --auto-approve                   # `cdktf destroy blue`: the real CLI, the real hook

What `holdable_part` takes out of a colour's cdk.tf.json, and why:

- the helm and kubernetes providers and everything of theirs (scripts/ci/stacks.py `aws_part`: Argo CD's release, the
  bootstrap's Secrets, External Secrets Operator, their namespaces): their providers are not in the offline mirror
  (/opt/tf-plugins holds hashicorp/aws 5.100.0 only), and no Kubernetes API server runs here. The root release, the
  App of Apps, is kept as a `terraform_data` stand-in (`RELEASE_STAND_IN`) whose input is what the release would be
  handed: its name, namespace and values (resolved by the apply: the target groups, the table, the zone), and the
  cluster's name. It stands where the release stood in the order (the teardown hook still depends on it, so a destroy
  runs the hook first), and it is what the fake Argo CD syncs (tests/support/fake_clusters.py `released_in`);
- `aws_eks_addon`, `aws_eks_access_entry`, `aws_eks_access_policy_association`, `aws_eks_pod_identity_association`:
  moto has none of these APIs (CreateAddon, CreateAccessEntry, AssociateAccessPolicy, CreatePodIdentityAssociation
  answer "Not yet implemented"). What depends on them (the node group, the teardown hook) keeps the rest of its order.

Every reference to what was taken out is in a `depends_on` (checked: test_emulated_colour.py), and is dropped there.
Everything else stays as synthesized, guards and preconditions with it: the cluster and its role, KMS key and log
group, the node group and its launch template and role, the rule that lets the shared load balancer reach the
cluster's security group, the log group's create-time step (tools.log_group) and the teardown hook (tools.teardown,
components/destroy_hook.py), which a destroy runs for real.

Where moto answers unlike AWS, the emulator answers as AWS does once it serves the clusters' Kubernetes API
(scripts/emulator.py `_patch_moto_eks`, with FakeClusters' settings): it makes the cluster security group the load
balancer's rule is written on (moto reports none: the apply fails with `InvalidGroup.NotFound`). And what a second plan
of the same colour would otherwise change, found by applying blue and planning it again (now: no changes):
- replaced: the cluster (moto drops `accessConfig`: `bootstrap_cluster_creator_admin_permissions` forces it) and the
  node group (moto invents `remoteAccess`, `{"ec2SshKey": "eksKeypair"}`: `remote_access` forces it);
- updated in place: the node group (moto drops `updateConfig`), its launch template (moto copies the template's own
  tags into its `LaunchTemplateData`, so `tag_specifications` appear) and the load balancer's rule (moto loses the
  `description` of a rule that references a group).

The one seam the emulator forces on the commands: `cdktf destroy <colour>` (what `python -m tools.retire` runs, through
tools/cli.py `run_cdktf`) synthesizes the whole app first, then initialises and destroys the stack; the full stack
needs the helm provider, which `terraform init` cannot install offline. The scratch project's cdktf.json names as its
app `python -m tests.support.emulated_colour` (`EmulatedProject`): the project's own synthesis (main.py), then every
colour cut down here. The pinned cdktf CLI and everything after its synthesis run unchanged. (A stand-in `cdktf` first
on PATH cannot do it: `run_cdktf` puts the checkout's node_modules/.bin, with the real CLI, before the caller's PATH.)
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from model.platform import PARENT_APPLICATION
from scripts.ci.stacks import COMMON, STACK_FILE, STACKS_DIR, TRAFFIC, aws_part
from scripts.scratch_project import Project

# What moto cannot hold: every resource of these types goes.
UNHOLDABLE = (
    "aws_eks_addon",
    "aws_eks_access_entry",
    "aws_eks_access_policy_association",
    "aws_eks_pod_identity_association",
)
# The root release's stand-in: a `terraform_data` of this name.
RELEASE_STAND_IN = "in-cluster-release"
# The app command of a scratch project: the project's synthesis, then every colour cut down (run from its directory).
APP = ".venv/bin/python -m tests.support.emulated_colour"


def holdable_part(document: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A copy of a synthesized colour stack as the emulator can hold it, and the addresses taken out (the module's
    docstring says what and why). A stack cut down already comes back the same."""
    doc = json.loads(json.dumps(document))
    resources = doc["resource"]
    kept = {}
    for name, release in list(resources.get("helm_release", {}).items()):
        if release["name"] == PARENT_APPLICATION:
            del resources["helm_release"][name]
            (cluster,) = resources["aws_eks_cluster"]
            given = {key: release[key] for key in ("name", "namespace", "values")}
            stand_in = {"input": {**given, "cluster": f"${{aws_eks_cluster.{cluster}.name}}"}}
            resources.setdefault("terraform_data", {})[RELEASE_STAND_IN] = {**stand_in, "depends_on": release["depends_on"]}
            kept[f"helm_release.{name}"] = f"terraform_data.{RELEASE_STAND_IN}"
    _rewrite_dependencies(resources, lambda address: kept.get(address, address))
    doc, removed = aws_part(doc)
    resources = doc["resource"]
    removed += [f"{kind}.{name}" for kind in UNHOLDABLE for name in resources.pop(kind, {})]
    _rewrite_dependencies(resources, lambda address: None if address in removed else address)
    return doc, removed


def _rewrite_dependencies(resources: dict[str, dict[str, Any]], new: Any) -> None:
    """Each `depends_on` entry replaced by new(entry); dropped where that is None."""
    for items in resources.values():
        for body in items.values():
            if "depends_on" in body:
                body["depends_on"] = [n for n in (new(d) for d in body["depends_on"]) if n is not None]


def colour_stacks(outdir: Path) -> list[Path]:
    """The colours' stack files of a synthesis (every stack but common and traffic)."""
    stacks = outdir / STACKS_DIR.name
    if not stacks.is_dir():
        return []
    return sorted(p / STACK_FILE for p in stacks.iterdir() if p.name not in (COMMON, TRAFFIC) and (p / STACK_FILE).is_file())


def hold_colours(outdir: Path) -> dict[str, list[str]]:
    """Every colour of a synthesis (a cdktf.out) cut down in place; what was taken out of each, by colour."""
    removed = {}
    for stack in colour_stacks(outdir):
        document, removed[stack.parent.name] = holdable_part(json.loads(stack.read_text()))
        stack.write_text(json.dumps(document, indent=2))
    return removed


class EmulatedProject(Project):
    """A scratch project (scripts/scratch_project.py) whose cdktf.json names `APP` as its app: every `cdktf synth`,
    `deploy` or `destroy` run in it synthesizes the colours cut down."""

    def write_config(self, config: dict[str, Any]) -> None:
        super().write_config(config)
        path = self.root / "cdktf.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), "app": APP}, indent=2))


def main() -> int:
    """The app the cdktf CLI runs in an EmulatedProject: main.py's synthesis, then the colours cut down."""
    from main import main as synthesize  # the project's, where the CLI runs its app (sys.path[0] under -m)

    status = synthesize()
    hold_colours(Path(os.environ.get("CDKTF_OUTDIR") or "cdktf.out"))
    return status


if __name__ == "__main__":
    sys.exit(main())
