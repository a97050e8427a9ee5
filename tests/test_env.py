"""One line gives a shell what make has (`source scripts/env.sh`, README), and make's recipes source the same file:
the variables of scripts/env.py, read back from a sourcing shell and from a recipe."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from model.paths import PROJECT_DIR
from scripts import env as project_env
from tests.support.new_shell import NAMES, a_new_users_environment
from tests.support.project_copy import tracked_copy

PRINT = "; ".join(f'echo "{name}=${{{name}-<unset>}}"' for name in NAMES)


def printed(output: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in output.splitlines() if line.split("=", 1)[0] in NAMES)


def test_the_tools_come_first_once_and_the_variables_make_had_are_set() -> None:
    base = {"PATH": os.pathsep.join(["/usr/bin", project_env.TOOL_DIRS[1], "/bin"])}
    got = project_env.environment(base, terminal=True)
    assert got["PATH"].split(os.pathsep) == [*project_env.TOOL_DIRS, "/usr/bin", "/bin"]
    # Sourced again (a make recipe under a shell that has it already): nothing grows.
    assert project_env.environment(got, terminal=True)["PATH"] == got["PATH"]
    assert got["CHECKPOINT_DISABLE"] == "1"
    assert "--no-deprecation" in got["NODE_OPTIONS"]
    assert "--max-old-space-size=" in got["NODE_OPTIONS"]  # else the cdktf CLI warns and sets its own
    # jsii's own default cache, shared by every checkout; a root of the caller's own is kept.
    assert got["JSII_RUNTIME_PACKAGE_CACHE_ROOT"] == str(Path.home() / ".cache" / "aws" / "jsii" / "package-cache")
    own = project_env.environment({**base, "JSII_RUNTIME_PACKAGE_CACHE_ROOT": "/ci/jsii"}, terminal=True)
    assert own["JSII_RUNTIME_PACKAGE_CACHE_ROOT"] == "/ci/jsii"
    assert got["PYTHONPYCACHEPREFIX"] == str(PROJECT_DIR / ".cache" / "pycache")
    assert "CI" not in got  # a terminal keeps the CLI's spinner


def test_output_to_no_terminal_sets_ci_unless_ci_says_otherwise() -> None:
    assert project_env.environment({"PATH": "/bin"}, terminal=False)["CI"] == "true"
    assert "CI" not in project_env.environment({"PATH": "/bin", "CI": "false"}, terminal=False)


def test_python_keeps_its_bytecode_in_the_projects_cache_even_where_the_machine_says_write_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second process that imports a module reads the bytecode the first compiled: none beside the source."""
    cache = tmp_path / "pycache"
    monkeypatch.setattr(project_env, "BYTECODE_CACHE", cache)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "probe.py").write_text("ANSWER = 42\n")
    machine = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env = {**machine, **project_env.environment(machine, terminal=False)}
    for _ in range(2):
        subprocess.run(["python3", "-c", "import probe"], cwd=tmp_path / "src", env=env, check=True, timeout=60)
    # The prefix mirrors the source's absolute path.
    compiled = cache / str(tmp_path / "src").lstrip(os.sep) / f"probe.{sys.implementation.cache_tag}.pyc"
    assert compiled.is_file()
    assert not (tmp_path / "src" / "__pycache__").exists()


def test_sourcing_env_sh_writes_no_bytecode_beside_the_sources(tmp_path: Path) -> None:
    """A new user's shell (no bytecode settings of its own): env.sh's own Python run writes none in the checkout."""
    project = tracked_copy(PROJECT_DIR, tmp_path / "project")
    subprocess.run(
        ["bash", "-c", "source scripts/env.sh && echo sourced"],
        cwd=project,
        env=a_new_users_environment(),
        capture_output=True,
        timeout=60,
        check=True,
    )
    assert sorted(str(p.relative_to(project)) for p in project.rglob("__pycache__")) == []


def test_the_provider_mirror_is_used_when_the_machine_has_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mirror_config = tmp_path / "terraformrc"
    monkeypatch.setattr(project_env, "write_config", lambda: mirror_config)
    with_mirror = project_env.environment({"PATH": "/bin"}, terminal=True)
    assert with_mirror["TF_CLI_CONFIG_FILE"] == str(mirror_config)
    assert with_mirror[project_env.SKIP_PROVIDER_LOCK] == "true"  # the CLI's lock step would ask the registry
    monkeypatch.setattr(project_env, "write_config", lambda: None)
    without = project_env.environment({"PATH": "/bin"}, terminal=True)
    assert "TF_CLI_CONFIG_FILE" not in without
    assert project_env.SKIP_PROVIDER_LOCK not in without


def test_sourcing_env_sh_from_another_directory_and_a_make_recipe_give_the_same_environment(tmp_path: Path) -> None:
    """One source of truth: the Makefile's recipes run under BASH_ENV=scripts/env.sh; outputs here are pipes."""
    env = a_new_users_environment()
    by_hand = subprocess.run(
        ["bash", "-c", f"source {PROJECT_DIR / 'scripts' / 'env.sh'} && {PRINT}"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    recipe = f"probe: ; @{PRINT.replace('$', '$$')}; bash -c 'echo \"child BASH_ENV=$${{BASH_ENV-<unset>}}\"'"
    under_make = subprocess.run(
        ["make", "--no-print-directory", f"--eval={recipe}", "probe"],
        cwd=PROJECT_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert by_hand.stderr == under_make.stderr == ""
    shell, make = printed(by_hand.stdout), printed(under_make.stdout)
    assert shell == make
    assert shell["PATH"].split(os.pathsep)[:2] == list(project_env.TOOL_DIRS)
    assert shell["CI"] == "true"  # a pipe is no terminal
    expected = project_env.environment(env, terminal=False)
    assert {name: shell[name] for name in expected} == expected
    # The hook is for make's recipe lines only: their children (a pyenv shim is a bash script) do not source it again.
    assert "child BASH_ENV=<unset>" in under_make.stdout
