"""`python -m tools.retire <colour>`: the teardown's refusals before anything slow runs, then one
`cdktf destroy <colour>` (recorded, not run), and --force past a weight the shared load balancer (or a record the
colour's ExternalDNS wrote before it) still has."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from model.paths import PROJECT_DIR, VENV_PYTHON
from model.teardown_plan import FORCE_ENV
from tests.support.configs import write_project
from tests.support.emulated_aws import Emulated, base_config, forward_all
from tools import retire
from tools.aws import Aws
from tools.live_routes import read_routes
from tools.live_weights import LiveWeights


def deployed_state(project: Path, colour: str) -> None:
    """The local state a `cdktf deploy <colour>` leaves (terraform-state/, beside cdktf.json)."""
    state = project / "terraform-state" / f"{colour}.tfstate"
    state.parent.mkdir(exist_ok=True)
    state.write_text(json.dumps({"version": 4, "resources": [{"type": "aws_eks_cluster", "name": "eks"}]}))


@pytest.fixture
def retire_project(tmp_path: Path, emulated: Emulated, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[Any]]:
    """A project where blue is retired (weight 0) and green serves; `cdktf` replaced by a recorder."""
    config = base_config(blue={"kubernetes_version": "1.34", "weight": 0}, green={"kubernetes_version": "1.35", "weight": 100})
    path = write_project(tmp_path, config)
    for colour in ("blue", "green"):  # both deployed: their states hold resources
        deployed_state(tmp_path, colour)
    for name in (".venv", "tools", "model"):  # what the destroy hook runs there: the project's Python and tools
        (tmp_path / name).symlink_to(PROJECT_DIR / name)
    emulated.deploy_traffic({"sample-app": "app"}, {"blue": 0, "green": 100})
    runs: list[Any] = []

    def run_cdktf(arguments: list[str], **options: Any) -> int:
        runs.append((arguments, options))
        return 0

    monkeypatch.setattr(retire, "run_cdktf", run_cdktf)
    # The emulator's clients, made once per module (a new boto3 session per command re-reads botocore's models).
    clients = {name: getattr(emulated, name) for name in ("route53", "eks", "elbv2", "ssm")}
    monkeypatch.setattr(retire, "Aws", lambda region: Aws(region, **clients))
    return path, runs


def test_retire_destroys_a_colour_without_weight(retire_project: tuple[Path, list[Any]]) -> None:
    path, runs = retire_project
    assert retire.main(["blue", "--auto-approve", "--config", str(path)]) == 0
    assert runs == [(["destroy", "blue", "--auto-approve"], {"cwd": path.parent, "env": {FORCE_ENV: "0"}})]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["purple"], "refused: 'purple' is not a configured colour (configured: blue, green). A colour is retired while"),
        (["green"], "refused: green still has weight 100 in the shared load balancer: shift its traffic away first"),
    ],
)
def test_retire_refuses_before_running_anything(
    retire_project: tuple[Path, list[Any]], capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    path, runs = retire_project
    assert retire.main([*argv, "--config", str(path)]) == 2
    assert capsys.readouterr().err.startswith(message)
    assert runs == []


def test_retire_refuses_a_colour_the_shared_load_balancer_still_sends_traffic_to_unless_forced(
    retire_project: tuple[Path, list[Any]], emulated: Emulated, capsys: pytest.CaptureFixture[str]
) -> None:
    path, runs = retire_project
    emulated.ssm.put_parameter(Name="/eks-bg/traffic/weights", Value='{"blue": 10, "green": 90}', Overwrite=True, Type="String")
    assert retire.main(["blue", "--config", str(path)]) == 2
    assert capsys.readouterr().err.startswith("refused: blue still has weight 10 in the shared load balancer: shift its")
    assert runs == []
    assert retire.main(["blue", "--force", "--config", str(path)]) == 0
    assert runs == [(["destroy", "blue"], {"cwd": path.parent, "env": {FORCE_ENV: "1"}})]


@pytest.mark.parametrize("state", ["absent", "empty"])
def test_a_colour_that_was_never_deployed_is_not_destroyed(
    retire_project: tuple[Path, list[Any]], capsys: pytest.CaptureFixture[str], state: str
) -> None:
    """Nothing to destroy, and no claim about a deployed weight the command cannot know."""
    path, runs = retire_project
    green = path.parent / "terraform-state" / "green.tfstate"
    green.unlink()
    if state == "empty":  # what `cdktf destroy` leaves behind
        green.write_text(json.dumps({"version": 4, "resources": []}))
    assert retire.main(["green", "--config", str(path)]) == 0
    printed = capsys.readouterr()
    assert printed.out.startswith("green was never deployed (")
    assert "nothing to destroy" in printed.out
    assert "weight" not in printed.out + printed.err
    assert runs == []


def test_a_colour_the_shift_drained_retires_whatever_the_config_still_says(
    retire_project: tuple[Path, list[Any]], emulated: Emulated
) -> None:
    """The config still gives green 100 (no shift writes config.json), but the live weights give it nothing: the live
    weights are what serves, so green retires, and nothing asks anyone to edit the config first."""
    path, runs = retire_project
    emulated.ssm.put_parameter(Name="/eks-bg/traffic/weights", Value='{"blue": 100, "green": 0}', Overwrite=True, Type="String")
    forward_all(emulated.elbv2, read_routes(emulated.elbv2, "eks-bg"), {"blue": 100, "green": 0})
    assert retire.main(["green", "--auto-approve", "--config", str(path)]) == 0
    assert runs == [(["destroy", "green", "--auto-approve"], {"cwd": path.parent, "env": {FORCE_ENV: "0"}})]


def test_retire_refuses_before_running_anything_when_the_hook_has_no_python(
    retire_project: tuple[Path, list[Any]], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A machine that never ran `make synth`: no .venv, and no python3 on PATH either (an empty directory)."""
    path, runs = retire_project
    (path.parent / ".venv").unlink()
    monkeypatch.setattr(retire, "tools_first", lambda _: str(path.parent / "empty"))
    assert retire.main(["blue", "--auto-approve", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"refused: the destroy hook runs {path.parent / VENV_PYTHON} (or python3 from PATH), and there is")
    assert f"run `make synth` in {path.parent}" in err
    assert err.rstrip().endswith("nothing was destroyed")
    assert len(err.strip().splitlines()) == 1
    assert runs == []


def test_retire_refuses_when_the_hooks_python_cannot_import_boto3(
    retire_project: tuple[Path, list[Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    """A .venv made by hand without the project's packages: the interpreter exists, the hook would fail on import."""
    path, runs = retire_project
    venv = path.parent / ".venv"
    venv.unlink()
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text("#!/bin/sh\necho \"ModuleNotFoundError: No module named 'boto3'\" >&2\nexit 1\n")
    python.chmod(0o755)
    assert retire.main(["blue", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"refused: the destroy hook runs {python}, which cannot import what it needs (ModuleNotFoundError: ")
    assert "No module named 'boto3'" in err
    assert "make synth" in err
    assert runs == []


def test_a_stop_during_the_destroy_hands_terraform_its_own_interrupt_and_waits_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cancelled CI run's SIGTERM (a real signal) while `cdktf destroy` runs: the CLI gets SIGINT, Terraform's way to
    stop safely (it finishes its operation and writes its state), the retire waits for it, then stops in one line. The
    CLI is a stand-in on PATH that records what it got."""
    import signal
    import threading

    from tools.cli import run_cdktf
    from tools.signals import STOPPING, Interrupted, handle_stops

    said, started = tmp_path / "said", tmp_path / "started"
    stand_in = tmp_path / "bin" / "cdktf"
    stand_in.parent.mkdir()
    stand_in.write_text(
        "#!/bin/sh\n"
        f"trap 'echo \"SIGINT: state written\" > {said}; exit 130' INT\n"
        f"touch {started}\n"
        "while :; do sleep 0.05; done\n"
    )
    stand_in.chmod(0o755)
    monkeypatch.setattr("tools.cli.tools_first", lambda path: f"{stand_in.parent}:{path}")
    kept = {stop: signal.getsignal(stop) for stop in STOPPING}
    handle_stops()

    def cancel() -> None:
        while not started.exists():
            threading.Event().wait(0.02)
        signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGTERM)

    threading.Thread(target=cancel, daemon=True).start()
    try:
        with pytest.raises(Interrupted, match="SIGTERM"):
            run_cdktf(["destroy", "blue", "--auto-approve"], cwd=tmp_path)
    finally:
        for stop, handler in kept.items():
            signal.signal(stop, handler)
    assert said.read_text() == "SIGINT: state written\n"


def test_retire_refuses_while_any_one_application_still_sends_the_colour_weight(
    retire_project: tuple[Path, list[Any]], emulated: Emulated, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every application but one moved to green alone (`python -m tools.shift --application`): blue still serves that
    one, so it is not retired. The parameter as the shift writes it; the rules agree with it."""
    path, runs = retire_project
    splits = {"sample-app": {"blue": 0, "green": 100}, "orders": {"blue": 30, "green": 70}}
    live = LiveWeights().updated(splits)
    emulated.ssm.put_parameter(Name="/eks-bg/traffic/weights", Value=live.value(), Overwrite=True, Type="String")
    forward_all(emulated.elbv2, read_routes(emulated.elbv2, "eks-bg"), splits["sample-app"])
    assert retire.main(["blue", "--config", str(path)]) == 2
    assert capsys.readouterr().err.startswith("refused: blue still has weight 30 in the shared load balancer: shift its")
    assert runs == []
