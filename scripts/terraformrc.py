"""Write a Terraform CLI config that takes providers from a local filesystem mirror.

This machine (and CI) has hashicorp/aws in a filesystem mirror and no route to the Terraform
registry. When the mirror exists, providers in it are installed from it, anything else from
the registry. Prints the config's path, or nothing when there is no mirror (then Terraform's
normal configuration applies).

No `plugin_cache_dir`, on purpose. An init from an unpacked mirror links the working
directory's provider straight to the mirror's (read-only, shared by nothing that writes), so a
cache saves nothing here. And a cache is shared state that every `terraform init` without a
lock-file entry rewrites (it removes the cache's entry and links it again: Terraform 1.4's
`plugin_cache_may_break_dependency_lock_file` rule; hashicorp/terraform issue 31964), while
other working directories' providers resolve through it: a plan that started its provider in
that moment failed with "could not read package directory" (a fresh clone's CI run, where the
rehearsal's inits and plans run side by side).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from model.paths import PROJECT_DIR

MIRROR = Path(os.environ.get("TF_PROVIDER_MIRROR", "/opt/tf-plugins"))
CONFIG = PROJECT_DIR / ".cache" / "terraform" / "terraformrc"
LOCK_FILE = ".terraform.lock.hcl"
_CHECKSUMS = re.compile(r"^[ \t]*hashes[ \t]*=[ \t]*\[[^\]]*\][ \t]*\n", re.MULTILINE)


def mirrored_providers(mirror: Path = MIRROR) -> list[str]:
    """`hostname/namespace/type` of every provider in an unpacked filesystem mirror."""
    return sorted("/".join(p.relative_to(mirror).parts) for p in mirror.glob("*/*/*") if p.is_dir())


def write_config(mirror: Path = MIRROR, config: Path = CONFIG) -> Path | None:
    providers = mirrored_providers(mirror) if mirror.is_dir() else []
    if not providers:
        return None
    config.parent.mkdir(parents=True, exist_ok=True)
    quoted = ", ".join(f'"{p}"' for p in providers)
    text = (
        "provider_installation {\n"
        f'  filesystem_mirror {{\n    path    = "{mirror}"\n    include = [{quoted}]\n  }}\n'
        f"  direct {{\n    exclude = [{quoted}]\n  }}\n"
        "}\n"
    )
    if not config.exists() or config.read_text() != text:
        # Whole or not at all: every process that loads scripts/env.py writes it, while others' Terraform reads it.
        written = config.with_name(f"{config.name}.{os.getpid()}")
        written.write_text(text)
        written.replace(config)
    return config


def forget_provider_checksums(working_dir: Path) -> None:
    """For a scratch working directory of the tests or a rehearsal, after its `terraform init`: its lock file keeps
    each provider's version but no checksum. With checksums, every later command (plan, apply, show, output, ...)
    hashes the whole installed provider against them first: the aws provider is 675 MB, ~0.45 CPU-s a command and
    ~45 commands a `make test`. The package is this machine's mirror, linked, and nothing here is kept; a user's lock
    file, and those of the cdktf CLI's and the pipeline scripts' own inits, keep their checksums."""
    lock = working_dir / LOCK_FILE
    if lock.is_file():
        lock.write_text(_CHECKSUMS.sub("", lock.read_text()))


def configure_environment() -> None:
    """Point TF_CLI_CONFIG_FILE at the mirror config, when there is a mirror."""
    path = write_config()
    if path:
        os.environ["TF_CLI_CONFIG_FILE"] = str(path)


if __name__ == "__main__":
    written = write_config()
    sys.stdout.write(f"{written}\n" if written else "")
