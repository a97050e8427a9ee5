"""`terraform plan` of each named stack, from cdktf.out: the plan in the job summary and, in a pull request, one
comment per stack (created once, edited on later pushes).

    python -m scripts.ci.plan_stacks common green            # after `make synth`
    python -m scripts.ci.plan_stacks green --comment          # and the pull request's comment (GITHUB_TOKEN)

Planned with `-lock=false`: the plan-only role may read the state but write nothing, the S3 lock file included;
the workflow's per-stack concurrency group keeps two runs of this repository apart. Exit 1 when any plan failed
(every stack is planned anyway).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from model.paths import PROJECT_DIR
from scripts.ci.stacks import details, project_name, raw_config, summary, terraform


def plan(project: Path, stack: str) -> tuple[bool, str]:
    """(planned, markdown) for one stack."""
    init = terraform(project, stack, "init")
    if init.returncode != 0:
        return False, f"### Plan of `{stack}`: init FAILED\n\n" + details("terraform init", init.stdout + init.stderr)
    done = terraform(project, stack, "plan", "-lock=false")
    output = done.stdout + done.stderr
    last = next((line for line in reversed(output.splitlines()) if line.startswith(("Plan:", "No changes."))), "")
    verdict = last or ("FAILED" if done.returncode else "planned")
    return done.returncode == 0, f"### Plan of `{stack}`: {verdict}\n\n" + details("terraform plan", output)


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
    args = parser.parse_args(argv)
    name = project_name(raw_config(args.project_dir))
    failed = []
    for stack in args.stacks:
        planned, markdown = plan(args.project_dir, stack)
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
