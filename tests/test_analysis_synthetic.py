"""Synthetic checks through an application's hosts, against local HTTP servers standing in for the target colour's
preview host and the public host (each answers what the test scripts, and keeps what it was asked); and one window
judged for several applications at once (judge_window), where a check failing on one application's preview host
breaches that application only. The pause between requests goes through the clock: a fake one here, so no test waits."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from model.config.analysis import Analysis, SyntheticCheck
from tests.support.prometheus_server import free_port
from tools.analysis.synthetic import INTERVAL_SECONDS, holds
from tools.analysis.verdict import SYNTHETIC, Verdict, Window
from tools.analysis.window import Sources, Subject, breaches, judge_window

HEALTHY = {"status": "ok", "colour": "green", "build": {"tag": "1.4.2", "commit": "abc123"}}
WINDOW = Window(datetime(2026, 11, 29, 4, 0, tzinfo=UTC), datetime(2026, 11, 29, 4, 5, tzinfo=UTC))


@dataclass
class Host:
    """What a local server answers each GET: the next (status, JSON body) of `answers`, the last one again once they run
    out; and the paths it was asked, in order."""

    answers: list[tuple[int, Any]] = field(default_factory=lambda: [(200, HEALTHY)])
    asked: list[str] = field(default_factory=list)
    url: str = ""


def serve(host: Host) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            host.asked.append(self.path)
            status, document = host.answers[min(len(host.asked), len(host.answers)) - 1]
            body = json.dumps(document).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: Any) -> None:
            """Quiet: one line per request otherwise."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    # A short poll: shutdown() waits for the loop's next turn, at each test's end.
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    host.url = f"http://127.0.0.1:{server.server_address[1]}"
    return server


@pytest.fixture
def preview() -> Iterator[Host]:
    """The target colour's preview host."""
    host = Host()
    server = serve(host)
    yield host
    server.shutdown()
    server.server_close()


@pytest.fixture
def public() -> Iterator[Host]:
    """The public host: the split users get (here blue still answers)."""
    host = Host(answers=[(200, {**HEALTHY, "colour": "blue"})])
    server = serve(host)
    yield host
    server.shutdown()
    server.server_close()


class FakeClock:
    def __init__(self) -> None:
        self.slept: list[float] = []

    def now(self) -> datetime:
        return WINDOW.end + timedelta(seconds=sum(self.slept))

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


def check(**settings: Any) -> SyntheticCheck:
    return SyntheticCheck.model_validate({"path": "/healthz", **settings})


def judged(found: SyntheticCheck, preview: Host, public: Host, clock: FakeClock | None = None) -> Verdict:
    subject = Subject(Analysis(synthetic=(found,)), {"preview": preview.url, "public": public.url})
    (verdict,) = judge_window({"orders": subject}, WINDOW, Sources(clock=clock or FakeClock()))["orders"]
    assert verdict.provider == SYNTHETIC
    return verdict


def test_a_check_that_every_answer_passes_passes(preview: Host, public: Host) -> None:
    clock = FakeClock()
    verdict = judged(check(count=3, expect_json={"colour": "green", "build": {"tag": "1.4.2"}}), preview, public, clock)
    assert (verdict.breach, verdict.value, verdict.threshold) == (False, 0, 0)
    assert verdict.what == f"GET {preview.url}/healthz"
    assert "0 of 3 request(s) failed, threshold 0" in verdict.detail
    assert preview.asked == ["/healthz"] * 3
    assert public.asked == []
    assert clock.slept == [INTERVAL_SECONDS] * 2  # between requests, not after the last


def test_a_check_failing_on_the_preview_host_breaches(preview: Host, public: Host) -> None:
    preview.answers = [(200, HEALTHY), (503, {"error": "no healthy upstream"})]
    verdict = judged(check(count=3), preview, public)
    assert (verdict.breach, verdict.value) == (True, 2)
    assert "2 of 3 request(s) failed" in verdict.detail
    assert "HTTP 503, not 200" in verdict.detail


