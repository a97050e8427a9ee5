"""Write a Terraform CLI config that takes providers from a local filesystem mirror.

This machine (and CI) has hashicorp/aws in a filesystem mirror and no route to the Terraform
registry. When the mirror exists, providers in it are installed from it, anything else from
the registry, and a plugin cache keeps `terraform init` cheap. Prints the config's path, or
nothing when there is no mirror (then Terraform's normal configuration applies).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from model.paths import PROJECT_DIR

MIRROR = Path(os.environ.get("TF_PROVIDER_MIRROR", "/opt/tf-plugins"))
CONFIG = PROJECT_DIR / ".cache" / "terraform" / "terraformrc"


def mirrored_providers(mirror: Path = MIRROR) -> list[str]:
    """`hostname/namespace/type` of every provider in an unpacked filesystem mirror."""
    return sorted("/".join(p.relative_to(mirror).parts) for p in mirror.glob("*/*/*") if p.is_dir())


def write_config(mirror: Path = MIRROR, config: Path = CONFIG) -> Path | None:
    providers = mirrored_providers(mirror) if mirror.is_dir() else []
    if not providers:
        return None
    cache = config.parent / "plugin-cache"
    cache.mkdir(parents=True, exist_ok=True)
    quoted = ", ".join(f'"{p}"' for p in providers)
    text = (
        f'plugin_cache_dir = "{cache}"\n'
        "provider_installation {\n"
        f'  filesystem_mirror {{\n    path    = "{mirror}"\n    include = [{quoted}]\n  }}\n'
        f"  direct {{\n    exclude = [{quoted}]\n  }}\n"
        "}\n"
    )
    if not config.exists() or config.read_text() != text:
        config.write_text(text)
    return config


def configure_environment() -> None:
    """Point TF_CLI_CONFIG_FILE at the mirror config, when there is a mirror."""
    path = write_config()
    if path:
        os.environ["TF_CLI_CONFIG_FILE"] = str(path)


if __name__ == "__main__":
    written = write_config()
    sys.stdout.write(f"{written}\n" if written else "")
