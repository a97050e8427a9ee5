"""main.py, the command `cdktf synth` runs: bad config stops it before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest

import main
from model.rules import LOUD
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
