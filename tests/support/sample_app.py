"""Helpers for the sample app's tests: load app/main.py, fill a table (scripts/seed_table.py makes it)."""

from __future__ import annotations

import importlib.util
from types import ModuleType
from typing import Any

from model.paths import PROJECT_DIR

APP_DIR = PROJECT_DIR / "app"
TABLE = "users"
REGION = "eu-west-2"
# The app's whole configuration, as the chart sets it (credentials are the emulator's).
APP_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_REGION": REGION,
    "TABLE_NAME": TABLE,
    "CLUSTER_COLOR": "green",
    "IMAGE_TAG": "0.2.0",
}


def load_app() -> ModuleType:
    """app/main.py under its own module name (the project's main.py is `main` too)."""
    spec = importlib.util.spec_from_file_location("sample_app_main", APP_DIR / "main.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fill(client: Any, count: int, *, pad: int = 1000, name: str = TABLE) -> None:
    """`count` items `{"UserId": "<i>", "Point": i, "Pad": "x" * pad}` (~1 KB each by default)."""
    for start in range(0, count, 25):
        requests = [
            {"PutRequest": {"Item": {"UserId": {"S": str(i)}, "Point": {"N": str(i)}, "Pad": {"S": "x" * pad}}}}
            for i in range(start, min(start + 25, count))
        ]
        client.batch_write_item(RequestItems={name: requests})
