"""Run the real Terraform CLI on a synthesized stack directory."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scripts.terraformrc import forget_provider_checksums


def run(stack_dir: Path, *args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """env: the whole environment of the run (default: this process's). After an init, the lock file keeps no provider
    checksum (scripts/terraformrc.py: no command after it hashes the provider)."""
    done = subprocess.run(["terraform", *args], cwd=stack_dir, capture_output=True, text=True, check=False, env=env)
    if args[:1] == ("init",) and done.returncode == 0:
        forget_provider_checksums(stack_dir)
    return done


def write_root(root: Path, modules: Mapping[str, dict[str, Any]]) -> Path:
    """root, a root module that calls each document as a module of its name (without its backend: a module may not
    have one)."""
    for name, document in modules.items():
        document.get("terraform", {}).pop("backend", None)
        (root / name).mkdir(parents=True)
        (root / name / "cdk.tf.json").write_text(json.dumps(document))
    (root / "main.tf.json").write_text(json.dumps({"module": {name: {"source": f"./{name}"} for name in modules}}))
    return root


def init_and_validate(stack_dir: Path) -> dict[str, Any]:
    """`terraform init` (no backend: validation needs none) and `terraform validate -json`."""
    init = run(stack_dir, "init", "-backend=false", "-input=false", "-no-color")
    assert init.returncode == 0, init.stdout + init.stderr
    validate = run(stack_dir, "validate", "-json", "-no-color")
    result: dict[str, Any] = json.loads(validate.stdout)
    return result


def provider_versions(stack_dir: Path) -> dict[str, str]:
    """Provider versions Terraform selected for an initialised directory."""
    out = run(stack_dir, "version", "-json")
    selections: dict[str, str] = json.loads(out.stdout)["provider_selections"]
    return selections


@dataclass(frozen=True)
class MirrorInits:
    """Working directories initialised side by side from a provider mirror through scripts/terraformrc.py's config,
    and what the directory beside that config held before and after."""

    mirror: Path
    directories: list[Path]
    runs: list[subprocess.CompletedProcess[str]]
    beside_config_before: dict[str, tuple[int, int]]
    beside_config_after: dict[str, tuple[int, int]]

    def provider_link(self, directory: Path) -> Path:
        """Where the directory's installed provider points, one hop."""
        installed = directory / ".terraform" / "providers" / MIRRORED / MIRRORED_VERSION
        (platform,) = installed.iterdir()
        return Path(os.readlink(platform))


# A stand-in under a host of its own: a filesystem mirror serves any source address, and none is fetched.
MIRRORED = "providers.example/stand-in/aws"
MIRRORED_VERSION = "5.100.0"


def init_from_a_mirror(root: Path, *, directories: int) -> MirrorInits:
    """A mirror of a stand-in aws provider for this machine's platform (an init links it, never runs it), the config
    scripts/terraformrc.py writes for it, then `terraform init` of a stack needing it in several directories at once,
    as the rehearsal's threads do."""
    from scripts.terraformrc import write_config

    platform = json.loads(run(root, "version", "-json").stdout)
    mirror = root / "mirror"
    binary = mirror / MIRRORED / MIRRORED_VERSION / platform["platform"] / f"terraform-provider-aws_v{MIRRORED_VERSION}_x5"
    binary.parent.mkdir(parents=True)
    binary.write_text("a stand-in: init installs a provider without running it\n")
    config = write_config(mirror, root / "config" / "terraformrc")
    assert config is not None
    stack = {"terraform": {"required_providers": {"aws": {"source": MIRRORED, "version": MIRRORED_VERSION}}}}
    workdirs = [root / f"stack-{n}" for n in range(directories)]
    for workdir in workdirs:
        workdir.mkdir()
        (workdir / "main.tf.json").write_text(json.dumps(stack))
    before = _entries(config.parent)
    env = {**os.environ, "TF_CLI_CONFIG_FILE": str(config)}
    with ThreadPoolExecutor(max_workers=directories) as pool:
        runs = list(pool.map(lambda workdir: run(workdir, "init", "-input=false", "-no-color", env=env), workdirs))
    return MirrorInits(mirror, workdirs, runs, before, _entries(config.parent))


def _entries(directory: Path) -> dict[str, tuple[int, int]]:
    """Every path under a directory (links not followed), with its inode and modification time in nanoseconds."""
    found = {}
    for path in [directory, *directory.rglob("*")]:
        status = path.lstat()
        found[str(path.relative_to(directory))] = (status.st_ino, status.st_mtime_ns)
    return found
