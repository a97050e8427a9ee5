"""cdktf.out is portable: synthesized in CI or another checkout, it applies here (and there) unchanged.

The fixtures synthesize below the checkout, where `cdktf synth` writes, so an absolute path of the
checkout (a chart, a state file) would show up in the output.
"""

from __future__ import annotations

import filecmp
from pathlib import Path

import pytest

from model.bootstrap import MANIFESTS_CHART
from model.paths import PROJECT_DIR
from tests.support.configs import EXAMPLE_COLOURS
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


@pytest.mark.parametrize(
    ("fixture", "charts"),
    [
        ("example_app", {"app-of-apps": MANIFESTS_CHART}),
        ("everything_on", {"app-of-apps": MANIFESTS_CHART, "sample-app": PROJECT_DIR / "argocd" / "sample-app"}),
    ],
)
def test_local_charts_travel_inside_the_output(fixture: str, charts: dict[str, Path], request: pytest.FixtureRequest) -> None:
    """The sample app's chart is the one of the colour's revision (model/revisions.py): the example colours
    follow `main`, whose committed chart the checkout holds."""
    app: Synthesized = request.getfixturevalue(fixture)
    colour = EXAMPLE_COLOURS[0]  # every colour's stack is built alike
    found = releases_of_local_charts(app, colour)
    assert set(found) == set(charts)
    for release, chart in charts.items():
        path = Path(found[release])
        assert path.parts[0] == "assets", path
        copy = app.stack_dir(colour) / path
        comparison = filecmp.dircmp(copy, chart)
        assert (comparison.left_only, comparison.right_only, comparison.diff_files) == ([], [], []), release
