"""Bad input never reaches Terraform: main.py (what `cdktf synth` runs) exits non-zero, names the
key, and writes no cdktf.out, for each of these broken configurations.

The cases run main() in-process (a fresh interpreter per case cost ~3 s of the suite for nothing
the exit-code test below does not already show); one case runs as `python main.py`."""

from __future__ import annotations

import codecs
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import main
from model.paths import PROJECT_DIR
from model.routes import TRAFFIC_CONSTRUCT_IDS
from scripts.scratch_project import link_project
from tests.support.configs import write_project

BLUE = {"kubernetes_version": "1.34", "weight": 100}
GREEN = {"kubernetes_version": "1.35", "weight": 0}

# (case, context.config or the raw text of cdktf.json, what the message must name)
CASES: list[tuple[str, Any, str]] = [
    (
        "weight of the wrong type",
        {"clusters": {"blue": {**BLUE, "weight": "100"}}},
        'clusters.blue.weight: "100" is not allowed; use an integer',
    ),
    (
        "weight above 255",
        {"clusters": {"blue": {**BLUE, "weight": 256}}},
        "clusters.blue.weight: 256 is not allowed; use an integer 0-255",
    ),
    ("negative weight", {"clusters": {"blue": {**BLUE, "weight": -1}}}, "clusters.blue.weight: -1"),
    ("all weights 0", {"clusters": {"blue": {**BLUE, "weight": 0}, "green": GREEN}}, "clusters.*.weight"),
    (
        "Service CIDR overlapping the VPC",
        {"network": {"cidr": "10.0.0.0/16"}, "eks": {"service_ipv4_cidr": "10.0.64.0/18"}},
        "eks.service_ipv4_cidr",
    ),
    ("unknown top-level key", {"netwrk": {"cidr": "10.0.0.0/16"}}, "netwrk: "),
    ("unknown nested key", {"network": {"cidr_block": "10.0.0.0/16"}}, "network.cidr_block"),
    ("duplicate colour", '{"context": {"config": {"clusters": {"blue": {}, "blue": {}}}}}', "duplicate key 'blue'"),
    ("empty parent zone", {"dns": {"parent_zone": ""}}, 'dns.parent_zone: "" is not allowed'),
    ("S3 backend without bucket", {"state": {"backend": "s3"}}, "state.bucket"),
    ("colour that is no DNS label", {"clusters": {"Blue": BLUE}}, "clusters.Blue"),
    ("colour named like the common stack", {"clusters": {"common": BLUE}}, "clusters.common"),
    (
        "malformed Kubernetes version",
        {"clusters": {"blue": {**BLUE, "kubernetes_version": "1.3"}}},
        "clusters.blue.kubernetes_version",
    ),
    (
        "a version not in the EKS calendar",
        {"clusters": {"blue": BLUE, "green": {**GREEN, "kubernetes_version": "1.37"}}},
        "clusters.green.kubernetes_version",
    ),
    ("too few AZs", {"network": {"az_count": 1}}, "network.az_count: 1"),
    ("CIDR that does not parse", {"network": {"cidr": "10.0.0/16"}}, "network.cidr"),
    (
        "node group min above max",
        {"clusters": {"blue": {**BLUE, "nodes": {"min_size": 5, "max_size": 3}}}},
        "clusters.blue.nodes.min_size",
    ),
    ("application without a host", {"applications": {"shop": {"source": {"path": "chart"}}}}, 'applications.shop.host: ""'),
    (
        "application policy that does not exist",
        {"applications": {"shop": {"host": "shop", "source": {"path": "chart"}, "policy": "policies/shop.json"}}},
        'applications.shop.policy: "policies/shop.json" is not allowed; no such file in the project',
    ),
    (
        "colour pinning an application that is not configured",
        {"clusters": {"blue": {**BLUE, "applications": {"shop": {"image_tag": "1.0"}}}}},
        "clusters.blue.applications.shop: ",
    ),
    ("a key of the sample-app era", {"dns": {"app_host": "shop"}}, "applications.<name>.host"),
    ("config that is not an object", 7, "(top level): 7"),
    ("cdktf.json that is not JSON", '{"context": {"config": {"region": "eu-west-1",}}}', "cdktf.json: not valid JSON"),
    ("config file that does not exist", "prod.json", "prod.json: file not found"),
]

# What `make synth` installs, each ending in a stamp file (Makefile: VENV_STAMP, NODE_STAMP; CHECKOV_STAMP is make test's).
INSTALL_STAMPS = (".venv/.synced", "node_modules/.synced", "scripts/checkov/.venv/.synced")


