"""Which stacks a change touches: `cdk.tf.json` of each stack compared between the base's synthesis and this one's.

    python -m scripts.ci.changed_stacks --base-dir DIR            # DIR: a checkout of the base, synthesized
    python -m scripts.ci.changed_stacks --base-ref origin/main    # synthesizes the base in .cache/ci/base first
    python -m scripts.ci.changed_stacks --check-clone             # the colours' revisions are in this clone (fetched)

Order: common, then traffic, then each colour as the configuration lists them (the order a deploy must follow:
a colour reads common's and traffic's state). Beside them, the colours whose own entry (`clusters.<colour>`) this
change edits (`named`): the frozen rule (docs/architecture.md, "The serving colour is frozen") keeps a serving colour
whose stack changed while its entry did not from being deployed, and whether a colour serves is the live weights'
to say, read by the jobs that hold AWS credentials when they run (scripts/ci/serving.py), never config.json's weights.
Without --base-ref or --base-dir the base is GitHub's: the pull request's base branch ($GITHUB_BASE_REF), or the
commit before a push ($GITHUB_EVENT_PATH). A base the clone lacks (a depth-1 checkout) is fetched from origin, its
one commit.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model.paths import PROJECT_DIR
from model.revisions import FULL_SHA, RevisionError, RevisionKind, commit_of, revision_kind
from scripts.ci.stacks import COMMON, TRAFFIC, colours, outputs, project_name, raw_config, stack_file, summary

BASE_CHECKOUT = PROJECT_DIR / ".cache" / "ci" / "base"
NO_COMMIT = "0" * 40  # a push that created the branch: GitHub's `before`
REMOTE = "origin"  # what actions/checkout clones from, and a person's clone too
FETCH_HINT = "set `fetch-depth: 0` and `fetch-tags: true` on actions/checkout (docs/ci.md, 'Shallow clones')"


@dataclass(frozen=True)
class Changes:
    deploy: list[str] = field(default_factory=list)  # every changed stack, in deploy order
    named: list[str] = field(default_factory=list)  # the colours whose own entry this change edits (or adds)
    removed: list[str] = field(default_factory=list)  # colours the base had and this change drops


def changed_stacks(base: Path, head: Path) -> Changes:
    """Compare two synthesized checkouts (each with cdktf.json, its config and cdktf.out)."""
    base_config, head_config = raw_config(base), raw_config(head)
    changes = Changes()
    for stack in (COMMON, TRAFFIC, *colours(head_config)):
        before, after = stack_file(base, stack), stack_file(head, stack)
        if not after.is_file():
            raise SystemExit(f"changed_stacks: {after} is missing: run `make synth` in {head} first")
        if before.is_file() and before.read_bytes() == after.read_bytes():
            continue
        changes.deploy.append(stack)
        if stack not in (COMMON, TRAFFIC) and _entry(base_config, stack) != _entry(head_config, stack):
            changes.named.append(stack)
    changes.removed.extend(c for c in colours(base_config) if c not in head_config.get("clusters", {}))
    return changes


def _entry(config: Mapping[str, Any], colour: str) -> Any:
    """The colour's own entry, as written (None when the configuration has no such colour)."""
    return config.get("clusters", {}).get(colour)


def report(changes: Changes) -> str:
    lines = ["### Stacks changed", ""]
    for stack in changes.deploy:
        if stack in (COMMON, TRAFFIC) or stack in changes.named:
            lines.append(f"- {stack}: changed" + (f" (its entry `clusters.{stack}` too)" if stack in changes.named else ""))
        else:
            lines.append(
                f"- {stack}: changed, its entry `clusters.{stack}` unchanged: deployed only if it has no live weight "
                "when the deploy runs (a serving colour is frozen)"
            )
    if not changes.deploy:
        lines.append("- none")
    lines += [
        f"- {colour}: removed from the configuration. The traffic stack refuses this while {colour}'s cluster runs: "
        f"retire it first, while the configuration still names it (the retire workflow, or `python -m tools.retire "
        f"{colour}`), then remove it (docs/ci.md, 'Retiring a colour')"
        for colour in changes.removed
    ]
    return "\n".join(lines)


def base_ref_from_github(environ: Mapping[str, str]) -> str | None:
    """The pull request's base branch, or the commit before a push; None outside GitHub."""
    if environ.get("GITHUB_BASE_REF"):
        return f"{REMOTE}/{environ['GITHUB_BASE_REF']}"
    event_path = environ.get("GITHUB_EVENT_PATH")
    if event_path and Path(event_path).is_file():
        before = json.loads(Path(event_path).read_text()).get("before")
        if isinstance(before, str) and before:
            return before
    return None


