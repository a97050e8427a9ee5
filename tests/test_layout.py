"""The project frame: the constructs name clash, pinned versions, and no registry host committed."""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import constructs

from model.hooks import HOOK_MODULES
from model.teardown_plan import PLAN_ENV
from scripts.terraformrc import mirrored_providers
from tools.commands import COMMANDS


def test_constructs_is_the_installed_library_not_a_folder_of_ours(project_dir: Path) -> None:
    location = Path(constructs.__file__).resolve()
    assert "site-packages" in location.parts, location
    assert not (project_dir / "constructs").exists(), "our construct library is components/, see docs/contributing.md"
    # main.py runs with the project root as sys.path[0]: the library must still win there (found, not
    # imported: importing it would start a jsii runtime just to print a path).
    probe = subprocess.run(
        [sys.executable, "-c", "import importlib.util; print(importlib.util.find_spec('constructs').origin)"],
        cwd=project_dir,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "site-packages" in probe.stdout


def test_python_pins_are_what_is_installed() -> None:
    installed = {
        name: importlib.metadata.version(name)
        for name in ("cdktf", "cdktf-cdktf-provider-aws", "cdktf-cdktf-provider-helm", "cdktf-cdktf-provider-kubernetes")
    }
    assert installed == {
        "cdktf": "0.21.0",
        "cdktf-cdktf-provider-aws": "20.1.0",
        "cdktf-cdktf-provider-helm": "12.1.2",
        "cdktf-cdktf-provider-kubernetes": "12.1.1",
    }
    assert importlib.metadata.version("constructs").startswith("10.")


def test_cli_and_node_pins_are_what_is_installed(project_dir: Path) -> None:
    def version(package: str) -> str:
        return str(json.loads((project_dir / "node_modules" / package / "package.json").read_text())["version"])

    assert version("cdktf-cli") == "0.21.0"
    assert version("node").split(".")[0] in {"22", "24"}


def test_lock_files_name_no_download_host(project_dir: Path) -> None:
    sources = json.loads((project_dir / "Pipfile.lock").read_text())["_meta"]["sources"]
    assert [s["url"] for s in sources] == ["${PIP_INDEX_URL}"]
    assert '"resolved"' not in (project_dir / "package-lock.json").read_text()


def registry_hosts() -> set[str]:
    """Hosts of the registries this project installs from, read from the tools' own defaults."""
    from pip._internal.models.index import PyPI

    hosts = {urlparse(PyPI.simple_url).hostname, PyPI.file_storage_domain}
    npm = subprocess.run(["npm", "config", "get", "registry"], capture_output=True, text=True, check=False).stdout
    hosts.add(urlparse(npm.strip()).hostname)
    hosts.update(p.split("/")[0] for p in mirrored_providers())
    return {h for h in hosts if h}


def test_no_registry_host_in_any_committed_file(project_dir: Path) -> None:
    hosts = registry_hosts()
    assert len(hosts) >= 3, hosts  # pip's index and file host, npm's registry at least
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=project_dir, capture_output=True, text=True, check=True).stdout
    found = [
        f"{name}: {host}"
        for name in filter(None, tracked.split("\0"))
        if (project_dir / name).is_file()
        for host in hosts
        if host in (project_dir / name).read_text(errors="ignore")
    ]
    assert found == []


def test_the_readme_is_read_in_ten_minutes(project_dir: Path) -> None:
    """At most 300 lines: contributor material, the architecture and the full runbook live in docs/."""
    lines = (project_dir / "README.md").read_text().splitlines()
    assert len(lines) <= 300, len(lines)


def test_ci_runs_the_readme_test_command(project_dir: Path) -> None:
    run = (project_dir / ".ci" / "run").read_text()
    assert "make test" in run
    readme = (project_dir / "README.md").read_text()
    assert "make synth" in readme
    assert "make test" in readme


# --- one kind of thing per folder ---------------------------------------------------------------

