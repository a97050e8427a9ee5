"""The sample app when AWS is not there: no emulator, an unreachable endpoint, no credentials,
no configuration. Every failure is a 503 with a JSON body (or a refusal to start), never a
traceback to the client."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

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
