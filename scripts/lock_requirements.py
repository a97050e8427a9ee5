"""Print a Pipfile.lock as a requirements file with hashes, for `uv pip sync --require-hashes`.

    python3 -m scripts.lock_requirements Pipfile.lock [--dev]

The lock stays pipenv's (`make lock` writes it); installing from it goes through uv, which installs in
parallel from its cache: a fresh clone's `make synth` spends seconds, not a minute, on it. Standard library
only: the Makefile runs it with the machine's python3 before any virtualenv exists.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def requirements(lock: Path, *, dev: bool) -> str:
    document = json.loads(lock.read_text())
    packages = {**document["default"], **(document["develop"] if dev else {})}
    lines = []
    for name, pin in sorted(packages.items()):
        marker = f" ; {pin['markers']}" if pin.get("markers") else ""
        hashes = " ".join(f"--hash={h}" for h in pin["hashes"])
        lines.append(f"{name}{pin['version']}{marker} {hashes}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(requirements(Path(sys.argv[1]), dev="--dev" in sys.argv[2:]))
