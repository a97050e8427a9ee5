"""The traffic shift: its deploys, the weights it writes, and whole shifts against moto (Route53, ELBv2,
CloudWatch, EKS) with Terraform replaced by a fake deployer (tests/support/fake_deployer.py) and what ExternalDNS
would then do; what a step may apply (weights only) and the changes pending before the first; its command line."""

from __future__ import annotations

import copy
import io
import json
import subprocess
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from tools.shift.deploy import PLAN_FILE, CdktfDeployer

from model.loading import ConfigError, config_from_dict, load_config, write_weights
from model.platform import CHILDREN, COMPONENTS
from model.workloads import PARENT_APPLICATION
from tests.support.charts import release_applications
from tests.support.configs import named_release, write_project
from tests.support.emulated_aws import (
    EXPIRED,
    REGION,
    ZONE_NAME,
    Emulated,
    FakeClock,
    WithInsights,
    aws_error,
    base_config,
    insight,
    minutes,
)
from tests.support.fake_deployer import APP_OF_APPS, FakeDeployer, image_tag_change, weight_changes
from tests.support.fake_kubernetes import FakeKubernetes
from tests.support.preview_server import Answer, PreviewServer
from tools.aws import Aws, load_balancer_name
from tools.readiness import Readiness, release
from tools.shift import ShiftError, UnsafeShiftError
from tools.shift.command import main
from tools.shift.metrics import METRICS_DELAY_SECONDS
from tools.shift.run import Shift

# --- deploying: the plan judged is the plan applied ------------------------------------------


class Recorder:
    """Stands in for the cdktf CLI and Terraform: records each command, prints a plan for `show -json`."""

    def __init__(self, document: dict[str, object], failing: str = "") -> None:
        self.commands: list[tuple[str, ...]] = []
        self.document, self.failing = document, failing

    def cdktf(self, arguments: Sequence[str], cwd: Path) -> int:
        self.commands.append(("cdktf", *arguments))
        for colour in ("blue", "green"):
            (cwd / "cdktf.out" / "stacks" / colour).mkdir(parents=True, exist_ok=True)
        return 0

    def run(self, command: list[str], *, cwd: Path, **_: object) -> subprocess.CompletedProcess[str]:
        self.commands.append((Path(cwd).name, *command))
        if command[1] == "plan":
            (Path(cwd) / PLAN_FILE).write_text("saved plan")
        failed = command[1] == self.failing
        stdout = json.dumps(self.document) if command[1] == "show" else ""
        return subprocess.CompletedProcess(command, 1 if failed else 0, stdout, "Error: cluster unreachable\n" if failed else "")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "cdktf.json").write_text(json.dumps({"language": "python"}))
    return tmp_path


def test_the_real_deployer_applies_the_very_plan_file_it_showed(project: Path) -> None:
    """`cdktf synth`, then in the colour's stack: init (once a run), plan to a file, show that file, apply that file:
    what Terraform applies is exactly what the shift judged, not a fresh plan."""
    document: dict[str, object] = {"resource_changes": weight_changes("blue", 100, 80)}
    recorder = Recorder(document)
    deployer = CdktfDeployer(project, cdktf=recorder.cdktf, run=recorder.run)
    deployer.synth()
    first = deployer.plan("blue")
    deployer.apply(first)
    second = deployer.plan("blue")
    assert (first.colour, first.document, first.file) == ("blue", document, project / "cdktf.out/stacks/blue" / PLAN_FILE)
    assert second.file == first.file
    assert recorder.commands == [
        ("cdktf", "synth"),
        ("blue", "terraform", "init", "-input=false", "-no-color"),
        ("blue", "terraform", "plan", "-input=false", "-no-color", f"-out={PLAN_FILE}"),
        ("blue", "terraform", "show", "-json", PLAN_FILE),
        ("blue", "terraform", "apply", "-input=false", PLAN_FILE),
        ("blue", "terraform", "plan", "-input=false", "-no-color", f"-out={PLAN_FILE}"),
        ("blue", "terraform", "show", "-json", PLAN_FILE),
    ]


def test_a_failed_terraform_command_says_which_and_what_it_printed(project: Path) -> None:
    recorder = Recorder({}, failing="plan")
    deployer = CdktfDeployer(project, cdktf=recorder.cdktf, run=recorder.run)
    deployer.synth()
    with pytest.raises(ShiftError) as failure:
        deployer.plan("green")
    assert str(failure.value) == (
        f"`terraform plan -input=false -no-color -out={PLAN_FILE}` in {project / 'cdktf.out/stacks/green'} exited 1:\n"
        "Error: cluster unreachable"
    )