CDK_PACKAGES = (
    *("cdktf", "constructs", "jsii"),
    *("cdktf_cdktf_provider_aws", "cdktf_cdktf_provider_helm", "cdktf_cdktf_provider_kubernetes"),
    *("components", "stacks"),  # ours, built on the above
)
# What each command of tools/commands.py imports before it does anything: the module of its main().
OPERATOR_COMMANDS = tuple(command.entry for command in COMMANDS)


def imported_packages(path: Path) -> set[str]:
    """Top-level package of every import in one module (absolute imports; the project uses no others)."""
    tree = ast.parse(path.read_text())
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    names |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level == 0}
    return {name.split(".")[0] for name in names}


def modules(project_dir: Path, folder: str) -> list[Path]:
    """The folder's modules, those of its packages too (tools/shift/)."""
    return sorted(p for p in (project_dir / folder).rglob("*.py") if ".venv" not in p.parts)


def test_model_is_plain_python(project_dir: Path) -> None:
    """What the deployment is, without the CDK: the operator commands and scripts read it cheaply."""
    found = {p.name: imported_packages(p) & {*CDK_PACKAGES, "tools", "scripts", "tests"} for p in modules(project_dir, "model")}
    assert len(found) >= 10, found
    assert {name: sorted(names) for name, names in found.items() if names} == {}


def test_stacks_and_components_hold_only_cdk_code(project_dir: Path) -> None:
    """Plain data and rules belong in model/: every module here builds constructs."""
    plain = [
        f"{folder}/{p.name}"
        for folder in ("stacks", "components")
        for p in modules(project_dir, folder)
        if p.name != "__init__.py" and not imported_packages(p) & {"cdktf", "constructs"}
    ]
    assert plain == []


def test_stacks_holds_the_app_and_the_stacks_only(project_dir: Path) -> None:
    assert [p.stem for p in modules(project_dir, "stacks")] == ["__init__", "app", "base", "cluster", "common", "traffic"]


def test_no_two_modules_of_the_project_share_a_name(project_dir: Path) -> None:
    """A reader finds a thing by its file name: not three `teardown.py`s."""
    folders = ("model", "stacks", "components", "tools", "scripts", "policies")
    # But the shims Terraform's hook commands run (tools/teardown.py runs tools/hooks/teardown.py): model/hooks.py.
    shims = {f"{name.replace('.', '/')}.py" for name in HOOK_MODULES}
    names = [
        p.name
        for folder in folders
        for p in modules(project_dir, folder)
        if p.name not in ("__init__.py", "__main__.py") and p.relative_to(project_dir).as_posix() not in shims
    ]
    assert sorted({n for n in names if names.count(n) > 1}) == []