def write_config(directory: Path, config: Any) -> None:
    """A case's config as cdktf.json's `context.config`, or a case's raw cdktf.json text."""
    if isinstance(config, str) and config.startswith("{"):
        (directory / "cdktf.json").write_text(config)
    else:
        write_project(directory, config)


def earlier_synth(out: Path) -> None:
    """What an earlier, successful synth left: a stack ready to plan and the manifest."""
    (out / "stacks" / "common").mkdir(parents=True)
    (out / "stacks" / "common" / "cdk.tf.json").write_text("{}")
    (out / "manifest.json").write_text("{}")


@pytest.mark.parametrize(("case", "config", "named"), CASES, ids=[c[0] for c in CASES])
def test_main_refuses_bad_input_before_writing_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], case: str, config: Any, named: str
) -> None:
    write_config(tmp_path, config)
    monkeypatch.chdir(tmp_path)
    # Named, so that a config wrongly let through would show up in tmp_path (jsii's cwd is not ours).
    assert main.main(outdir=str(tmp_path / "cdktf.out")) == 2, case
    err = capsys.readouterr().err
    assert named in err, err
    assert "invalid configuration" in err
    assert not (tmp_path / "cdktf.out").exists()


def test_python_main_py_exits_2_with_the_message_and_no_traceback(tmp_path: Path) -> None:
    _, config, named = CASES[0]
    write_config(tmp_path, config)
    done = subprocess.run(
        [sys.executable, str(PROJECT_DIR / "main.py")], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert named in done.stderr, done.stderr
    assert "invalid configuration" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "cdktf.out").exists()


