"""The shift judging each window with every application's analysis (`traffic.shift.analysis`,
`applications.<name>.analysis`) besides the load balancer's gate, against the emulated world of tests/test_shift.py
(moto in-process, the fake clock, green's preview hosts served locally): an application's alarm in ALARM during a step
rolls every application back, naming the alarm, its value and threshold; a synthetic check failing on green's preview
host does too; the bake window holds the final split under the traffic lock (its lease renewed) and rolls back like a
step; --dry-run says what would be judged and asks CloudWatch for no alarm. And a Prometheus query the shift asks a
real Prometheus server (tests/support/prometheus_server.py) scraping this module's exporter: a breaching series rolls the
step back, a healthy one lets the shift finish, the server stopped is a breach (the out-of-process tier: the server's
start and scrapes take seconds)."""

from __future__ import annotations

import http.client
import io
import socket
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from model.config import ShiftConfig
from model.loading import load_config
from model.routes import lock_path
from tests.support.alarm_history import alarm_state, metric_alarm, teach_alarm_history
from tests.support.configs import THREE_APPLICATIONS, write_project
from tests.support.emulated_aws import PROJECT, ZONE_NAME, Emulated, FakeClock
from tests.support.fake_kubernetes import FakeKubernetes
from tests.support.preview_server import PreviewServer, serving_green
from tests.support.prometheus_server import METRIC, Exporter, Scraped, scraped
from tests.test_shift import World, all_at, clients_of, config_of, green_ready, green_runs  # noqa: F401 (fixtures)
from tools.analysis.http import Answer as HttpAnswer
from tools.analysis.http import Opener, urllib_opener
from tools.readiness import Readiness
from tools.shift import ShiftError
from tools.shift.command import main, planned_seconds
from tools.shift.run import Shift
from tools.traffic_lock import LEASE_SECONDS, TrafficLock

# Whole shifts against moto in this process: the emulated tier (pyproject.toml's markers), beside the unit tier.
pytestmark = pytest.mark.emulated

ALARM = "orders-5xx"
ORDERS_ALARM = {"alarms": [{"name": ALARM}]}
ORDERS_ERROR_RATIO = {
    "name": "error_ratio",
    "query": Exporter(METRIC).series("orders"),
    "threshold": 0.05,
}
# Longer than the lease: a bake that did not renew it would let the lock go stale under the shift.
BAKE_SECONDS = 2 * LEASE_SECONDS


@pytest.fixture(scope="module")
def preview() -> Iterator[PreviewServer]:
    server = serving_green(ZONE_NAME)
    yield server
    server.close()


def through(server: PreviewServer) -> Opener:
    """The analysis's HTTP opener reaching every `*.<zone>` host at the local preview server, with its name for SNI,
    the certificate check and the Host header (as the shared load balancer would be reached); any other host (a
    Prometheus server of the test's) as the shift reaches it."""

    class Pinned(http.client.HTTPSConnection):
        def connect(self) -> None:
            raw = socket.create_connection(("127.0.0.1", server.port), self.timeout)
            self.sock = server.trust.wrap_socket(raw, server_hostname=self.host)

    def opener(url: str, *, headers: Mapping[str, str], timeout: float) -> HttpAnswer:
        parts = urlsplit(url)
        if not (parts.hostname or "").endswith(f".{ZONE_NAME}"):
            return urllib_opener(url, headers=headers, timeout=timeout)
        connection = Pinned(parts.hostname or "", server.port, timeout=timeout, context=server.trust)
        try:
            connection.request("GET", parts.path or "/", headers=dict(headers))
            response = connection.getresponse()
            return HttpAnswer(response.status, response.read())
        finally:
            connection.close()

    return opener


def with_analysis(**by_app: dict[str, Any]) -> dict[str, Any]:
    """THREE_APPLICATIONS, the named ones with an `analysis` of their own."""
    return {name: {**app, **({"analysis": by_app[name]} if name in by_app else {})} for name, app in THREE_APPLICATIONS.items()}


ShiftIn = Callable[..., tuple[Shift, World, io.StringIO]]


