"""Print the package index pip would use, for Pipfile's `url = "${PIP_INDEX_URL}"`.

The lock file must not name a registry host, so the URL comes from the environment; when
PIP_INDEX_URL is unset, this derives it from pip's own configuration (pip.conf, user or site)
and falls back to pip's built-in default index.
"""

from __future__ import annotations

import os
import subprocess
import sys


def index_url() -> str:
    if os.environ.get("PIP_INDEX_URL"):
        return os.environ["PIP_INDEX_URL"]
    listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, check=False).stdout
    for line in listed.splitlines():
        key, _, value = line.partition("=")
        if key.endswith(".index-url"):
            return value.strip().strip("'\"")
    from pip._internal.models.index import PyPI  # pip's own default, not a literal of ours

    return str(PyPI.simple_url)


if __name__ == "__main__":
    print(index_url())