# --- writing the weights -------------------------------------------------------------------


@pytest.mark.parametrize("in_file", [False, True])
def test_weights_are_written_where_the_config_lives_and_nothing_else_changes(tmp_path: Path, in_file: bool) -> None:
    config = base_config(blue={"kubernetes_version": "1.35", "weight": 100}, green={"kubernetes_version": "1.36"})
    config["tags"] = {"Team": "platform"}
    path = write_project(tmp_path, config, in_file=in_file)
    write_weights(path, {"blue": 40, "green": 60})
    loaded = load_config(path)
    assert loaded.weights == {"blue": 40, "green": 60}
    assert dict(loaded.tags) == {"Team": "platform"}
    written = json.loads((tmp_path / ("config.json" if in_file else "cdktf.json")).read_text())
    clusters = written["clusters"] if in_file else written["context"]["config"]["clusters"]
    assert clusters["green"] == {**named_release(), "kubernetes_version": "1.36", "weight": 60}


def test_weights_written_into_a_config_without_clusters_keep_the_default_colours_releases(tmp_path: Path) -> None:
    path = write_project(tmp_path, {"dns": {"parent_zone": "example.com"}})
    write_weights(path, {"blue": 80})
    written = json.loads(path.read_text())["context"]["config"]["clusters"]
    assert written == {
        "blue": {"kubernetes_version": "1.35", "weight": 80, **named_release()},
        "green": {"kubernetes_version": "1.36", "weight": 0},
    }


def test_weights_that_would_make_a_bad_config_are_not_written(tmp_path: Path) -> None:
    path = write_project(tmp_path, base_config(blue={"kubernetes_version": "1.34", "weight": 100}))
    before = path.read_text()
    with pytest.raises(ConfigError, match="at least one colour needs a weight above 0"):
        write_weights(path, {"blue": 0})
    with pytest.raises(ConfigError, match=r"clusters\.purple: no such colour"):
        write_weights(path, {"purple": 10})
    assert path.read_text() == before


# --- whole shifts against moto -------------------------------------------------------------


class World:
    """blue serves, green is deployed with weight 0; deploys reach Route53 a little later, as
    ExternalDNS would make them; each minute the target's ALB gets traffic by its weight."""

    def __init__(self, aws: Emulated, clock: FakeClock, config_path: Path, *, target: str = "green") -> None:
        self.aws, self.clock, self.config_path, self.target = aws, clock, config_path, target
        # Terraform: each colour's plan holds its weight's change (and what a test leaves pending beside it).
        self.deployer = FakeDeployer(config_path, load_config(config_path).weights, on_apply=[self.applied])
        self.pending: dict[str, int] = {}
        self.dns_delay = 45.0  # seconds between a deploy and ExternalDNS's update
        self.since_deploy = 0.0
        self.error_ratio_at: dict[int, float] = {}  # target weight -> 5xx ratio its traffic sees
        self.p99_at: dict[int, float] = {}
        self.requests_per_weight = 10  # per minute, on the target's ALB
        self.insights = WithInsights(aws.eks)  # EKS insights, which moto does not serve
        self.serving: dict[str, int] | None = None
        clock.on_sleep.append(self.tick)

    def applied(self, colour: str, weight: int) -> None:
        self.pending[colour] = weight
        self.since_deploy = 0.0

    def tick(self, before: datetime, after: datetime) -> None:
        self.since_deploy += (after - before).total_seconds()
        if self.serving is None:  # what Route53 serves, read once: from then on only this world writes it
            self.serving = self.aws.weights()
        if self.pending and self.since_deploy >= self.dns_delay:
            for colour, weight in self.pending.items():
                self.aws.write_records(colour, weight)
            self.serving.update(self.pending)
            self.pending = {}
        weight = self.serving[self.target]
        for minute in minutes(before, after):
            requests = self.requests_per_weight * weight
            errors = round(requests * self.error_ratio_at.get(weight, 0.0))
            self.aws.put_traffic(self.target, minute, requests, errors, self.p99_at.get(weight, 0.3))


@pytest.fixture
def deployed(emulated: Emulated, percentiles: None) -> Emulated:
    for colour, weight, version in (("blue", 100, "1.35"), ("green", 0, "1.36")):
        emulated.deploy_cluster(colour, version)
        emulated.make_load_balancer(colour)
        emulated.write_records(colour, weight)
    return emulated


ShiftIn = Callable[..., tuple[Shift, World, io.StringIO]]
# What the fake Argo CD holds (tests/conftest.py): the App of Apps and every child of the registry.
APPLICATIONS = sorted([PARENT_APPLICATION, *(c.name for c in CHILDREN)])


