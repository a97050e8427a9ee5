"""The emulator starts without racing for its port (scripts/emulator.py): the port is bound before the
server process exists and held by it, many servers start side by side, and one that dies says why at once. It lets
requests into moto one at a time, and answers an SDK's retry of a call it ran with that call's answer."""

from __future__ import annotations

import errno
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from scripts.emulator import AnsweredOnce, MotoProcess, OneAtATime, client

pytestmark = pytest.mark.background
REGION = "eu-west-1"
SIDE_BY_SIDE = 4  # more than any process of make test starts at once (the rehearsal: three); each costs ~1 CPU-s


def test_the_port_is_taken_before_the_server_process_serves() -> None:
    """The old way picked a free port, released it and let the server bind it later: another process could
    take it in between. Now nobody can bind the port from the moment the endpoint is known."""
    server = MotoProcess()
    try:
        with socket.socket() as intruder, pytest.raises(OSError, match="in use") as refused:
            intruder.bind(("127.0.0.1", server.port))
        assert refused.value.errno == errno.EADDRINUSE
        assert server.ready() == f"http://127.0.0.1:{server.port}"
    finally:
        server.stop()


def test_many_servers_start_side_by_side_each_its_own_world() -> None:
    servers = [MotoProcess() for _ in range(SIDE_BY_SIDE)]
    try:
        with ThreadPoolExecutor(SIDE_BY_SIDE) as pool:
            endpoints = list(pool.map(lambda server: server.ready(), servers))
        assert len(set(endpoints)) == SIDE_BY_SIDE
        for number, endpoint in enumerate(endpoints):
            client("sqs", endpoint, REGION).create_queue(QueueName=f"queue-{number}")
        for number, endpoint in enumerate(endpoints):
            urls = client("sqs", endpoint, REGION).list_queues()["QueueUrls"]
            assert [url.rsplit("/", 1)[1] for url in urls] == [f"queue-{number}"]
    finally:
        for server in servers:
            server.stop()


def test_a_server_that_exits_is_reported_at_once_with_what_it_said() -> None:
    # Without the project on its module path the server process cannot even start: it exits at once.
    server = MotoProcess({"PYTHONSAFEPATH": "1", "PYTHONPATH": ""})
    try:
        with pytest.raises(RuntimeError, match=r"exited \(1\) before it served: .*No module named 'scripts'"):
            server.ready(timeout=600)
    finally:
        server.stop()