def test_an_answer_without_the_expected_json_breaches(preview: Host, public: Host) -> None:
    verdict = judged(check(count=1, expect_json={"build": {"tag": "1.5.0"}}), preview, public)
    assert verdict.breach is True
    assert 'does not hold {"build": {"tag": "1.5.0"}}' in verdict.detail


def test_the_public_host_is_asked_when_the_check_says_so(preview: Host, public: Host) -> None:
    verdict = judged(check(host="public", count=2, expect_json={"colour": "green"}), preview, public)
    assert (verdict.breach, public.asked, preview.asked) == (True, ["/healthz"] * 2, [])
    assert verdict.what == f"GET {public.url}/healthz"


def test_a_host_that_does_not_answer_breaches(public: Host) -> None:
    nobody = Host(url=f"http://127.0.0.1:{free_port()}")  # nothing listens there
    verdict = judged(check(count=2), nobody, public)
    assert (verdict.breach, verdict.value) == (True, 2)
    assert "no answer" in verdict.detail


def test_a_host_that_answers_no_http_breaches(public: Host) -> None:
    """A server that speaks something else (http.client's BadStatusLine, which is no OSError) fails the request, it
    does not stop the shift."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()

        def babble() -> None:
            for _ in range(2):
                connection, _ = listener.accept()
                with connection:
                    connection.recv(1024)
                    connection.sendall(b"SSH-2.0-OpenSSH_9.2\r\n")

        thread = threading.Thread(target=babble, daemon=True)
        thread.start()
        other = Host(url=f"http://127.0.0.1:{listener.getsockname()[1]}")
        verdict = judged(check(count=2), other, public)
        thread.join(timeout=10)
    assert (verdict.breach, verdict.value) == (True, 2)
    assert "not an HTTP answer" in verdict.detail


def test_another_status_can_be_the_expected_one(preview: Host, public: Host) -> None:
    preview.answers = [(401, {"error": "sign in"})]
    assert judged(check(count=1, expect_status=401), preview, public).breach is False


def test_one_application_s_failing_preview_breaches_that_application_only(preview: Host, public: Host) -> None:
    """A window of three applications: one checked and failing, one checked and passing, one with nothing to check."""
    broken = Host(answers=[(500, {"error": "boom"})])
    server = serve(broken)
    try:
        subjects = {
            "orders": Subject(Analysis(synthetic=(check(count=1),)), {"preview": broken.url, "public": public.url}),
            "billing": Subject(Analysis(synthetic=(check(count=1),)), {"preview": preview.url, "public": public.url}),
            "search": Subject(Analysis(), {"preview": preview.url, "public": public.url}),
        }
        verdicts = judge_window(subjects, WINDOW, Sources(clock=FakeClock()))
    finally:
        server.shutdown()
        server.server_close()
    assert {app: [v.breach for v in found] for app, found in verdicts.items()} == {
        "orders": [True],
        "billing": [False],
        "search": [],
    }
    assert list(breaches(verdicts)) == ["orders"]


@pytest.mark.parametrize(
    ("got", "expected", "held"),
    [
        ({"a": 1, "b": {"c": "x", "d": 2}}, {"b": {"c": "x"}}, True),  # a subset, nested
        ({"a": 1}, {"a": 1, "b": 2}, False),  # a field missing
        ({"a": {"c": "y"}}, {"a": {"c": "x"}}, False),  # a nested value differs
        ({"a": 1}, {"a": True}, False),  # true is not 1, though Python says they are equal
        ({"a": [1, 2]}, {"a": [1, 2]}, True),  # a list matches whole
        ({"a": "1"}, {"a": {"b": 1}}, False),  # an object expected where a string is
    ],
)
def test_the_expected_json_is_a_subset_of_the_answer(got: Any, expected: Any, held: bool) -> None:
    assert holds(got, expected) is held
