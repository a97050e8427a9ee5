"""cdktf.out is portable: synthesized in CI or another checkout, it applies here (and there) unchanged.

The fixtures synthesize below the checkout, where `cdktf synth` writes, so an absolute path of the
checkout (a chart, a state file) would show up in the output.
"""

from __future__ import annotations

import filecmp
from pathlib import Path

import pytest

from model.bootstrap import BOOTSTRAP_SECRETS, MANIFESTS_CHART
from model.paths import PROJECT_DIR
from model.platform import PARENT_APPLICATION
from tests.support.synth import Synthesized


@pytest.mark.parametrize("fixture", ["example_app", "everything_on"])
def test_no_synthesized_file_holds_a_path_of_the_checkout(fixture: str, request: pytest.FixtureRequest) -> None:
    app: Synthesized = request.getfixturevalue(fixture)
    checkout = str(PROJECT_DIR)
    files = [p for p in app.outdir.rglob("*") if p.is_file() and "assets" not in p.relative_to(app.outdir).parts]
    assert any(p.name == "cdk.tf.json" for p in files)
    assert [str(p.relative_to(app.outdir)) for p in files if checkout in p.read_text(errors="ignore")] == []


def releases_of_local_charts(app: Synthesized, stack: str) -> dict[str, str]:
    return {r["name"]: r["chart"] for r in app.resources(stack, "helm_release").values() if "repository" not in r}


@pytest.mark.parametrize("fixture", ["example_app", "everything_on"])
def test_local_charts_travel_inside_the_output(fixture: str, request: pytest.FixtureRequest) -> None:
    """The one chart Terraform installs from the checkout is bootstrap/manifests (the parent Application; the first Secrets), into
    cdktf.out; argocd/apps and the applications' charts reach a colour from Git at its revision, never from here. Every
    colour of each synthesis."""
    app: Synthesized = request.getfixturevalue(fixture)
    colours = [stack for stack in app.stacks() if stack not in ("common", "traffic")]
    assert len(colours) >= 2
    for colour in colours:
        found = releases_of_local_charts(app, colour)
        # The parent Application, and (both syntheses have a repository credential) the Secrets it needs first.
        assert sorted(found) == [PARENT_APPLICATION, BOOTSTRAP_SECRETS], colour
        for release in found:
            path = Path(found[release])
            assert path.parts[0] == "assets", path
            comparison = filecmp.dircmp(app.stack_dir(colour) / path, MANIFESTS_CHART)
            assert (comparison.left_only, comparison.right_only, comparison.diff_files) == ([], [], []), colour