@pytest.fixture
def shift_in(tmp_path: Path, green_ready: FakeKubernetes, preview: PreviewServer, monkeypatch: pytest.MonkeyPatch) -> ShiftIn:  # noqa: F811
    """A shift of blue 100 / green 0 to green on the emulated AWS (tests/test_shift.py's world), CloudWatch taught the
    alarm history (tests/support/alarm_history.py), the analysis's HTTP through the local preview server."""
    teach_alarm_history(monkeypatch)

    def make(
        aws: Emulated, *, applications: dict[str, Any] = THREE_APPLICATIONS, clock: FakeClock | None = None, **shift: Any
    ) -> tuple[Shift, World, io.StringIO]:
        path = write_project(tmp_path, config_of(applications, **shift))
        config = load_config(path)
        clock, out = clock or FakeClock(), io.StringIO()
        world = World(aws, clock, config_path=path)
        clients = clients_of(aws, green_ready, eks=world.insights)
        checks = Readiness(config, clients, clock, prober=preview.prober(), out=lambda line: print(line, file=out))
        lock = TrafficLock(clients.ssm, clients.sts, PROJECT, "python -m tools.shift --to green", clock)
        shift_ = Shift(config, config.traffic.shift, clients, clock, out, checks, lock, opener=through(preview))
        return shift_, world, out

    return make


@pytest.fixture
def deployed(emulated: Emulated, percentiles: None) -> Emulated:
    """blue serves, green is deployed beside it at 0; orders' team has its 5xx alarm, OK."""
    for colour, version in (("blue", "1.35"), ("green", "1.36")):
        emulated.deploy_cluster(colour, version)
    emulated.deploy_traffic({name: app["host"] for name, app in THREE_APPLICATIONS.items()}, {"blue": 100, "green": 0})
    emulated.register_pods("blue")
    emulated.register_pods("green")
    metric_alarm(emulated.cloudwatch, ALARM)
    alarm_state(emulated.cloudwatch, ALARM, "OK")
    return emulated


def when(world: World, condition: Callable[[], bool], then: Callable[[], None]) -> None:
    """then, once, on the first sleep of the shift after which condition holds (the world moving while it waits)."""
    done: list[bool] = []

    def hook(_: datetime, __: datetime) -> None:
        if not done and condition():
            done.append(True)
            then()

    world.clock.on_sleep.append(hook)


def test_an_application_s_alarm_in_alarm_during_a_step_rolls_every_application_back(
    shift_in: ShiftIn, deployed: Emulated
) -> None:
    shift, world, out = shift_in(deployed, step=50, applications=with_analysis(orders=ORDERS_ALARM))
    # orders' alarm fires once green carries half of the traffic (its step's window is under way).
    when(
        world,
        lambda: deployed.forwarded()["orders"].get("green") == 50,
        lambda: alarm_state(deployed.cloudwatch, ALARM, "ALARM"),
    )
    with pytest.raises(ShiftError) as failure:
        shift.run("green")
    assert str(failure.value) == (
        f"step 1/2  blue 50  green 50: orders: alarms name {ALARM}: {ALARM} in ALARM during the window (never ALARM); "
        "rolled back to blue 100  green 0"
    )
    # The report names the alarm, its value (the state found) and its threshold.
    assert f"    orders: alarms name {ALARM}: {ALARM} in ALARM during the window (never ALARM) | BREACH" in out.getvalue()
    assert deployed.forwarded() == all_at({"blue": 100, "green": 0})  # every application, not orders alone


def test_an_alarm_that_stays_ok_lets_the_shift_reach_the_end(shift_in: ShiftIn, deployed: Emulated) -> None:
    shift, _, out = shift_in(deployed, step=50, analysis=ORDERS_ALARM)  # the project's: every application's
    shift.run("green")
    assert deployed.forwarded() == all_at({"blue": 0, "green": 100})
    ok = f"alarms name {ALARM}: 1 alarm(s), none in ALARM during the window | ok"
    # Each of the 3 applications judged on it in each of the 2 steps.
    assert sum(line.endswith(ok) for line in out.getvalue().splitlines()) == 3 * 2
    assert out.getvalue().splitlines()[-1] == "done: blue 0  green 100"


