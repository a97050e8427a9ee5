"""Refuse a cdktf.json that is not JSON, with the place of the mistake, before the cdktf CLI reads it
(the CLI fails on it with a Node stack trace). `make synth` runs it first (and then removes the earlier output).

    python3 -m scripts.cdktf_json [path]     # exit 2 and `cdktf.json: not valid JSON: line L column C: ...` when broken
"""

from __future__ import annotations

import sys
from pathlib import Path

from model.json_file import JsonFileError, read_json


def problem(path: Path) -> str | None:
    """What is wrong with the file as JSON, or None."""
    if not path.exists() and not path.is_symlink():
        return f"{path.name}: not found in {path.parent.absolute()} (run make from the project's directory)"
    try:
        read_json(path)
    except JsonFileError as err:
        return f"{path.name}: {err}"
    return None


def main(argv: list[str]) -> int:
    found = problem(Path(argv[0] if argv else "cdktf.json"))
    if found:
        print(found, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