@pytest.fixture(scope="module")
def preview() -> Iterator[PreviewServer]:
    """green's preview host, answering as green's pods do (tests/support/preview_server.py)."""
    server = PreviewServer(ZONE_NAME, answers={f"app-green.{ZONE_NAME}": Answer("green", named_release()["image_tag"])})
    yield server
    server.close()


@pytest.fixture(scope="module")
def green_runs() -> list[dict[str, Any]]:
    """green's release as its Argo CD holds it: the Applications the charts render from green's facts (once)."""
    config = base_config(blue={"kubernetes_version": "1.35", "weight": 100}, green={"kubernetes_version": "1.36"})
    return release_applications(config_from_dict(config), "green")


@pytest.fixture
def green_ready(argocd: FakeKubernetes, green_runs: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> FakeKubernetes:
    """green's Argo CD runs its release; its children are read from the checkout's registry (tests/test_readiness.py
    reads them at a revision)."""
    argocd.runs(copy.deepcopy(green_runs))
    monkeypatch.setattr(release, "registry_at", lambda _: COMPONENTS)
    return argocd


@pytest.fixture
def shift_in(tmp_path: Path, green_ready: FakeKubernetes, preview: PreviewServer) -> ShiftIn:
    """A shift of blue 100 / green 0 to green on the emulated AWS, whose target is ready unless a test says otherwise."""
    argocd = green_ready

    def make(aws: Emulated, *, step: int = 20, skip_readiness: bool = False, **settings: Any) -> tuple[Shift, World, io.StringIO]:
        config = base_config(
            blue={"kubernetes_version": "1.35", "weight": 100}, green={"kubernetes_version": "1.36", "weight": 0}
        )
        config["traffic"] = {
            "shift": {"step": step, "interval_seconds": 300, "max_5xx_ratio": 0.02, "max_p99_seconds": 1.0, **settings}
        }
        path = write_project(tmp_path, config)
        loaded = load_config(path)
        clock, out = FakeClock(), io.StringIO()
        world = World(aws, clock, path)
        clients = Aws(
            REGION,
            route53=aws.route53,
            elbv2=aws.elbv2,
            cloudwatch=aws.cloudwatch,
            eks=world.insights,
            kube=lambda _: argocd.api(),
        )
        checks = Readiness(loaded, clients, clock, prober=preview.prober(), out=lambda line: print(line, file=out))
        shift = Shift(path, loaded, loaded.traffic.shift, clients, world.deployer, clock, out, checks, skip_readiness)
        return shift, world, out

    return make


def clients_of(aws: Emulated, argocd: FakeKubernetes) -> Aws:
    """The command's AWS clients on the emulator, with EKS insights and the fake Argo CD."""
    return Aws(
        REGION,
        route53=aws.route53,
        elbv2=aws.elbv2,
        cloudwatch=aws.cloudwatch,
        eks=WithInsights(aws.eks),
        kube=lambda _: argocd.api(),
    )


def shift_green(
    path: Path, deployer: FakeDeployer, aws: Emulated, argocd: FakeKubernetes, preview: PreviewServer, *options: str
) -> int:
    """`python -m tools.shift --to green <options>` on the emulated world, through the command's entry point."""
    argv = ["--to", "green", *options, "--config", str(path)]
    return main(argv, aws=clients_of(aws, argocd), deployer=deployer, prober=preview.prober())


def header(out: io.StringIO) -> str:
    (line,) = [line for line in out.getvalue().splitlines() if line.startswith("shifting to ")]
    return line


def configured_weights(shift: Shift) -> dict[str, int]:
    return load_config(shift.config_path).weights


def test_a_healthy_shift_reaches_all_traffic_in_the_planned_steps(shift_in: ShiftIn, deployed: Emulated) -> None:
    shift, world, out = shift_in(deployed, step=25)
    shift.run("green")
    assert deployed.weights() == {"blue": 0, "green": 100}
    assert configured_weights(shift) == {"blue": 0, "green": 100}
    # The colour that gains weight goes first: between the two applies the total grows, never falls to 0.
    assert world.deployer.applied_colours() == ["green", "blue"] * 4
    lines = [line for line in out.getvalue().splitlines() if line.startswith("step ")]
    assert [line.split("|")[0].split(None, 2)[2].strip() for line in lines] == [
        "blue 75  green 25",
        "blue 50  green 50",
        "blue 25  green 75",
        "blue 0  green 100",
    ]
    # Each progress line shows what the gate saw: green's requests grow with its weight.
    assert "requests 1250  5xx 0.00% (0)  p99 0.300 s | ok | ~" in lines[0]
    assert lines[-1].endswith("~0m left")
    assert out.getvalue().splitlines()[-1] == "done: blue 0  green 100"


def test_each_step_waits_for_route53_then_the_ttl_then_the_window(shift_in: ShiftIn, deployed: Emulated) -> None:
    shift, world, _ = shift_in(deployed, step=100)
    world.dns_delay = 95  # ExternalDNS takes a while: the shift polls Route53 until it changes
    shift.run("green")
    polls = 10 * 10  # 95 s of polling in 10 s steps
    # Then the alias TTL (60 s), up to the next whole minute (20 s), the window, the metrics' delay.
    assert world.clock.slept == pytest.approx(polls + 60 + 20 + 300 + METRICS_DELAY_SECONDS)


def test_a_5xx_spike_rolls_back_to_the_previous_weights_and_says_why(shift_in: ShiftIn, deployed: Emulated) -> None:
    shift, world, out = shift_in(deployed, step=20)
    world.error_ratio_at[60] = 0.075  # green breaks once it carries 60
    with pytest.raises(ShiftError) as failure:
        shift.run("green")
    assert str(failure.value) == (
        "step 3/5  blue 40  green 60: 5xx ratio 7.50% (225 of 3000 requests) above traffic.shift.max_5xx_ratio 2.00%; "
        "rolled back to blue 60  green 40"
    )
    assert deployed.weights() == {"blue": 60, "green": 40}
    assert configured_weights(shift) == {"blue": 60, "green": 40}
    assert "GATE TRIPPED" in out.getvalue()
    assert world.deployer.applied_colours()[-2:] == ["blue", "green"]  # the roll-back gives blue its weight back first


def test_a_target_that_gets_no_requests_does_not_pass(shift_in: ShiftIn, deployed: Emulated) -> None:
    shift, world, out = shift_in(deployed, step=50)
    world.requests_per_weight = 0  # nothing reaches green: no evidence it works
    with pytest.raises(ShiftError, match=r"step 1/2  blue 50  green 50: 0 requests in the window, fewer than"):
        shift.run("green")
    assert deployed.weights() == {"blue": 100, "green": 0}
    assert "at least 1 request(s)" in header(out)


def test_quiet_windows_pass_when_asked_and_every_line_says_so(shift_in: ShiftIn, deployed: Emulated) -> None:
    shift, world, out = shift_in(deployed, step=50, allow_idle=True)
    world.requests_per_weight = 0
    shift.run("green")
    assert deployed.weights() == {"blue": 0, "green": 100}
    lines = out.getvalue().splitlines()
    assert "a window with fewer than 1 request(s) PASSES (idle allowed)" in header(out)
    assert [line.split(" | ")[2] for line in lines if line.startswith("step ")] == ["ok, IDLE (allowed)"] * 2


def test_slow_responses_roll_back_too(shift_in: ShiftIn, deployed: Emulated) -> None:
    shift, world, _ = shift_in(deployed, step=50)
    world.p99_at[50] = 2.5
    with pytest.raises(ShiftError, match=r"step 1/2  blue 50  green 50: p99 response time 2\.500 s above"):
        shift.run("green")
    assert deployed.weights() == {"blue": 100, "green": 0}


def test_a_failed_deploy_rolls_back(shift_in: ShiftIn, deployed: Emulated) -> None:
    shift, world, _ = shift_in(deployed)
    world.deployer.failure, world.deployer.partial = "`terraform apply` exited 1", True
    with pytest.raises(ShiftError, match="step 1/5  blue 80  green 20: `terraform apply` exited 1; the roll-back to blue 100"):
        shift.run("green")
    assert configured_weights(shift) == {"blue": 100, "green": 0}


def test_the_command_exits_1_with_the_reason_when_a_step_fails(
    tmp_path: Path, deployed: Emulated, green_ready: FakeKubernetes, preview: PreviewServer, capsys: pytest.CaptureFixture[str]
) -> None:
    config = base_config(blue={"kubernetes_version": "1.35", "weight": 100}, green={"kubernetes_version": "1.36"})
    path = write_project(tmp_path, config)

    broken = FakeDeployer(path, {"blue": 100, "green": 0}, failure="no", partial=True)
    assert shift_green(path, broken, deployed, green_ready, preview) == 1
    # The shift names the step, what failed, that it tried to restore the weights and what to run now.
    assert capsys.readouterr().err == (
        "failed: step 1/5  blue 80  green 20: no; the roll-back to blue 100  green 0 failed too: no. The config holds "
        "blue 100  green 0: run `cdktf deploy blue green` and check the records\n"
    )
    # The colour gaining weight first; it failed part-way, so the roll-back has green's weight to restore, and
    # none of blue's (its apply never ran).
    assert broken.tried == ["green", "green"]
    assert load_config(path).weights == {"blue": 100, "green": 0}


def test_a_login_that_expires_mid_shift_fails_the_step_and_rolls_back_in_one_line(shift_in: ShiftIn, deployed: Emulated) -> None:
    """AWS stops answering once weight has moved (CloudWatch, reading the window): the step fails and is rolled back,
    and the reason is AWS's, in one line (exit 1 through the command, tools/cli.py), never a traceback."""
    shift, _, _ = shift_in(deployed)

    class Expired:
        def get_metric_data(self, **_: Any) -> Any:
            raise aws_error(EXPIRED[0], "GetMetricData", EXPIRED[1])

    shift.aws._clients["cloudwatch"] = Expired()
    with pytest.raises(ShiftError) as failed:
        shift.run("green")
    assert str(failed.value) == (
        "step 1/5  blue 80  green 20: cannot read the window's metrics: the AWS credentials have expired (GetMetricData: "
        "ExpiredToken): log in to the account (`aws sso login`, or set AWS_PROFILE or the AWS_* keys) and run the command "
        "again; rolled back to blue 100  green 0"
    )
    assert configured_weights(shift) == {"blue": 100, "green": 0}
    assert deployed.weights() == {"blue": 100, "green": 0}


def test_route53_that_never_changes_times_out_and_rolls_back(shift_in: ShiftIn, deployed: Emulated) -> None:
    shift, world, _ = shift_in(deployed, dns_timeout_seconds=120)
    world.dns_delay = 10_000
    with pytest.raises(ShiftError, match=r"after 120 s Route53 still serves blue 100 \(want 80\), green 0 \(want 20\)"):
        shift.run("green")
    assert configured_weights(shift) == {"blue": 100, "green": 0}


def assert_refused(shift: Shift, world: World, message: str) -> None:
    """Refused before anything changed: nothing applied, the config as it was."""
    before = shift.config_path.read_text()
    with pytest.raises(UnsafeShiftError, match=message):
        shift.run("green")
    assert world.deployer.applied == []
    assert shift.config_path.read_text() == before


def test_shifting_to_an_undeployed_colour_is_refused(shift_in: ShiftIn, emulated: Emulated) -> None:
    emulated.deploy_cluster("blue")
    emulated.make_load_balancer("blue")
    emulated.write_records("blue", 100)
    shift, world, _ = shift_in(emulated)
    assert_refused(shift, world, r"green is not deployed: no EKS cluster eks-bg-green \(run `cdktf deploy green` first\)")


def test_shifting_to_a_colour_without_its_weighted_record_is_refused(shift_in: ShiftIn, emulated: Emulated) -> None:
    for colour in ("blue", "green"):
        emulated.deploy_cluster(colour)
        emulated.make_load_balancer(colour)
    emulated.write_records("blue", 100)
    shift, world, _ = shift_in(emulated)
    assert_refused(shift, world, r"Route53 has no weighted record for app\.eks\.example\.com with set identifier green")


def test_weights_that_differ_from_what_route53_serves_are_refused(shift_in: ShiftIn, deployed: Emulated) -> None:
    deployed.write_records("green", 50)
    shift, world, _ = shift_in(deployed)
    assert_refused(shift, world, "Route53 serves green 50 but the config says green 0: deploy the config first")


def test_the_command_refuses_bad_requests_before_touching_aws(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = base_config(blue={"kubernetes_version": "1.35", "weight": 100}, green={"kubernetes_version": "1.36"})
    path = write_project(tmp_path, config)
    unreachable = Aws(REGION, route53=None, elbv2=None, ec2=None, eks=None, cloudwatch=None)  # any AWS call fails loudly
    assert main(["--to", "green", "--step", "0", "--config", str(path)], aws=unreachable) == 2
    assert "refused: --step: 0 is not allowed; use 1-255" in capsys.readouterr().err
    assert main(["--to", "green", "--interval", "30", "--config", str(path)], aws=unreachable) == 2
    assert "refused: --interval: 30 is not allowed; use at least 60 s" in capsys.readouterr().err
    assert main(["--to", "purple", "--config", str(path)], aws=unreachable) == 2
    assert "--to: 'purple' is not a configured colour" in capsys.readouterr().err


@pytest.mark.parametrize("dry_run", [False, True])
def test_a_shift_to_a_colour_that_inherits_part_of_its_release_is_refused_before_any_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], dry_run: bool
) -> None:
    """Its first step would give weight to a colour whose release the project defaults decide: the config refuses
    that (model/rules.py), so the shift refuses it up front, not after moving the serving colour's weight."""
    config = base_config(blue={"kubernetes_version": "1.35", "weight": 100}, green={"kubernetes_version": "1.36"})
    del config["clusters"]["green"]["image_tag"]
    path = write_project(tmp_path, config)
    before = path.read_text()
    deployer = FakeDeployer(path, {"blue": 100, "green": 0})
    unreachable = Aws(REGION, route53=None, elbv2=None, ec2=None, eks=None, cloudwatch=None)
    argv = ["--to", "green", "--step", "40", "--config", str(path)] + (["--dry-run"] if dry_run else [])
    assert main(argv, aws=unreachable, deployer=deployer) == 2
    err = capsys.readouterr().err
    assert "refused: the config would refuse the weights blue 60  green 40 of this shift; nothing was changed" in err
    assert 'clusters.green: {"image_tag": "0.1.0"} is not allowed; green serves traffic (weight 40)' in err
    assert (deployer.applied, path.read_text()) == ([], before)


