"""The sample app when AWS is not there: no emulator, an unreachable endpoint, no credentials,
no configuration. Every failure is a 503 with a JSON body (or a refusal to start), never a
traceback to the client."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import ClassVar

import pytest
from fastapi.testclient import TestClient

from tests.support.sample_app import APP_ENV, load_app

UNREACHABLE = "http://127.0.0.1:9"  # the discard port: nothing listens


@pytest.fixture
def sample(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    for name in ("AWS_PROFILE", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    for name, value in APP_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_ENDPOINT_URL", UNREACHABLE)
    module = load_app()
    yield module
    module.dynamodb.cache_clear()


@pytest.fixture
def client(sample: ModuleType) -> Iterator[TestClient]:
    with TestClient(sample.app, raise_server_exceptions=False) as test_client:
        yield test_client


def test_healthz_makes_no_aws_call(sample: ModuleType, client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sample, "call", lambda *_, **__: pytest.fail("liveness must not call AWS"))
    assert client.get("/healthz").json() == {"status": "ok"}


def test_unreachable_endpoint_gives_503(client: TestClient) -> None:
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["error"].startswith("DynamoDB describe_table failed: EndpointConnectionError")


def test_no_credentials_gives_503(
    sample: ModuleType, client: TestClient, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    response = client.get("/")
    assert (response.status_code, response.json()) == (503, {"error": "DynamoDB scan failed: NoCredentialsError"})


def test_refuses_to_start_without_its_configuration(sample: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TABLE_NAME")
    with pytest.raises(RuntimeError, match=r"missing environment variable.*TABLE_NAME"), TestClient(sample.app):
        pass


class _FailingDynamoDb(BaseHTTPRequestHandler):
    """Answers every request with DynamoDB's 500 InternalServerError, counting them."""

    attempts: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        type(self).attempts.append(self.headers["X-Amz-Target"])
        body = b'{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"try again"}'
        self.send_response(500)
        self.send_header("Content-Type", "application/x-amz-json-1.0")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


def test_a_failing_dynamodb_is_tried_three_times_then_answers_503(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries absorb a passing fault, within the probe's timeouts: three attempts in all, then a clean 503."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FailingDynamoDb)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _FailingDynamoDb.attempts = []
    for name, value in APP_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{server.server_port}")
    try:
        with TestClient(load_app().app, raise_server_exceptions=False) as client:
            response = client.get("/")
    finally:
        server.shutdown()
    assert (response.status_code, response.json()) == (503, {"error": "DynamoDB scan failed: InternalServerError"})
    assert _FailingDynamoDb.attempts == ["DynamoDB_20120810.Scan"] * 3