def test_requests_enter_the_backends_one_at_a_time() -> None:
    """Ten requests at once, as Terraform sends them: inside the wrapped app there is never more than one, and each
    gets its whole body."""
    inside, most = 0, 0
    counting = threading.Lock()

    def backend(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        nonlocal inside, most
        with counting:
            inside += 1
            most = max(most, inside)
        time.sleep(0.01)  # a backend walking its dicts
        with counting:
            inside -= 1
        start_response("200 OK", [])
        return [b"answer ", environ["PATH_INFO"].encode()]

    app = OneAtATime(backend)
    with ThreadPoolExecutor(10) as pool:
        bodies = list(pool.map(lambda n: b"".join(app({"PATH_INFO": f"/{n}"}, lambda *_: None)), range(10)))
    assert most == 1
    assert bodies == [f"answer /{n}".encode() for n in range(10)]


def test_a_retried_attempt_of_a_call_that_succeeded_gets_its_answer_without_running_again(moto_endpoint: str) -> None:
    """botocore made to retry a CreateRole the emulator answered (as an SDK does when a response is lost on the way):
    the retry, the same invocation, gets the first attempt's answer; the role was made once, and no duplicate
    (`EntityAlreadyExists`) fails the call."""
    iam = client("iam", moto_endpoint, REGION)
    seen: list[int] = []

    def lost_once(attempts: int, response: Any, **_: Any) -> float | None:
        seen.append(attempts)
        succeeded = response is not None and response[0].status_code == 200
        return 0.0 if succeeded and attempts == 1 else None

    iam.meta.events.register_first("needs-retry.iam.CreateRole", lost_once)
    role = iam.create_role(RoleName="answered-once", AssumeRolePolicyDocument='{"Version": "2012-10-17", "Statement": []}')
    assert seen == [1, 2]
    assert role["Role"]["RoleName"] == "answered-once"
    assert [r["RoleName"] for r in iam.list_roles()["Roles"] if r["RoleName"] == "answered-once"] == ["answered-once"]


def _counted_backend(runs: list[str], *, refuse_first: bool) -> Any:
    def backend(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        runs.append(environ["PATH_INFO"])
        if refuse_first and len(runs) == 1:
            start_response("500 Internal Server Error", [])
            return [b"failed"]
        start_response("200 OK", [("Content-Type", "text/xml")])
        return [b"made ", str(len(runs)).encode()]

    return backend


def _attempt(app: AnsweredOnce, invocation: str | None, attempt: int) -> tuple[str, bytes]:
    environ = {"PATH_INFO": "/create", "HTTP_AMZ_SDK_REQUEST": f"attempt={attempt}; max=25"}
    if invocation:
        environ["HTTP_AMZ_SDK_INVOCATION_ID"] = invocation
    statuses: list[str] = []
    body = b"".join(app(environ, lambda status, headers, exc_info=None: statuses.append(status)))
    return statuses[-1], body


def test_only_a_success_is_answered_again_and_only_to_the_same_invocation() -> None:
    runs: list[str] = []
    app = AnsweredOnce(_counted_backend(runs, refuse_first=False), remembered=2)
    assert _attempt(app, "a", 1) == ("200 OK", b"made 1")
    assert _attempt(app, "a", 2) == ("200 OK", b"made 1")  # answered again, not run
    assert _attempt(app, "b", 1) == ("200 OK", b"made 2")  # another call runs
    assert _attempt(app, None, 1) == ("200 OK", b"made 3")  # a request no SDK numbered runs every time
    assert _attempt(app, None, 1) == ("200 OK", b"made 4")
    _attempt(app, "c", 1)
    assert _attempt(app, "a", 3) == ("200 OK", b"made 6")  # forgotten: only the last two are kept
    assert len(runs) == 6

    failed: list[str] = []
    retried = AnsweredOnce(_counted_backend(failed, refuse_first=True))
    assert _attempt(retried, "x", 1) == ("500 Internal Server Error", b"failed")
    assert _attempt(retried, "x", 2) == ("200 OK", b"made 2")  # a failed attempt changed nothing: its retry runs


def test_the_tagging_api_lists_hosted_zones_in_us_east_1_only_as_aws_does(moto_endpoint: str) -> None:
    """Route 53 is global: AWS's Tagging API lists its zones when asked in us-east-1 (common's sub-zone guard asks
    there), in no other region; moto 5.2.5 lists none anywhere."""
    endpoint = moto_endpoint
    route53 = client("route53", endpoint, REGION)
    made = route53.create_hosted_zone(Name="tagged.example.org", CallerReference="tagged")["HostedZone"]["Id"]
    zone_id = made.split("/")[-1]
    ours = {"Project": "emulator-zone-tags", "Stack": "common"}
    route53.change_tags_for_resource(
        ResourceType="hostedzone", ResourceId=zone_id, AddTags=[{"Key": k, "Value": v} for k, v in ours.items()]
    )
    try:

        def listed(region: str, kind: str) -> list[tuple[str, dict[str, str]]]:
            found = client("resourcegroupstaggingapi", endpoint, region).get_resources(
                ResourceTypeFilters=[kind], TagFilters=[{"Key": "Project", "Values": [ours["Project"]]}]
            )["ResourceTagMappingList"]
            return [(m["ResourceARN"], {t["Key"]: t["Value"] for t in m["Tags"]}) for m in found]

        assert listed("us-east-1", "route53:hostedzone") == [(f"arn:aws:route53:::hostedzone/{zone_id}", ours)]
        assert listed("us-east-1", "route53") == listed("us-east-1", "route53:hostedzone")
        assert listed(REGION, "route53:hostedzone") == []
        assert listed("us-east-1", "dynamodb:table") == []
    finally:
        route53.delete_hosted_zone(Id=made)
