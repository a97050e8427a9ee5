"""`terraform plan` of each named stack, from cdktf.out: the plan in the job summary and, in a pull request, one
comment per stack (created once, edited on later pushes).

    python -m scripts.ci.plan_stacks common green            # after `make synth`
    python -m scripts.ci.plan_stacks green --comment          # and the pull request's comment (GITHUB_TOKEN)
    python -m scripts.ci.plan_stacks blue --named '["green"]'  # says whether a merge would deploy blue (it serves?)

Planned with `-lock=false`: the plan-only role may read the state but write nothing, the S3 lock file included;
the workflow's per-stack concurrency group keeps two runs of this repository apart. Exit 1 when any plan failed
(every stack is planned anyway).

A colour is planned without its in-cluster part (its Helm releases and namespaces): refreshing them reads Helm's
release records, which are Kubernetes Secrets beside Argo CD's own (its repository credentials, its signing key), and
whoever opens a pull request runs this job's code. So the plan role has no access entry to any cluster, and the
colour's AWS part (cluster, nodes, add-ons, access, Pod Identity, its load balancer rule) is planned from a copy of
the stack without the helm/kubernetes providers, each of its resources targeted: what the state holds of the
in-cluster part is left out of the plan, not proposed for destruction. The summary lists what was left out; the
deploy plans and applies it whole, as the deployer.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.request
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from model.paths import PROJECT_DIR
from scripts.ci.serving import live_weights
from scripts.ci.stacks import (
    COMMON,
    STACK_FILE,
    STACKS_DIR,
    TRAFFIC,
    aws_part,
    details,
    project_name,
    raw_config,
    summary,
    terraform_in,
)

# Where a colour's AWS part is planned: as deep in the checkout as cdktf.out/stacks/<stack>, so a local state's
# relative paths (its own, common's and traffic's) reach the same files.
PLAN_DIR = Path(".cache") / "plan"


def plan(project: Path, stack: str, *, named: Collection[str] | None = None) -> tuple[bool, str]:
    """(planned, markdown) for one stack. named: the colours whose own entry the change edits (changed_stacks); with
    it, a colour's plan says whether a merge would deploy it (serving_note)."""
    where, arguments, note = project / STACKS_DIR / stack, ["-lock=false"], ""
    if stack not in (COMMON, TRAFFIC):
        if named is not None:
            note = serving_note(project, stack, named=named)
        where, targets, left_out = without_cluster(project, stack)
        arguments += [f"-target={address}" for address in targets]
        note += (
            f"The AWS part ({len(targets)} resources). Not planned here, the in-cluster part: {', '.join(left_out)} "
            "(the plan role has no access to the cluster; the deploy plans it as the deployer).\n\n"
        )
    init = terraform_in(where, "init")
    if init.returncode != 0:
        return False, f"### Plan of `{stack}`: init FAILED\n\n" + details("terraform init", init.stdout + init.stderr)
    done = terraform_in(where, "plan", *arguments)
    output = done.stdout + done.stderr
    last = next((line for line in reversed(output.splitlines()) if line.startswith(("Plan:", "No changes."))), "")
    verdict = last or ("FAILED" if done.returncode else "planned")
    return done.returncode == 0, f"### Plan of `{stack}`: {verdict}\n\n{note}" + details("terraform plan", output)


def serving_note(project: Path, colour: str, *, named: Collection[str]) -> str:
    """Whether a merge would deploy the colour, from the live weights now (scripts/ci/serving.py), and the live weights
    beside the config's."""
    weights = live_weights(project, [colour])
    verdict = (
        f"**{colour} serves now (live weight {weights.live[colour]}) and this change does not edit its entry "
        f"`clusters.{colour}`: a merge will not deploy it (frozen) while it serves.**"
        if weights.frozen(colour, named=named)
        else f"A merge deploys {colour}."
    )
    return f"{weights.summary()}\n\n{verdict}\n\n"


def without_cluster(project: Path, stack: str) -> tuple[Path, list[str], list[str]]:
    """The colour's stack without its in-cluster part, written to PLAN_DIR/<stack> with the stack's own backend: (that
    directory, every resource left to target, the in-cluster resources left out)."""
    document, left_out = aws_part(json.loads((project / STACKS_DIR / stack / STACK_FILE).read_text()))
    where = project / PLAN_DIR / stack
    where.mkdir(parents=True, exist_ok=True)
    (where / STACK_FILE).write_text(json.dumps(document, indent=2))
    targets = [f"{kind}.{name}" for kind, items in document["resource"].items() for name in items]
    return where, targets, left_out


def marker(project_name: str, stack: str) -> str:
    """The hidden line that finds this stack's comment again on the next push."""
    return f"<!-- ci-plan {project_name} {stack} -->"


def comment(body: str, *, mark: str, environ: Mapping[str, str]) -> None:
    """Create or edit the pull request's comment carrying `mark` (GitHub's REST API, the job's GITHUB_TOKEN)."""
    event = json.loads(Path(environ["GITHUB_EVENT_PATH"]).read_text())
    issue = f"{environ.get('GITHUB_API_URL', '')}/repos/{environ['GITHUB_REPOSITORY']}/issues/{event['pull_request']['number']}"
    headers = {"Authorization": f"Bearer {environ['GITHUB_TOKEN']}", "Accept": "application/vnd.github+json"}
    text = f"{mark}\n{body}"
    page = 1
    while comments := _call("GET", f"{issue}/comments?per_page=100&page={page}", headers):
        for existing in comments:
            if str(existing.get("body", "")).startswith(mark):
                _call("PATCH", existing["url"], headers, {"body": text})
                return
        page += 1
    _call("POST", f"{issue}/comments", headers, {"body": text})


def _call(method: str, url: str, headers: Mapping[str, str], data: Any = None) -> Any:
    payload = None if data is None else json.dumps(data).encode()
    request = urllib.request.Request(url, data=payload, headers=dict(headers), method=method)
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read() or b"null")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.ci.plan_stacks", description=__doc__.split("\n\n")[0])
    parser.add_argument("stacks", nargs="+", help="stack names (common, traffic, a colour)")
    parser.add_argument("--comment", action="store_true", help="also comment on the pull request (GitHub only)")
    parser.add_argument("--project-dir", type=Path, default=PROJECT_DIR, help="the synthesized checkout")
    parser.add_argument(
        "--named", type=json.loads, help="JSON list of the colours whose own entry the change edits (changed_stacks)"
    )
    args = parser.parse_args(argv)
    name = project_name(raw_config(args.project_dir))
    failed = []
    for stack in args.stacks:
        planned, markdown = plan(args.project_dir, stack, named=args.named)
        summary(markdown)
        if args.comment:
            comment(markdown, mark=marker(name, stack), environ=os.environ)
        if not planned:
            failed.append(stack)
    if failed:
        print(f"plan_stacks: the plan of {', '.join(failed)} failed (the summary has Terraform's output)", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