def test_dry_run_prints_the_plan_and_the_readiness_report_and_changes_nothing(
    tmp_path: Path, deployed: Emulated, green_ready: FakeKubernetes, preview: PreviewServer, capsys: pytest.CaptureFixture[str]
) -> None:
    config = base_config(blue={"kubernetes_version": "1.35", "weight": 100}, green={"kubernetes_version": "1.36"})
    path = write_project(tmp_path, config)
    before = path.read_text()
    deployer = FakeDeployer(path, {"blue": 100, "green": 0})
    assert shift_green(path, deployer, deployed, green_ready, preview, "--step", "40", "--dry-run") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:4] == [
        "now      blue 100  green 0",
        "step 1/3 blue 60  green 40",
        "step 2/3 blue 20  green 80",
        "step 3/3 blue 0  green 100",
    ]
    report = lines[lines.index("readiness of green:") + 1 : lines.index(PENDING_NONE)]
    assert len([line for line in report if line.startswith("  ok       ")]) == 5 + len(CHILDREN)
    assert lines[-1] == "dry run: green is ready and nothing is pending; the shift would start with step 1"
    assert (path.read_text(), deployer.applied, deployed.weights()) == (before, [], {"blue": 100, "green": 0})


def test_a_dry_run_of_a_colour_that_is_not_ready_prints_every_line_and_refuses(
    tmp_path: Path, deployed: Emulated, green_ready: FakeKubernetes, preview: PreviewServer, capsys: pytest.CaptureFixture[str]
) -> None:
    green_ready.remove_application("external-dns")
    path = write_project(
        tmp_path, base_config(blue={"kubernetes_version": "1.35", "weight": 100}, green={"kubernetes_version": "1.36"})
    )
    deployer = FakeDeployer(path, {"blue": 100, "green": 0})
    assert shift_green(path, deployer, deployed, green_ready, preview, "--dry-run", "--allow-idle") == 2
    printed = capsys.readouterr()
    lines = printed.out.splitlines()
    assert "gate: 5xx <= 1.00%, p99 <= 1.000 s, a window with fewer than 1 request(s) PASSES (idle allowed)" in lines
    report = lines[lines.index("readiness of green:") + 1 : lines.index(PENDING_NONE)]
    assert [line for line in report if line.startswith("  MISSING")] == [
        "  MISSING  Argo CD external-dns: missing from namespace argocd (green's release at main defines it, at chart "
        f"{named_release()['platform']['external_dns']})"
    ]
    assert printed.err.startswith("refused: green has not proven itself ready for traffic: Argo CD external-dns: missing")
    assert deployer.applied == []


