"""The configuration lives in its own file, named by cdktf.json (`context.config`): the cdktf CLI parses cdktf.json
itself, so only a file it never reads makes a JSON mistake the app's to report (file, line and column, once).
Through the real CLI: tests/test_cli.py."""

from __future__ import annotations

from pathlib import Path

import pytest

import main
from model.loading import ConfigError, load_config
from tests.support.configs import example_raw, write_project


def test_a_json_mistake_is_named_by_file_line_and_column(tmp_path: Path) -> None:
    write_project(tmp_path, example_raw(), in_file=True)
    (tmp_path / "config.json").write_text('{\n  "project": "acme",\n  "region": "eu-west-1",\n}\n')
    with pytest.raises(ConfigError) as refused:
        load_config(tmp_path / "cdktf.json")
    where = tmp_path / "config.json"
    assert refused.value.problems == (
        f"{where}: not valid JSON: line 4 column 1: Expecting property name enclosed in double quotes",
    )
    assert str(refused.value).startswith("invalid configuration in config.json (1 problem(s)):")


def test_run_by_the_cdktf_cli_a_refusal_prints_once_on_stdout_and_leaves_no_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The CLI shows the app's stderr live as "[ERROR]" lines and all its output again after a non-zero exit: the app
    it runs prints to stdout and exits 0 without a manifest (the CLI then fails, exit 1, with one line of its own)."""
    write_project(tmp_path, {"clusters": {"blue": {"kubernetes_version": "1.35", "weight": 300}}}, in_file=True)
    out = tmp_path / "cdktf.out"
    (out / "stacks" / "blue").mkdir(parents=True)
    (out / "manifest.json").write_text("{}")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CDKTF_OUTDIR", "cdktf.out")
    monkeypatch.setenv(main.CONTEXT_ENV, "{}")
    assert main.main() == 0
    printed = capsys.readouterr()
    assert printed.err == ""
    assert printed.out.count("clusters.blue.weight: 300 is not allowed") == 1, printed.out
    assert printed.out.startswith("invalid configuration in config.json (1 problem(s)):")
    assert "nothing synthesized" in printed.out
    assert sorted(p.name for p in out.iterdir()) == []
