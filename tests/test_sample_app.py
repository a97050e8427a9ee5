"""The sample app against moto's in-process DynamoDB, through FastAPI's TestClient."""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType
from typing import Any

import boto3
import pytest
from fastapi.testclient import TestClient
from moto import mock_aws

from tests.sample_app import TABLE, create_table, fill, load_app

REGION = "eu-west-2"


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_ENDPOINT_URL", "AWS_PROFILE", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("TABLE_NAME", TABLE)
    monkeypatch.setenv("CLUSTER_COLOR", "green")


@pytest.fixture
def sample(env: None) -> Iterator[ModuleType]:
    module = load_app()
    yield module
    module.dynamodb.cache_clear()


@pytest.fixture
def aws(sample: ModuleType) -> Iterator[Any]:
    with mock_aws():
        yield boto3.client("dynamodb", region_name=REGION)


@pytest.fixture
def client(sample: ModuleType) -> Iterator[TestClient]:
    with TestClient(sample.app, raise_server_exceptions=False) as test_client:
        yield test_client


def count_scans(sample: ModuleType) -> list[str]:
    """Record each Scan the app's own client sends."""
    calls: list[str] = []
    sample.dynamodb().meta.events.register("before-call.dynamodb.Scan", lambda **_: calls.append("scan"))
    return calls


def test_lists_every_item_across_scan_pages(aws: Any, sample: ModuleType, client: TestClient) -> None:
    create_table(aws)
    fill(aws, 1200)  # ~1.2 MB: more than one 1 MB Scan page
    scans = count_scans(sample)
    response = client.get("/")
    assert response.status_code == 200
    items = response.json()
    assert len(scans) >= 2
    assert sorted(int(i["UserId"]) for i in items) == list(range(1200))
    assert all(i["Point"] == int(i["UserId"]) for i in items)


def test_items_are_plain_json(aws: Any, client: TestClient) -> None:
    create_table(aws)
    aws.put_item(
        TableName=TABLE, Item={"UserId": {"S": "1"}, "Point": {"N": "70"}, "Ratio": {"N": "0.5"}, "Tags": {"SS": ["b", "a"]}}
    )
    assert client.get("/").json() == [{"UserId": "1", "Point": 70, "Ratio": 0.5, "Tags": ["a", "b"]}]


def test_items_pages_round_trip_with_an_opaque_cursor(aws: Any, client: TestClient) -> None:
    create_table(aws)
    fill(aws, 250, pad=10)
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        response = client.get("/items", params={"limit": 100, **({"cursor": cursor} if cursor else {})})
        assert response.status_code == 200
        body = response.json()
        seen += [i["UserId"] for i in body["items"]]
        pages += 1
        cursor = body["next_cursor"]
        if cursor is None:
            break
        assert "UserId" not in cursor  # opaque, not DynamoDB's key in the clear
    assert sorted(seen, key=int) == [str(i) for i in range(250)]
    assert len(seen) == len(set(seen))
    assert pages >= 3


@pytest.mark.parametrize("params", [{"cursor": "not-base64!"}, {"cursor": "bm90IGpzb24"}, {"limit": 0}, {"limit": 5000}])
def test_bad_paging_parameters_are_client_errors(aws: Any, client: TestClient, params: dict[str, Any]) -> None:
    create_table(aws)
    assert client.get("/items", params=params).status_code in (400, 422)


def test_missing_table_gives_503_json_and_a_log_line(aws: Any, client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    response = client.get("/")
    assert response.status_code == 503
    assert response.json() == {"error": "DynamoDB scan failed: ResourceNotFoundException"}
    assert "Traceback" not in response.text
    assert any("ResourceNotFoundException" in r.getMessage() for r in caplog.records)


def test_readyz_both_ways(aws: Any, client: TestClient) -> None:
    assert client.get("/readyz").status_code == 503
    create_table(aws)
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json() == {"status": "ready", "table": TABLE, "table_status": "ACTIVE"}


def test_healthz_makes_no_aws_call(sample: ModuleType, client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sample, "call", lambda *_, **__: pytest.fail("liveness must not call AWS"))
    assert client.get("/healthz").json() == {"status": "ok"}


def test_every_response_names_the_serving_colour(aws: Any, client: TestClient) -> None:
    assert client.get("/healthz").headers["X-Cluster-Color"] == "green"
    assert client.get("/").headers["X-Cluster-Color"] == "green"  # errors too


def test_region_comes_from_the_environment(aws: Any, sample: ModuleType) -> None:
    assert sample.dynamodb().meta.region_name == REGION


def test_one_client_per_process_with_timeouts_and_retries(aws: Any, sample: ModuleType) -> None:
    assert sample.dynamodb() is sample.dynamodb()
    config = sample.dynamodb().meta.config
    assert (config.connect_timeout, config.read_timeout) == (2, 5)
    assert config.retries == {"mode": "standard", "total_max_attempts": 3}


def test_unreachable_endpoint_gives_503(sample: ModuleType, client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # discard port: nothing listens
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["error"].startswith("DynamoDB describe_table failed: EndpointConnectionError")


def test_no_credentials_gives_503(sample: ModuleType, client: TestClient, monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
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


def test_seed_table_helper_makes_what_the_readme_shows(aws: Any, client: TestClient) -> None:
    from tools.seed_table import seed

    seed(aws, TABLE, 3)
    seed(aws, TABLE, 3)  # idempotent: the table exists, items are overwritten
    assert sorted(client.get("/").json(), key=lambda i: i["UserId"]) == [
        {"UserId": "1", "Point": 70},
        {"UserId": "2", "Point": 80},
        {"UserId": "3", "Point": 90},
    ]