# --- readiness: traffic moves only to a colour that has proven itself ---------------------------


def test_a_ready_target_is_reported_check_by_check_before_the_first_step(shift_in: ShiftIn, deployed: Emulated) -> None:
    shift, world, out = shift_in(deployed, step=100)
    world.insights.insights["eks-bg-green"] = [insight("Deprecated APIs removed in Kubernetes v1.36", "PASSING")]
    shift.run("green")
    lines = out.getvalue().splitlines()
    report = lines[lines.index("readiness of green:") + 1 : lines.index(PENDING_NONE)]
    checks = [line for line in report if not line.startswith("  ...")]  # progress while it waits
    # The cluster, the insights, the parent and each child, the load balancer, the preview host: every one ok.
    assert len(checks) == 5 + len(CHILDREN)
    assert all(line.startswith("  ok       ") for line in checks), checks
    assert checks[-2] == (
        f"  ok       load balancer {load_balancer_name(deployed.footprints['green'].alb_arn)}: every target group (1) "
        "has healthy targets"
    )
    assert checks[-1].startswith(f"  ok       https://app-green.{ZONE_NAME}/probe: green answered through DNS")
    assert deployed.weights() == {"blue": 0, "green": 100}


PENDING_NONE = "pending changes at the current weights (blue 100  green 0): none in blue, green"