def test_operator_commands_load_no_cdk_and_the_destroy_hook_starts(project_dir: Path) -> None:
    """The operator commands and hooks run where synth does not: no jsii runtime, no provider bindings (what would
    cost them seconds; `make bench` times their start). One interpreter imports every command of tools/commands.py,
    lists any CDK module loaded, then starts the hook Terraform runs (no plan given, so it stops at once)."""
    probe = (
        "import sys, importlib\n"
        f"for name in {OPERATOR_COMMANDS!r}: importlib.import_module(name)\n"
        f"print(sorted(n for n in sys.modules if n.split('.')[0] in {CDK_PACKAGES!r}))\n"
        "from tools.teardown import main\n"
        "sys.exit(main())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=project_dir,
        env={k: v for k, v in os.environ.items() if k != PLAN_ENV},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stdout.strip() == "[]"
    assert (done.returncode, done.stderr.startswith(f"teardown: no usable plan in {PLAN_ENV}")) == (2, True), done.stderr


def test_build_scripts_run_on_the_machines_python(project_dir: Path) -> None:
    """The Makefile runs these with the system's python3 before any virtualenv exists."""
    for script in ("terraformrc", "pip_index_url", "cdktf_json", "lock_requirements"):
        extra = imported_packages(project_dir / "scripts" / f"{script}.py") - set(sys.stdlib_module_names)
        assert extra <= {"model", "pip"}, (script, extra)
    # ... and `model` is only its paths there: the package itself imports nothing.
    assert imported_packages(project_dir / "model" / "paths.py") - set(sys.stdlib_module_names) == set()
    assert imported_packages(project_dir / "model" / "__init__.py") == set()


def test_every_readme_section_a_message_names_exists(project_dir: Path) -> None:
    """Messages send operators to "README: '<section>'": a renamed section must not leave them lost."""
    readme = (project_dir / "README.md").read_text()
    sections = {line.lstrip("#").strip() for line in readme.splitlines() if line.startswith("#")}
    sections |= {match.rstrip(".") for match in re.findall(r"^\*\*([^*]+)\*\*", readme, flags=re.M)}
    named = {
        (path.relative_to(project_dir).as_posix(), name)
        for folder in ("model", "tools", "stacks", "components")
        for path in (project_dir / folder).rglob("*.py")  # tools/hooks/ too
        for name in re.findall(r"README: '([^']+)'", path.read_text())
    }
    assert named, "no message names a README section: is the pattern still the messages' form?"
    assert sorted((where, name) for where, name in named if name not in sections) == []


def test_tools_and_scripts_each_have_a_catalogue_of_exactly_their_files(project_dir: Path) -> None:
    """One line per file, saying what it is for: a file added or removed without its line fails here."""
    for folder in ("tools", "scripts"):
        listed = set(re.findall(r"^\| `([^`]+)` \|", (project_dir / folder / "README.md").read_text(), flags=re.M))
        present = {
            p.relative_to(project_dir / folder).as_posix() + ("/" if p.is_dir() else "")
            for p in [*(project_dir / folder).glob("*"), *(project_dir / folder).glob("*/*.py")]
            if p.name not in ("__init__.py", "__main__.py", "README.md", "__pycache__", "Pipfile", "Pipfile.lock", ".venv")
            and "__pycache__" not in p.parts
        }
        assert listed == present, folder


def programs_under_tools(project_dir: Path) -> set[str]:
    """Every module under tools/ that runs as a program: a package with a __main__.py, a module with a main() or a
    `__main__` guard (a package's own main() is found through its __main__.py: test below)."""
    found = set()
    for path in (project_dir / "tools").rglob("*.py"):
        name = ".".join(path.relative_to(project_dir).with_suffix("").parts)
        if path.name == "__main__.py":
            found.add(name.removesuffix(".__main__"))
        elif re.search(r'^def main\(|^if __name__ == "__main__":', path.read_text(), flags=re.M):
            found.add(name)
    return found


def test_every_program_under_tools_is_in_the_list_of_commands(project_dir: Path) -> None:
    """tools/commands.py is the one list the tests and the bench read: a program missing from it would go unscanned
    (its AWS calls), unprobed (its imports) and untimed; an entry of no module names nothing."""
    listed = {name for command in COMMANDS for name in {command.module, command.entry}}
    assert sorted(programs_under_tools(project_dir) - listed) == [], "add it to tools/commands.py"
    assert sorted(programs_under_tools(project_dir) ^ listed) == [], "tools/commands.py names a module that is not there"


def test_each_package_command_runs_the_main_its_entry_names(project_dir: Path) -> None:
    """`python -m tools.shift` runs tools/shift/__main__.py: it must call the main() of the module the list names."""
    for command in COMMANDS:
        entry = project_dir / Path(*command.entry.split("."))
        assert re.search(r"^def main\(", entry.with_suffix(".py").read_text(), flags=re.M), command.entry
        if command.main:
            runner = project_dir / Path(*command.module.split("."))  # a package's __main__.py, or a hook's shim
            main = (runner / "__main__.py" if runner.is_dir() else runner.with_suffix(".py")).read_text()
            assert f"from {command.main} import main" in main, command.module
