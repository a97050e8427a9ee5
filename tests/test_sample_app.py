"""The sample app against moto's in-process DynamoDB, through FastAPI's TestClient."""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType
from typing import Any

import boto3
import pytest
from fastapi.testclient import TestClient

from scripts.seed_table import create_table, seed
from tests.support.configs import SAMPLE_APP, example
from tests.support.emulated_aws import in_process_aws
from tests.support.sample_app import APP_ENV, REGION, TABLE, fill, load_app


@pytest.fixture(scope="module")
def emulated() -> Iterator[None]:
    """The app's environment, then moto's emulation inside it, once per module: started per test,
    moto alone costs a few tenths of a second each time. (moto patches os.environ too, so the
    two nest strictly: environment outside, emulation inside.)"""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("AWS_DEFAULT_REGION", raising=False)
        for name, value in APP_ENV.items():
            patch.setenv(name, value)
        with in_process_aws(patch):
            yield


@pytest.fixture(scope="module")
def app_module() -> ModuleType:
    return load_app()


@pytest.fixture
def sample(emulated: None, app_module: ModuleType) -> Iterator[ModuleType]:
    """The app with a fresh DynamoDB client."""
    app_module.dynamodb.cache_clear()
    yield app_module
    app_module.dynamodb.cache_clear()


@pytest.fixture
def aws(sample: ModuleType) -> Iterator[Any]:
    client = boto3.client("dynamodb", region_name=REGION)
    yield client
    for table in client.list_tables()["TableNames"]:  # every test starts without tables
        client.delete_table(TableName=table)


@pytest.fixture
def client(sample: ModuleType) -> Iterator[TestClient]:
    with TestClient(sample.app, raise_server_exceptions=False) as test_client:
        yield test_client


def scans_of(sample: ModuleType) -> list[dict[str, Any]]:
    """Record the parameters of each Scan the app's own client sends."""
    calls: list[dict[str, Any]] = []
    sample.dynamodb().meta.events.register("provide-client-params.dynamodb.Scan", lambda params, **_: calls.append(params))
    return calls


def test_reads_a_few_items_in_one_bounded_scan_never_the_table(aws: Any, sample: ModuleType, client: TestClient) -> None:
    """`/` is behind an internet-facing load balancer: one Scan with Limit 10 (what it may read, not only answer), never
    followed to the next page, whatever the table holds."""
    create_table(aws, TABLE)
    fill(aws, 25, pad=10)
    scans = scans_of(sample)
    response = client.get("/")
    assert response.status_code == 200
    items = response.json()
    assert [params["Limit"] for params in scans] == [10]
    assert "ExclusiveStartKey" not in scans[0]
    assert len(items) == 10
    assert all(i["Point"] == int(i["UserId"]) for i in items)  # real items of the table


def test_the_table_cannot_be_paged_through_either(aws: Any, client: TestClient) -> None:
    create_table(aws, TABLE)
    assert client.get("/items", params={"limit": 1000}).status_code == 404


def test_items_are_plain_json(aws: Any, client: TestClient) -> None:
    create_table(aws, TABLE)
    aws.put_item(
        TableName=TABLE, Item={"UserId": {"S": "1"}, "Point": {"N": "70"}, "Ratio": {"N": "0.5"}, "Tags": {"SS": ["b", "a"]}}
    )
    assert client.get("/").json() == [{"UserId": "1", "Point": 70, "Ratio": 0.5, "Tags": ["a", "b"]}]


def test_missing_table_gives_503_json_and_a_log_line(aws: Any, client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    response = client.get("/")
    assert response.status_code == 503
    assert response.json() == {"error": "DynamoDB scan failed: ResourceNotFoundException"}
    assert "Traceback" not in response.text
    assert any("ResourceNotFoundException" in r.getMessage() for r in caplog.records)


def test_readyz_both_ways(aws: Any, client: TestClient) -> None:
    assert client.get("/readyz").status_code == 503
    create_table(aws, TABLE)
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json() == {"status": "ready", "table": TABLE, "table_status": "ACTIVE"}


def test_probe_answers_what_readiness_holds_the_colour_to(aws: Any, client: TestClient) -> None:
    """/probe is the end of readiness's request through the preview host (tools/readiness/probe.py): the colour and
    the image tag its pods run, after reading the table. Readiness's own judge reads this very answer, with the sample
    app's probe as the shipped example configures it."""
    from tools.readiness.probe import ProbeFailedError, judge
    from tools.readiness.types import Probed, Target

    probe = example().applications[SAMPLE_APP].probe
    assert client.get(probe.path).status_code == 503  # no table: the whole path is not there
    seed(aws, TABLE, 1)
    answer = client.get(probe.path)
    assert answer.status_code == probe.status == 200
    assert answer.json() == {"colour": "green", "image_tag": "0.2.0", "table": TABLE, "table_status": "ACTIVE", "items_read": 1}

    def target(image_tag: str) -> tuple[Target, Probed]:
        app = Probed(SAMPLE_APP, "app-green.eks.example.com", probe, image_tag=image_tag)
        return Target("green", "eks-bg-green", "1.36", "eks-bg", (app,)), app

    assert judge(*target("0.2.0"), (200, answer.content)) == (
        "green answered through DNS, the shared load balancer and TLS: colour green, image_tag 0.2.0, as configured"
    )
    with pytest.raises(ProbeFailedError, match=r"green answered image_tag '0\.2\.0' \(expected '0\.3\.0'\)"):
        judge(*target("0.3.0"), (200, answer.content))


def test_probe_reads_what_slash_reads(aws: Any, sample: ModuleType, client: TestClient) -> None:
    """The proof readiness asks for is the read users get: the same one bounded Scan."""
    create_table(aws, TABLE)
    fill(aws, 25, pad=10)
    scans = scans_of(sample)
    assert client.get("/probe").json()["items_read"] == len(client.get("/").json()) == 10
    assert scans[0] == scans[1] == {"TableName": TABLE, "Limit": 10}


def test_every_response_names_the_serving_colour(aws: Any, client: TestClient) -> None:
    assert client.get("/healthz").headers["X-Cluster-Color"] == "green"
    assert client.get("/").headers["X-Cluster-Color"] == "green"  # errors too


def test_region_comes_from_the_environment(aws: Any, sample: ModuleType) -> None:
    assert sample.dynamodb().meta.region_name == REGION


def test_one_client_per_process(aws: Any, sample: ModuleType) -> None:
    """Its connection pool and credentials serve every request (a client per request would re-read credentials)."""
    assert sample.dynamodb() is sample.dynamodb()


def test_seed_table_helper_makes_what_the_readme_shows(aws: Any, client: TestClient) -> None:
    seed(aws, TABLE, 3)
    seed(aws, TABLE, 3)  # idempotent: the table exists, items are overwritten
    assert sorted(client.get("/").json(), key=lambda i: i["UserId"]) == [
        {"UserId": "1", "Point": 70},
        {"UserId": "2", "Point": 80},
        {"UserId": "3", "Point": 90},
    ]