def test_a_target_that_has_not_proven_itself_gets_no_weight_and_every_gap_is_named(
    shift_in: ShiftIn, deployed: Emulated, argocd: FakeKubernetes
) -> None:
    shift, world, out = shift_in(deployed)
    world.insights.insights["eks-bg-green"] = [insight("Kubelet version skew", "ERROR")]
    dns = argocd.application_source("external-dns")
    argocd.add_application("external-dns", wave=0, source=dns, sync="OutOfSync", health="Healthy")
    footprint = deployed.footprints["green"]
    deployed.elbv2.deregister_targets(TargetGroupArn=footprint.target_group_arn, Targets=[{"Id": "10.0.1.10", "Port": 8080}])
    assert_refused(shift, world, "green has not proven itself ready for traffic: ")
    refusal = [line for line in out.getvalue().splitlines() if line.startswith("  MISSING")]
    assert len(refusal) == 3
    assert refusal[0].startswith("  MISSING  EKS upgrade insights of eks-bg-green in ERROR (refreshed ")
    assert refusal[0].endswith(": Kubelet version skew (UPGRADE_READINESS)")
    assert refusal[1] == f"  MISSING  Argo CD external-dns: OutOfSync/Healthy, chart {dns['targetRevision']}"
    assert refusal[2] == (
        f"  MISSING  load balancer {load_balancer_name(footprint.alb_arn)}: without a healthy target: "
        "k8s-sampleapp-green (no targets)"
    )
    assert deployed.weights() == {"blue": 100, "green": 0}


