"""A team forks the project, edits its configuration (config.json, which cdktf.json names) as README says (its
zone, repository, applications and images; the shift done; a colour retired and removed; a new one added) and runs
`make test` in CI. Nothing the suite synthesizes or loads, and nothing the generated docs say, may come from that
file: the suite tests the code on the configurations it owns (tests/support/configs.py), and the docs describe the
shipped example."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.configs import SAMPLE_APP, SAMPLE_APPLICATIONS, named_release, release_of, suite_inputs, validated
from tests.support.project_copy import tracked_copy

# What README's "First deploy" asks for (the sample app at the team's host, with its image; an application of the
# team's own), then the upgrade cycle: green took all the traffic, blue kept its release.
APPLICATIONS: dict[str, Any] = {
    SAMPLE_APP: {**SAMPLE_APPLICATIONS[SAMPLE_APP], "host": "shop", "image": {"tag": "9f8e7d6"}},
    "billing": {
        "host": "billing",
        "source": {"repo_url": "https://github.com/acme/billing.git", "path": "deploy/chart", "revision": "v3.1.0"},
        "namespace": "payments",
    },
}
MID_CYCLE: dict[str, Any] = {
    "project": "acme-bg",
    "region": "eu-west-1",
    "dns": {"parent_zone": "acme-platform.io", "sub_domain": "apps"},
    "gitops": {"repo_url": "https://github.com/acme/platform-bg.git"},
    "applications": APPLICATIONS,
    "clusters": {
        "blue": {
            "kubernetes_version": "1.34",
            "weight": 0,
            "gitops_revision": "platform-a",
            "applications": {SAMPLE_APP: {"image_tag": "3f2c1a9"}, "billing": {"revision": "v3.0.2"}},
        },
        "green": {"kubernetes_version": "1.35", "weight": 100, **named_release(applications=release_of(APPLICATIONS))},
    },
}
# Then blue retired and removed from `clusters` (README: 'Retire the old colour'), and the next colour added.
NEXT_CYCLE: dict[str, Any] = {
    **MID_CYCLE,
    "clusters": {"green": MID_CYCLE["clusters"]["green"], "teal": {"kubernetes_version": "1.34", "weight": 0}},
}
# Where the project's own files may name cdktf.json: code that reads the operator's config on purpose (main.py, the
# operator commands, `make rehearse`) is elsewhere; the suite, the docs generators and the bench must not.
NOT_READING_IT = ("tests", "bench", "scripts/docs.py", "scripts/policies_readme.py")
# Its configuration file too (cdktf.json's `context.config` names config.json).
READS_THE_PROJECT_FILE = re.compile(r"""(PROJECT_DIR|project_dir)\s*/\s*["'](cdktf|config)\.json["']""")


@pytest.mark.parametrize("edited", [MID_CYCLE, NEXT_CYCLE], ids=["mid-cycle", "next-cycle"])
def test_an_operators_cdktf_json_changes_nothing_the_suite_runs_on(
    project_dir: Path, tmp_path: Path, edited: dict[str, Any]
) -> None:
    validated(edited)  # what a team would really have: a configuration synth accepts
    copy = tracked_copy(project_dir, tmp_path / "fork")
    # Where cdktf.json keeps the configuration: the file it names (config.json as shipped), or inline.
    cdktf = json.loads((copy / "cdktf.json").read_text())
    if isinstance(cdktf["context"]["config"], str):
        (copy / cdktf["context"]["config"]).write_text(json.dumps({"$schema": "./config.schema.json", **edited}, indent=2))
    else:
        cdktf["context"]["config"] = edited
        (copy / "cdktf.json").write_text(json.dumps(cdktf, indent=2))
    probe = "import json; from tests.support.configs import suite_inputs; print(json.dumps(suite_inputs()))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=copy, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout) == json.loads(json.dumps(suite_inputs()))


def test_no_test_docs_generator_or_benchmark_reads_the_operators_cdktf_json(project_dir: Path) -> None:
    files = [
        p
        for name in NOT_READING_IT
        for p in ([project_dir / name] if name.endswith(".py") else (project_dir / name).rglob("*.py"))
    ]
    assert len(files) > 20
    assert [str(p.relative_to(project_dir)) for p in files if READS_THE_PROJECT_FILE.search(p.read_text())] == []