def synthesized_base(ref: str, *, head: Path = PROJECT_DIR, into: Path = BASE_CHECKOUT) -> Path | None:
    """A worktree of `ref` beside the checkout, synthesized with the checkout's installations; None when the base has
    no commit (a push that created the branch: every stack is new)."""
    if ref == NO_COMMIT:
        return None
    found = _git(head, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if found.returncode != 0:
        fetched(head, ref)
        found = _git(head, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if found.returncode != 0:
        raise SystemExit(f"changed_stacks: the base {ref!r} is not in this clone and could not be fetched: {FETCH_HINT}")
    _git(head, "worktree", "remove", "--force", str(into))
    into.parent.mkdir(parents=True, exist_ok=True)
    if _git(head, "worktree", "add", "--detach", str(into), found.stdout.strip()).returncode != 0:
        raise SystemExit(f"changed_stacks: could not check out {ref!r} in {into}")
    for installed in (".venv", "node_modules"):
        (into / installed).symlink_to((head / installed).resolve())
    subprocess.run(["python", "-m", "scripts.cdktf_json"], cwd=into, check=True)
    subprocess.run(["cdktf", "synth"], cwd=into, check=True, stdout=subprocess.DEVNULL)
    return into


def fetched(head: Path, ref: str) -> bool:
    """The one commit of ref from origin, into a clone that lacks it (actions/checkout's default: depth 1, this branch
    only, no tags), under the name synth and the comparison look it up by: `origin/<branch>` as that remote-tracking
    ref, a full SHA (a push's `before`) as it is, any other name as a branch of origin or else a tag. Nothing is
    fetched where origin lacks it (or cannot be reached: a checkout that kept no credentials); True if it was."""
    if ref.startswith(f"{REMOTE}/"):
        names = [f"refs/heads/{ref.removeprefix(f'{REMOTE}/')}:refs/remotes/{ref}"]
    elif FULL_SHA.match(ref):
        names = [ref]
    else:
        names = [f"refs/heads/{ref}:refs/remotes/{REMOTE}/{ref}", f"refs/tags/{ref}:refs/tags/{ref}"]
    return any(_git(head, "fetch", "--no-tags", "--depth=1", REMOTE, f"+{name}").returncode == 0 for name in names)


def _git(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(project), *args], capture_output=True, text=True, check=False)


def missing_revisions(project: Path = PROJECT_DIR, *, fetch: bool = False) -> list[str]:
    """Each colour's revision this clone lacks (one line each): synth then cannot read a serving colour's release and
    readiness cannot check it. A full commit SHA counts as present only if the clone has it. fetch: first fetch each
    missing one from origin, one commit deep."""
    config = raw_config(project)
    default = config.get("gitops", {}).get("revision")
    problems = []
    for colour, entry in config.get("clusters", {}).items():
        own = entry.get("gitops_revision")
        key, revision = (f"clusters.{colour}.gitops_revision", own) if own else ("gitops.revision", default)
        if revision is None:
            continue  # the default branch: what was checked out
        if fetch and not _present(project, revision):
            fetched(project, revision)
        if not _present(project, revision):
            problems.append(f"{key}: {revision!r} is not in this clone; {FETCH_HINT}")
    return problems


def _present(project: Path, revision: str) -> bool:
    """Resolved as synth resolves it (a branch may be only `origin/<branch>` in a clone), and of a known kind."""
    try:
        commit_of(revision, key="", project=project)
    except RevisionError:
        return False
    return revision_kind(revision, project=project) is not RevisionKind.UNKNOWN


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.ci.changed_stacks", description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--base-dir", type=Path, help="a synthesized checkout of the base")
    where.add_argument("--base-ref", help="a revision of this clone to synthesize as the base (default: GitHub's)")
    where.add_argument(
        "--check-clone", action="store_true", help="only fetch what the colours' revisions need, and check they are here"
    )
    parser.add_argument("--head-dir", type=Path, default=PROJECT_DIR, help="the synthesized checkout (default: this one)")
    args = parser.parse_args(argv)
    if args.check_clone:
        problems = missing_revisions(args.head_dir, fetch=True)
        for problem in problems:
            print(f"changed_stacks: {problem}", file=sys.stderr)
        return 1 if problems else 0
    base = args.base_dir
    if base is None:
        ref = args.base_ref or base_ref_from_github(os.environ)
        if ref is None:
            parser.error("no base: give --base-ref or --base-dir (GitHub's GITHUB_BASE_REF or push event are not set)")
        base = synthesized_base(ref, head=args.head_dir)
    head_config = raw_config(args.head_dir)
    every = colours(head_config)
    changes = changed_stacks(base, args.head_dir) if base else Changes(deploy=[COMMON, TRAFFIC, *every], named=every)
    summary(report(changes))
    outputs(
        {
            "stacks": changes.deploy,
            "colours": [s for s in changes.deploy if s not in (COMMON, TRAFFIC)],
            "named": changes.named,
            "common": COMMON in changes.deploy,
            "traffic": TRAFFIC in changes.deploy,
            "project": project_name(head_config),
        }
    )
    print(json.dumps({"deploy": changes.deploy, "named": changes.named, "removed": changes.removed}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