def test_a_colour_without_its_app_of_apps_is_not_ready(shift_in: ShiftIn, deployed: Emulated, argocd: FakeKubernetes) -> None:
    argocd.objects.clear()
    shift, world, _ = shift_in(deployed)
    assert_refused(shift, world, r"Argo CD app-of-apps: missing from namespace argocd \(the App of Apps defines it")


def test_skipping_readiness_moves_weight_and_says_so_loudly(
    shift_in: ShiftIn, deployed: Emulated, argocd: FakeKubernetes
) -> None:
    argocd.objects.clear()  # not ready: skipping is what lets the shift go on
    shift, _, out = shift_in(deployed, step=100, skip_readiness=True)
    shift.run("green")
    assert deployed.weights() == {"blue": 0, "green": 100}
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("WARNING: --skip-readiness: green has NOT been checked")
    assert header(out).endswith("| READINESS NOT CHECKED (--skip-readiness)")


def test_dry_run_says_whether_readiness_is_checked(
    tmp_path: Path, deployed: Emulated, green_ready: FakeKubernetes, preview: PreviewServer, capsys: pytest.CaptureFixture[str]
) -> None:
    config = base_config(blue={"kubernetes_version": "1.35", "weight": 100}, green={"kubernetes_version": "1.36"})
    path = write_project(tmp_path, config)
    deployer = FakeDeployer(path, {"blue": 100, "green": 0})
    assert shift_green(path, deployer, deployed, green_ready, preview, "--dry-run") == 0
    assert "readiness: checked before the first step" in capsys.readouterr().out
    assert shift_green(path, deployer, deployed, green_ready, preview, "--dry-run", "--skip-readiness") == 0
    printed = capsys.readouterr().out
    assert "readiness: NOT CHECKED (--skip-readiness)" in printed
    assert "readiness of green:" not in printed


# --- a shift changes weights only ----------------------------------------------------------------


def test_each_step_applies_the_very_plans_it_judged_and_nothing_planned_before_the_first(
    shift_in: ShiftIn, deployed: Emulated
) -> None:
    shift, world, out = shift_in(deployed, step=50)
    shift.run("green")
    fake = world.deployer
    # One synth before the first step (the current weights), one per step; each step plans both colours.
    assert fake.synths == 1 + 2
    preflight, steps = fake.planned[:2], fake.planned[2:]
    assert [plan.colour for plan in preflight] == ["blue", "green"]
    assert all(plan is judged for plan, judged in zip(fake.applied, steps, strict=True))
    assert not any(plan is applied for plan in preflight for applied in fake.applied)
    lines = out.getvalue().splitlines()
    clean = "pending changes at the current weights (blue 100  green 0): none in blue, green"
    assert lines.index(clean) < lines.index(header(out))