def test_a_refused_config_leaves_no_earlier_synth_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Else `terraform plan` in cdktf.out/stacks/common would plan the previous configuration silently."""
    out = tmp_path / "cdktf.out"
    earlier_synth(out)
    write_config(tmp_path, CASES[0][1])
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CDKTF_OUTDIR", "cdktf.out")  # relative, as the cdktf CLI sets it
    assert main.main() == 2
    assert "invalid configuration" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == []


# A configuration file that cannot be read as JSON, each made by a function of its path, and the line that says so. Each
# ended in Python's traceback (a directory, a symlink loop, nesting deeper than Python's recursion) or Python's advice
# (`decode using utf-8-sig`, `use sys.set_int_max_str_digits()`), yesterday's output left ready to deploy.
UNREADABLE: dict[str, tuple[Callable[[Path], object], str]] = {
    "a directory": (Path.mkdir, "is a directory, not a file: name a JSON file"),
    "a symlink loop": (
        lambda path: path.symlink_to(path.name),
        "cannot be read (Too many levels of symbolic links): name a readable JSON file",
    ),
    "nested too deep": (
        lambda path: path.write_text('{"tags": ' + "[" * 100_000 + "]" * 100_000 + "}"),
        "line 1 column 73: nested more than 64 levels deep: no setting takes that; use at most 64",
    ),
    "a UTF-8 byte order mark": (
        lambda path: path.write_bytes(codecs.BOM_UTF8 + b'{"region": "eu-west-1"}'),
        "starts with a byte order mark (BOM): save it as UTF-8 without one",
    ),
    "not UTF-8": (
        lambda path: path.write_bytes(b'{"region": "eu-west-1\xff"}'),
        "is not UTF-8 text (byte 0xff at offset 21): save it as UTF-8",
    ),
    "an integer of 5000 digits": (
        lambda path: path.write_text('{\n  "clusters": {"blue": {"weight": ' + "1" * 5000 + "}}}"),
        "not valid JSON: line 2 column 35: a number of 5000 digits: no setting takes one; use a number of at most 4300 digits",
    ),
}


@pytest.mark.parametrize("case", UNREADABLE)
def test_a_config_file_that_cannot_be_read_as_json_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    make, said = UNREADABLE[case]
    write_config(tmp_path, "prod.json")
    make(tmp_path / "prod.json")
    earlier_synth(tmp_path / "cdktf.out")
    monkeypatch.chdir(tmp_path)
    assert main.main(outdir=str(tmp_path / "cdktf.out")) == 2
    err = capsys.readouterr().err
    assert err == f"invalid configuration in prod.json (1 problem(s)):\n  - prod.json: {said}\n"
    assert list((tmp_path / "cdktf.out").iterdir()) == []


def test_python_main_py_refuses_json_nested_too_deep_without_a_traceback(tmp_path: Path) -> None:
    """The case that ended in RecursionError's traceback, run as `python main.py` (no jsii: it stops at load)."""
    make, said = UNREADABLE["nested too deep"]
    write_config(tmp_path, "prod.json")
    make(tmp_path / "prod.json")
    earlier_synth(tmp_path / "cdktf.out")
    done = subprocess.run(
        [sys.executable, str(PROJECT_DIR / "main.py")], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert f"prod.json: {said}" in done.stderr
    assert "Traceback" not in done.stderr
    assert list((tmp_path / "cdktf.out").iterdir()) == []


def test_a_huge_value_is_echoed_capped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 10 MB value pasted into one setting: its first 100 characters and its length, not 10 MB of refusal."""
    write_config(tmp_path, {"region": "x" * 10_000_000, "tags": {"Team": ["y" * 500] * 1000}})
    monkeypatch.chdir(tmp_path)
    assert main.main(outdir=str(tmp_path / "cdktf.out")) == 2
    err = capsys.readouterr().err
    assert f'  - region: "{"x" * 100}... (10000000 characters)" is not allowed; use an AWS region code' in err
    # A list: each string in it capped, the whole at 1,000 characters.
    item = '"' + "y" * 100 + '... (500 characters)"'
    listed = "[" + ", ".join([item] * 1000) + "]"
    assert f"  - tags.Team: {listed[:1000]}... ({len(listed)} characters) is not allowed; use a string\n" in err
    assert len(err) < 3000, len(err)


@pytest.mark.parametrize("name", sorted(TRAFFIC_CONSTRUCT_IDS))
def test_an_application_named_like_a_part_of_the_traffic_stack_is_refused_and_no_earlier_synth_is_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """Such a name passed the rules and crashed the build with jsii's traceback, yesterday's output left ready to
    deploy: it is refused at load now, with the rule's usual message (model/routes.py says why it is not namespaced)."""
    app = {"host": "shop", "source": {"path": "chart"}}
    write_config(tmp_path, {"applications": {name: app}, "clusters": {"blue": BLUE}})
    earlier_synth(tmp_path / "cdktf.out")
    monkeypatch.chdir(tmp_path)
    assert main.main(outdir=str(tmp_path / "cdktf.out")) == 2
    err = capsys.readouterr().err
    assert f'applications.{name}: "{name}" is not allowed; an application\'s name is a DNS label' in err, err
    assert f" {name}," in err or err.rstrip().endswith(f" {name}")  # among the names the rule lists
    assert list((tmp_path / "cdktf.out").iterdir()) == []


def test_make_synth_names_the_place_of_a_json_mistake_in_cdktf_json_before_the_cli_runs(tmp_path: Path) -> None:
    """The cdktf CLI meets a trailing comma with a Node stack trace; `make synth` says where it is."""
    scratch = tmp_path / "project"
    link_project(scratch, own={"cdktf.json", "cdktf.out"})
    (scratch / "cdktf.json").write_text('{\n  "language": "python",\n  "context": {"config": {"region": "eu-west-1",}}\n}\n')
    earlier_synth(scratch / "cdktf.out")
    # The copy links the project's installation (node_modules, .venv): make must not reinstall through the links
    # (npm ci empties the linked node_modules while other tests run on it), whatever the stamps' times say there.
    installed = [f"--old-file={stamp}" for stamp in INSTALL_STAMPS]
    done = subprocess.run(["make", *installed, "synth"], cwd=scratch, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode != 0
    assert "cdktf.json: not valid JSON: line 3 column 48: Expecting property name enclosed in double quotes" in done.stderr
    assert "cdktf synth" not in done.stdout  # refused before the CLI ran
    assert list((scratch / "cdktf.out").iterdir()) == []  # and yesterday's synth is gone


def test_make_in_a_linked_copy_never_reinstalls_through_the_links(tmp_path: Path) -> None:
    """Why the test above names the stamps old: with lock files newer than the stamps (a fresh checkout of a newer
    lock, a git worktree), plain `make synth` in a linked copy would run `npm ci` and `uv pip install` into the project's
    own node_modules and .venv, emptying node_modules under every test running beside it. A dry run shows both."""
    scratch = tmp_path / "project"
    lock_files = ("package-lock.json", "Pipfile.lock")
    link_project(scratch, own={"cdktf.json", "cdktf.out", *lock_files})
    (scratch / "cdktf.json").write_text("{}\n")  # a dry run reads none of it
    later = time.time() + 3600
    for name in lock_files:
        (scratch / name).write_bytes((PROJECT_DIR / name).read_bytes())
        os.utime(scratch / name, (later, later))

    def planned(*options: str) -> str:
        done = subprocess.run(["make", "-n", *options, "synth"], cwd=scratch, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    unguarded = planned()  # what the guard prevents
    assert "npm ci" in unguarded
    assert "pip install" in unguarded
    guarded = planned(*[f"--old-file={stamp}" for stamp in INSTALL_STAMPS])
    assert "npm ci" not in guarded
    assert "pip install" not in guarded
    assert "cdktf synth" in guarded
