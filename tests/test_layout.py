"""The project frame: the constructs name clash, pinned versions, and no registry host committed."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import constructs

from scripts.terraformrc import mirrored_providers


def test_constructs_is_the_installed_library_not_a_folder_of_ours(project_dir: Path) -> None:
    location = Path(constructs.__file__).resolve()
    assert "site-packages" in location.parts, location
    assert not (project_dir / "constructs").exists(), "our construct library is components/, see docs/contributing.md"
    # main.py runs with the project root as sys.path[0]: the library must still win there.
    probe = subprocess.run(
        [sys.executable, "-c", "import constructs; print(constructs.__file__)"],
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


def test_ci_runs_the_readme_test_command(project_dir: Path) -> None:
    run = (project_dir / ".ci" / "run").read_text()
    assert "make test" in run
    readme = (project_dir / "README.md").read_text()
    assert "make synth" in readme
    assert "make test" in readme
