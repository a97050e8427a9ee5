"""main.py, the command `cdktf synth` runs: bad config stops it before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest

import main
from model.config import LOUD
from tests.support.configs import SAMPLE_APPLICATIONS, write_project


def test_bad_config_exits_non_zero_naming_the_key_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_project(tmp_path, {"clusters": {"blue": {"kubernetes_version": "1.34", "weight": 300}}})
    monkeypatch.chdir(tmp_path)
    assert main.main() == 2
    assert "clusters.blue.weight: 300 is not allowed; use an integer 0-255" in capsys.readouterr().err
    assert not (tmp_path / "cdktf.out").exists()


def test_good_config_synthesizes_and_warns_about_the_placeholder_git_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_project(
        tmp_path, {"applications": SAMPLE_APPLICATIONS, "clusters": {"red": {"kubernetes_version": "1.35", "weight": 7}}}
    )
    monkeypatch.chdir(tmp_path)
    # The jsii runtime is a separate process with its own working directory: name the outdir.
    assert main.main(outdir=str(tmp_path / "cdktf.out")) == 0
    printed = capsys.readouterr()
    # On stdout: the cdktf CLI shows the app's stderr as "[ERROR]" lines, and a warning is no error.
    assert "warning: gitops.repo_url is the placeholder" in printed.out
    assert "warning: applications.sample-app.image.tag is the default '0.1.0' (red run it)" in printed.out
    assert "OPEN TO THE INTERNET" not in printed.out  # the suite's configurations name the operators' network
    assert printed.err == ""
    # Common, the shared load balancer's stack (traffic) and the one colour.
    assert sorted(p.name for p in (tmp_path / "cdktf.out" / "stacks").iterdir()) == ["common", "red", "traffic"]


def test_an_api_open_to_the_internet_is_framed_at_every_synth(capsys: pytest.CaptureFixture[str]) -> None:
    """Not one warning line among the others: a bar of `!` above and below, on stdout (the CLI shows it as it is)."""
    main._print_warnings([f"{LOUD}the door", "a quieter one"])
    lines = capsys.readouterr().out.splitlines()
    bar = "warning: " + "!" * 100
    assert lines == [bar, f"warning: {LOUD}the door", bar, "warning: a quieter one"]


@pytest.mark.parametrize("run_by", ["python main.py", "the cdktf CLI"])
def test_a_synth_that_fails_while_building_leaves_no_earlier_output_and_says_so_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], run_by: str
) -> None:
    """Not only a refused configuration: a failure of the build itself (jsii's, here a file where the traffic stack's
    directory goes) removes yesterday's output too, and ends in one line instead of jsii's traceback. Run by the cdktf
    CLI, on stdout and without a manifest (the CLI then fails: see _refuse)."""
    write_project(
        tmp_path, {"applications": SAMPLE_APPLICATIONS, "clusters": {"red": {"kubernetes_version": "1.35", "weight": 7}}}
    )
    out = tmp_path / "cdktf.out"
    (out / "stacks" / "common").mkdir(parents=True)
    (out / "stacks" / "common" / "cdk.tf.json").write_text("{}")
    (out / "stacks" / "traffic").write_text("in the way")
    (out / "manifest.json").write_text("{}")
    monkeypatch.chdir(tmp_path)
    if run_by == "the cdktf CLI":
        monkeypatch.setenv(main.CONTEXT_ENV, "{}")
    assert main.main(outdir=str(out)) == (0 if run_by == "the cdktf CLI" else 2)
    printed = capsys.readouterr()
    said = f"synth failed: RuntimeError: Error: ENOTDIR: not a directory, open '{out}/stacks/traffic/cdk.tf.json'\n"
    if run_by == "the cdktf CLI":
        assert printed.err == ""
        assert printed.out.endswith(f"{said}nothing synthesized: fix what is named above and run the command again\n")
    else:
        assert printed.err == said
    assert list(out.iterdir()) == []