def test_a_synthetic_check_failing_on_the_target_s_preview_host_rolls_back(shift_in: ShiftIn, deployed: Emulated) -> None:
    # green's orders answers readiness (release 4.2.1), but the team's check expects the release being rolled out.
    check = {"synthetic": [{"path": "/status", "count": 2, "expect_json": {"release": "4.2.2"}}]}
    shift, _, out = shift_in(deployed, step=50, applications=with_analysis(orders=check))
    with pytest.raises(ShiftError, match=r"step 1/2  blue 50  green 50: orders: synthetic GET https://orders-green\."):
        shift.run("green")
    url = f"https://orders-green.{ZONE_NAME}/status"
    assert (
        f"    orders: synthetic GET {url}: 2 of 2 request(s) failed, threshold 0 (expected HTTP 200 holding "
        '{"release": "4.2.2"}); first: the JSON answer {"colour": "green", "release": "4.2.1"} does not hold '
        '{"release": "4.2.2"} | BREACH'
    ) in out.getvalue()
    assert deployed.forwarded() == all_at({"blue": 100, "green": 0})


def test_the_bake_window_holds_the_final_split_under_the_lock_then_releases_it(shift_in: ShiftIn, deployed: Emulated) -> None:
    shift, world, out = shift_in(deployed, step=100, analysis={**ORDERS_ALARM, "bake_seconds": BAKE_SECONDS})
    seen: list[tuple[int, datetime | None]] = []

    def look() -> None:
        """The lock's parameters while baking, and whether its lease ran out (not renewed while the bake waits)."""
        held = deployed.ssm.get_parameters_by_path(Path=lock_path(PROJECT))["Parameters"]
        holder = shift.lock.holder()
        seen.append((len(held), shift.lock.stale_since(holder) if holder else world.clock.now()))

    world.clock.on_sleep.append(lambda _, __: look() if "baking" in out.getvalue() else None)
    shift.run("green")
    lines = out.getvalue().splitlines()
    assert f"baking blue 0  green 100 for {BAKE_SECONDS} s before done (the traffic lock held)" in lines
    assert seen
    assert [(held >= 1, stale) for held, stale in seen] == [(True, None)] * len(seen)
    assert world.clock.slept >= 300 + BAKE_SECONDS  # the step's window, then the bake's
    assert lines[-1] == "done: blue 0  green 100"
    assert deployed.ssm.get_parameters_by_path(Path=lock_path(PROJECT))["Parameters"] == []  # released after it


def test_a_breach_during_the_bake_window_rolls_back(shift_in: ShiftIn, deployed: Emulated) -> None:
    shift, world, out = shift_in(deployed, step=100, applications=with_analysis(orders={**ORDERS_ALARM, "bake_seconds": 120}))
    when(world, lambda: "baking" in out.getvalue(), lambda: alarm_state(deployed.cloudwatch, ALARM, "ALARM"))
    with pytest.raises(ShiftError) as failure:
        shift.run("green")
    assert str(failure.value) == (
        f"bake  blue 0  green 100: orders: alarms name {ALARM}: {ALARM} in ALARM during the window (never ALARM); "
        "rolled back to blue 100  green 0"
    )
    assert deployed.forwarded() == all_at({"blue": 100, "green": 0})
    assert deployed.ssm.get_parameters_by_path(Path=lock_path(PROJECT))["Parameters"] == []