@pytest.mark.parametrize("dry_run", [False, True])
def test_changes_pending_at_the_current_weights_refuse_the_shift_before_any_weight_moves(
    tmp_path: Path,
    deployed: Emulated,
    green_ready: FakeKubernetes,
    preview: PreviewServer,
    capsys: pytest.CaptureFixture[str],
    dry_run: bool,
) -> None:
    """A release bump waiting for blue would land with the first step, on the colour serving everything."""
    config = base_config(blue={"kubernetes_version": "1.35", "weight": 100}, green={"kubernetes_version": "1.36"})
    path = write_project(tmp_path, config)
    before = path.read_text()
    fake = FakeDeployer(path, {"blue": 100, "green": 0}, pending={"blue": [image_tag_change("blue", 100)]})
    assert shift_green(path, fake, deployed, green_ready, preview, *(["--dry-run"] if dry_run else [])) == 2
    assert capsys.readouterr().err == (
        "refused: changes are pending at the current weights (blue 100  green 0), and the shift applies weights only; "
        "nothing was changed:\n"
        f"  - blue: {APP_OF_APPS}: values[0].sampleApp.image.tag\n"
        "Deploy that on its own, outside a shift (`cdktf diff blue` then `cdktf deploy blue`), when the colour has no "
        "weight or deliberately; then run the shift again\n"
    )
    assert (fake.synths, fake.applied, path.read_text()) == (1, [], before)
    assert deployed.weights() == {"blue": 100, "green": 0}


def test_a_step_whose_plan_changes_more_than_the_weights_applies_nothing_and_restores_the_weights(
    shift_in: ShiftIn, deployed: Emulated
) -> None:
    """Something lands for blue mid-shift (an edit, a drift): step 2's plan carries it, so step 2 is refused whole."""
    shift, world, out = shift_in(deployed, step=25)
    fake = world.deployer

    def bump_after_step_1(colour: str, weight: int) -> None:
        if colour == "blue":
            fake.pending["blue"] = [image_tag_change("blue", weight)]

    fake.on_apply.append(bump_after_step_1)
    with pytest.raises(UnsafeShiftError) as refusal:
        shift.run("green")
    assert str(refusal.value) == (
        "step 2/4  blue 50  green 50: its plan changes more than the weights, so none of it was applied and the config "
        "is back at blue 75  green 25, the weights in place:\n"
        f"  - blue: {APP_OF_APPS}: values[0].sampleApp.image.tag\n"
        "Deploy that on its own, outside a shift (`cdktf diff blue` then `cdktf deploy blue`), when the colour has no "
        "weight or deliberately; then run the shift again"
    )
    assert fake.applied_colours() == ["green", "blue"]  # step 1's, and nothing of step 2's (green's plan was fine)
    assert configured_weights(shift) == {"blue": 75, "green": 25}
    assert fake.deployed == deployed.weights() == {"blue": 75, "green": 25}
    assert not [line for line in out.getvalue().splitlines() if line.startswith("step 2/4")]  # no window watched


def test_the_command_exits_2_when_the_first_steps_plan_changes_more_than_the_weights(
    tmp_path: Path, deployed: Emulated, green_ready: FakeKubernetes, preview: PreviewServer, capsys: pytest.CaptureFixture[str]
) -> None:
    config = base_config(blue={"kubernetes_version": "1.35", "weight": 100}, green={"kubernetes_version": "1.36"})
    path = write_project(tmp_path, config)
    fake = FakeDeployer(path, {"blue": 100, "green": 0})

    def drift_after_the_preflight(synth: int) -> None:
        if synth == 2:
            fake.pending["green"] = [image_tag_change("green", 0)]

    fake.on_synth.append(drift_after_the_preflight)
    assert shift_green(path, fake, deployed, green_ready, preview) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "refused: step 1/5  blue 80  green 20: its plan changes more than the weights, so none of it was applied and "
        "the config is back at blue 100  green 0, the weights in place:\n"
        f"  - green: {APP_OF_APPS}: values[0].sampleApp.image.tag\n"
    )
    assert "`cdktf diff green` then `cdktf deploy green`" in err
    assert (fake.applied, load_config(path).weights) == ([], {"blue": 100, "green": 0})
    assert deployed.weights() == {"blue": 100, "green": 0}
