"""The sample app as it runs in the image: `uvicorn main:app` on a loopback port, against a moto
server through the SDK's standard AWS_ENDPOINT_URL, probed over HTTP the way the ALB would."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from scripts.emulator import client, environment, listening_socket
from scripts.seed_table import create_table
from tests.support.sample_app import APP_DIR, TABLE, fill

REGION = "ap-southeast-2"


@pytest.fixture(scope="module")
def dynamodb(moto_endpoint: str) -> Any:
    return client("dynamodb", moto_endpoint, REGION)


@pytest.fixture(scope="module")
def service(moto_endpoint: str) -> Iterator[str]:
    env = {**environment(moto_endpoint, REGION), "TABLE_NAME": TABLE, "CLUSTER_COLOR": "blue"}
    # The image's command, serving on a loopback socket bound here (no race for a port) instead of 0.0.0.0:8000.
    with listening_socket() as listener:
        fd = listener.fileno()
        command = [sys.executable, "-m", "uvicorn", "main:app", "--fd", str(fd)]
        process = subprocess.Popen(
            command, cwd=APP_DIR, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, pass_fds=(fd,)
        )
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert process.poll() is None, process.stdout.read() if process.stdout else "uvicorn exited"
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_not_ready_until_the_table_exists_then_serves_it(service: str, dynamodb: Any) -> None:
    assert httpx.get(f"{service}/healthz").status_code == 200
    not_ready = httpx.get(f"{service}/readyz")
    assert (not_ready.status_code, not_ready.headers["content-type"]) == (503, "application/json")
    assert not_ready.json()["error"] == "DynamoDB describe_table failed: ResourceNotFoundException"

    create_table(dynamodb, TABLE)
    fill(dynamodb, 30)
    assert httpx.get(f"{service}/readyz").status_code == 200
    response = httpx.get(f"{service}/", timeout=30)
    assert response.status_code == 200
    assert response.headers["x-cluster-color"] == "blue"
    items = response.json()
    assert len(items) == 10  # a few, never the table (tests/test_sample_app.py)
    assert all((i["Point"], len(i["Pad"])) == (int(i["UserId"]), 1000) for i in items)