def test_dry_run_lists_each_application_s_providers_and_asks_for_no_alarm(
    tmp_path: Path,
    deployed: Emulated,
    green_ready: FakeKubernetes,  # noqa: F811
    preview: PreviewServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    teach_alarm_history(monkeypatch)  # a call that slipped through would be answered, and counted
    teams = with_analysis(
        orders={"alarms": [{"name": ALARM}, {"prefix": "orders-"}], "bake_seconds": 300},
        catalogue={"synthetic": [{"path": "/health"}]},
    )
    path = write_project(tmp_path, config_of(teams))
    asked: list[str] = []
    # botocore's own hook: every CloudWatch operation the command sends, whatever calls it.
    deployed.cloudwatch.meta.events.register("before-call.cloudwatch", lambda model, **_: asked.append(model.name))
    argv = ["--to", "green", "--step", "50", "--dry-run", "--config", str(path)]
    assert main(argv, aws=clients_of(deployed, green_ready), prober=preview.prober(), clock=FakeClock()) == 0
    lines = capsys.readouterr().out.splitlines()
    assert f"analysis of orders: alarm name {ALARM}; alarm prefix orders-*" in lines
    assert f"analysis of catalogue: synthetic 3 x GET https://catalogue-green.{ZONE_NAME}/health (expects HTTP 200)" in lines
    assert "bake: the final split held 300 s under the traffic lock, judged like a step, before done" in lines
    assert not [line for line in lines if line.startswith("analysis of sample-app")]  # nothing configured for it
    assert {"DescribeAlarms", "DescribeAlarmHistory", "GetMetricData"} & set(asked) == set()
    assert deployed.forwarded() == all_at({"blue": 100, "green": 0})


def test_the_bake_counts_in_the_time_the_credentials_must_last() -> None:
    """A bake is one more window (aligned to a whole minute, read a minute later), nothing written: a shift whose
    credentials end before it would leave the final split unjudged and the lock behind."""
    settings = ShiftConfig()
    without = planned_seconds(settings, 2, skip_readiness=True)
    assert planned_seconds(settings, 2, skip_readiness=True, bake_seconds=90) - without == 60 + 120 + 60


# --- a real Prometheus server -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scraped]:
    with scraped(tmp_path_factory.mktemp("prometheus")) as started:
        yield started


def at_the_server_s_time() -> FakeClock:
    """The fake clock from the real now: the shift asks for its window's end, minutes of fake time ahead, and the
    server answers with its latest sample (tests/support/prometheus_server.py LOOKBACK); three hours back, it would have
    none."""
    return FakeClock(now_=datetime.now(UTC).replace(second=0, microsecond=0))


def shift_asking(shift_in: ShiftIn, deployed: Emulated, prometheus: Scraped) -> tuple[Shift, World, io.StringIO]:
    """A shift to green in one step whose orders is judged on its error ratio as the server answers it."""
    query = {**ORDERS_ERROR_RATIO, "endpoint": prometheus.server.endpoint}
    teams = with_analysis(orders={"prometheus": [query]})
    return shift_in(deployed, step=100, applications=teams, clock=at_the_server_s_time())


@pytest.mark.background
def test_a_breaching_prometheus_series_rolls_the_step_back(shift_in: ShiftIn, deployed: Emulated, prometheus: Scraped) -> None:
    prometheus.set("orders", 0.25)
    shift, _, out = shift_asking(shift_in, deployed, prometheus)
    with pytest.raises(ShiftError) as failure:
        shift.run("green")
    said = "prometheus error_ratio: 0.25 (worst of 1), threshold above 0.05"
    assert str(failure.value) == f"step 1/1  blue 0  green 100: orders: {said}; rolled back to blue 100  green 0"
    assert f"    orders: {said} | BREACH" in out.getvalue().splitlines()
    assert deployed.forwarded() == all_at({"blue": 100, "green": 0})
    assert deployed.live_weights() == {"blue": 100, "green": 0}


@pytest.mark.background
def test_a_healthy_prometheus_series_lets_the_shift_finish(shift_in: ShiftIn, deployed: Emulated, prometheus: Scraped) -> None:
    prometheus.set("orders", 0.01)
    shift, _, out = shift_asking(shift_in, deployed, prometheus)
    shift.run("green")
    lines = out.getvalue().splitlines()
    assert "    orders: prometheus error_ratio: 0.01 (worst of 1), threshold above 0.05 | ok" in lines
    assert lines[-1] == "done: blue 0  green 100"
    assert deployed.forwarded() == all_at({"blue": 0, "green": 100})


@pytest.mark.background
def test_the_prometheus_server_stopped_rolls_the_step_back(shift_in: ShiftIn, deployed: Emulated, prometheus: Scraped) -> None:
    """Last of the module's Prometheus tests: the server does not start again."""
    prometheus.set("orders", 0.0)
    prometheus.server.stop()
    shift, _, _ = shift_asking(shift_in, deployed, prometheus)
    with pytest.raises(ShiftError) as failure:
        shift.run("green")
    unreachable = f"orders: prometheus error_ratio: {prometheus.server.endpoint} did not answer ("
    assert unreachable in str(failure.value)
    assert str(failure.value).endswith("a breach; rolled back to blue 100  green 0")
    assert deployed.forwarded() == all_at({"blue": 100, "green": 0})
