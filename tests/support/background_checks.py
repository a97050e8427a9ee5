"""Checks that run as other programs (`terraform validate`, checkov, the CLI by hand, a copy of the project's own
runs), started when the session's first test starts and run on a pool of threads while the rest of the suite does.

Their fixtures synthesize on the main thread (jsii is not thread-safe), hand the subprocess part to a thread and
return a Future. Tests that wait on them carry `pytest.mark.background(<fixture>)` and run last, after the tests that
do out-of-process work of their own (on the main thread, meanwhile): by the time they wait, the result is usually
there. The longest chains start first, each on a worker of its own, so that the session does not end waiting on one
that started late: under `make test` this tier shares two cores with the unit tier and the rehearsal, and whatever it
still runs alone at its end is `make test`'s last seconds.

A pytest plugin (registered in tests/conftest.py): fixtures requested from the session's
start-up must be session-scoped and visible to the session, which test modules' are not.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from model.paths import PROJECT_DIR
from model.routes import weights_parameter
from scripts.ci.stacks import aws_part
from scripts.emulator import MotoProcess, environment
from tests.support.added_application import AddedApplication, add_an_application
from tests.support.by_hand import CliByHand, cli_by_hand
from tests.support.checkov import CHECKOV_FIXTURES, checkov
from tests.support.configs import EXAMPLE_COLOURS, example, example_raw
from tests.support.data_guards import plan_guards
from tests.support.emulator_plans import (
    REGION,
    EmulatorPlans,
    existing_clusters,
    guard_modules,
    networks,
    node_guard_module,
    plan_all,
    shifted,
)
from tests.support.frozen_colour import synthesized_before_and_after
from tests.support.hook_run import HookRun, hook_directory, run_hook
from tests.support.literal_values import LiteralValues, check_root, validate_and_plan
from tests.support.release_upgrade import plan_upgrade
from tests.support.terraform import MirrorInits, init_and_validate, init_from_a_mirror, write_root

if TYPE_CHECKING:
    # Not at run time: this plugin loads with conftest, before any test needs the jsii runtime.
    from tests.support.synth import Synthesized
    from tests.support.upgrade_cycle import Cycle

# Only the in-cluster part goes: Argo CD, External Secrets Operator, its bootstrap Secrets (the example has a credential),
# the App of Apps, and the argocd and external-secrets namespaces.
IN_CLUSTER = [*["helm_release"] * 4, *["kubernetes_namespace_v1"] * 2]
VALIDATED_VARIANT_COLOUR = "green_with_every_switch"  # the module of everything_on's green in the validation


# The checks that run on the pool, in the order they start: the longest chains of other programs first (each holds a
# worker for a minute or more under make test), so that none is what the session still waits on at its end.
CHECKS = (
    "upgrade_cycle",
    "added_application",
    "frozen_colour",
    "cli",
    "checkov_report",
    "emulator_plans",
    "data_guard_plans",
    "hook_run",
    "release_upgrade",
    "literal_values_plan",
    "terraform_validation",
    "mirror_inits",
)
# Most of a check's time is spent in other programs: a worker per long chain, and the short ones share the rest.
WORKERS = 4


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Out-of-process tests go last, and of those, the ones waiting on a check of the pool after the ones doing their own
    work (which runs meanwhile: the checks are usually done when waited on). Stable: modules stay in order."""

    def order(item: pytest.Item) -> tuple[bool, bool]:
        marker = item.get_closest_marker("background")
        return marker is not None, marker is not None and bool(marker.args) and marker.args[0] in CHECKS

    items.sort(key=order)


@pytest.fixture(scope="session")
def background_pool() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="background-check") as pool:
        yield pool


@pytest.fixture(scope="session", autouse=True)
def _start_background_checks(request: pytest.FixtureRequest) -> None:
    """Before the first test: start every check a selected test will wait on (none when no
    selected test needs one, so `pytest tests/test_config.py` synthesizes nothing), in CHECKS' order."""
    markers = (marker for item in request.session.items for marker in item.iter_markers("background"))
    wanted = {marker.args[0] for marker in markers if marker.args}
    for fixture in sorted(wanted, key=lambda name: (CHECKS.index(name) if name in CHECKS else len(CHECKS), name)):
        request.getfixturevalue(fixture)


@pytest.fixture(scope="session")
def added_application(
    project_dir: Path, background_pool: ThreadPoolExecutor, tmp_path_factory: pytest.TempPathFactory
) -> Future[AddedApplication]:
    """An application added to a copy of the project by configuration only, and what a team runs then
    (tests/support/added_application.py, tests/test_adding_an_application.py)."""
    return background_pool.submit(add_an_application, project_dir, tmp_path_factory.mktemp("added-application") / "project")


@pytest.fixture(scope="session")
def frozen_colour(background_pool: ThreadPoolExecutor, tmp_path_factory: pytest.TempPathFactory) -> Future[tuple[Path, Path]]:
    """Blue on a tag and green on main, synthesized before and after main moves on (tests/support/frozen_colour.py)."""
    return background_pool.submit(synthesized_before_and_after, tmp_path_factory.mktemp("frozen") / "repo")


@pytest.fixture(scope="session")
def terraform_validation(
    example_app: Synthesized,
    everything_on: Synthesized,
    background_pool: ThreadPoolExecutor,
    tmp_path_factory: pytest.TempPathFactory,
) -> Future[tuple[Path, dict[str, Any]]]:
    """`terraform validate -json` of one root module holding every stack as a module: the aws
    provider's schema is loaded once instead of once per stack. The colours go without their
    helm/kubernetes parts, whose providers cannot be installed here."""
    root = tmp_path_factory.mktemp("validate")
    modules = {"common": example_app.json("common"), "common_with_build": everything_on.json("common")}
    for colour in EXAMPLE_COLOURS:
        document, removed = aws_part(example_app.json(colour))
        assert sorted(r.split(".")[0] for r in removed) == IN_CLUSTER
        modules[colour] = document
    # A colour with the other side of its switches: the admins and the traffic operator's access entry (its groups).
    modules[VALIDATED_VARIANT_COLOUR] = aws_part(everything_on.json("green"))[0]
    write_root(root, modules)  # validation needs no state
    return background_pool.submit(lambda: (root, init_and_validate(root)))


@pytest.fixture(scope="session")
def mirror_inits(background_pool: ThreadPoolExecutor, tmp_path_factory: pytest.TempPathFactory) -> Future[MirrorInits]:
    """Three `terraform init`s at once from a stand-in provider mirror (tests/test_terraformrc.py)."""
    root = tmp_path_factory.mktemp("mirror-inits")
    return background_pool.submit(init_from_a_mirror, root, directories=3)


@pytest.fixture(scope="session")
def checkov_report(
    example_app: Synthesized,
    everything_on: Synthesized,
    background_pool: ThreadPoolExecutor,
    tmp_path_factory: pytest.TempPathFactory,
) -> Future[dict[str, dict[str, Any]]]:
    """One checkov run over what both syntheses ship (the project's, and the one with every optional part
    on): their Terraform JSON, every manifest the charts render for each of their colours from the values in the
    synthesized stacks, and app/Dockerfile; and beside them tests/fixtures/checkov, for the project's own checks."""
    from tests.support.charts import rendered_manifests, write_manifests  # Helm's engine, loaded only when wanted

    scanned = tmp_path_factory.mktemp("checkov")
    for name, app in (("example", example_app), ("variant", everything_on)):
        # Not the chart copies under assets/: templates, not manifests (their renders are scanned below).
        shutil.copytree(app.outdir, scanned / name, ignore=shutil.ignore_patterns("assets"))
        for stack in (scanned / name / "stacks").glob("*/cdk.tf.json"):
            # checkov 3.3's terraform_json parser refuses a whole file that holds a `moved` block (common's, for the
            # roles the registry renamed: stacks/common.py), or a scalar in the `terraform` block (`required_version`,
            # every stack's: stacks/base.py; its hclify "receives only dicts"); neither names a resource to check.
            document = json.loads(stack.read_text())
            document.pop("moved", None)
            document["terraform"].pop("required_version")
            stack.write_text(json.dumps(document))
        for colour in app.colours():
            write_manifests(scanned / "manifests" / name / colour, rendered_manifests(app, colour))
    shutil.copy(PROJECT_DIR / "app" / "Dockerfile", scanned / "Dockerfile")
    # What the project's own checks must fail and pass (tests/test_checkov.py), scanned in the same run.
    shutil.copytree(CHECKOV_FIXTURES, scanned / CHECKOV_FIXTURES.name)
    return background_pool.submit(checkov, scanned)


@pytest.fixture(scope="session")
def cli(
    own_emulator: OwnEmulator, background_pool: ThreadPoolExecutor, tmp_path_factory: pytest.TempPathFactory
) -> Future[CliByHand]:
    """`cdktf synth` through the pinned CLI as README tells a user to run it (`source scripts/env.sh` first, from a
    new user's shell, no AWS settings), in a scratch copy of the project holding the shipped example, then `cdktf diff
    common` there against an emulator of its own (tests/test_cli.py)."""
    return background_pool.submit(cli_by_hand, tmp_path_factory.mktemp("cli"), own_emulator().ready)


# Starts an emulator server for one world of the pool; stopped at the session's end.
OwnEmulator = Callable[[], MotoProcess]


@pytest.fixture(scope="session")
def own_emulator() -> Iterator[OwnEmulator]:
    """An emulator server (scripts/emulator.py) per world the pool's checks build, never one shared between them: the
    checks run side by side, in any order, and what one creates another would meet. Two of them once shared one, each
    looked for the parent zone `example.com`, found none, and created one: the other's plan then failed with "multiple
    Route 53 Hosted Zones matched", now and then, as the threads happened to interleave. A server costs ~1.5 CPU-s."""
    started: list[MotoProcess] = []

    def start() -> MotoProcess:
        started.append(MotoProcess())
        return started[-1]

    yield start
    for server in started:
        server.stop()


def own_environment(server: MotoProcess) -> Mapping[str, str]:
    """A check's environment aimed at its own server (waits for it: on the pool's thread, not the session's)."""
    return environment(server.ready(), REGION)


@pytest.fixture(scope="session")
def emulator_plans(
    example_app: Synthesized,
    own_emulator: OwnEmulator,
    background_pool: ThreadPoolExecutor,
    tmp_path_factory: pytest.TempPathFactory,
) -> Future[EmulatorPlans]:
    """Terraform plans against the emulator (tests/support/emulator_plans.py): the network's zones, and each
    example colour's guards against replacing its cluster and its node group, as synthesized, with clusters and node
    groups already there (the last colour's cluster also in two more regions, each running one more drift)."""
    stacks = {colour: example_app.json(colour) for colour in EXAMPLE_COLOURS}
    modules = {
        **networks(),
        **guard_modules(stacks),
        **{f"nodes_guard_{colour}": node_guard_module(stack) for colour, stack in stacks.items()},
    }
    clusters = existing_clusters(stacks)
    directory = tmp_path_factory.mktemp("emulator-plans")
    live = (weights_parameter(example().project), shifted(example().weights))
    server = own_emulator()
    return background_pool.submit(lambda: plan_all(directory, modules, clusters, own_environment(server), live_weights=live))


@pytest.fixture(scope="session")
def data_guard_plans(
    example_app: Synthesized, background_pool: ThreadPoolExecutor, tmp_path_factory: pytest.TempPathFactory
) -> Future[dict[str, tuple[int, str]]]:
    """common's guards of its sub-zone and its table planned against an emulator of their own: a fresh account, the
    zone and table as configured, then under an earlier configuration's names (tests/support/data_guards.py)."""
    common = example_app.json("common")
    directory = tmp_path_factory.mktemp("data-guards")
    return background_pool.submit(plan_guards, directory, common)


@pytest.fixture(scope="session")
def hook_run(
    example_app: Synthesized, own_emulator: OwnEmulator, background_pool: ThreadPoolExecutor, inside_project: Path
) -> Future[HookRun]:
    """Terraform runs a colour's destroy hook for real (tests/support/hook_run.py), in a directory inside the
    project (as cdktf.out/stacks/<colour> is: the hook finds the project upwards from there)."""
    colour = EXAMPLE_COLOURS[0]
    directory = hook_directory(
        example_app.resource(colour, "terraform_data", "teardown/hook"), inside_project / "hook" / "stacks" / colour
    )
    server = own_emulator()
    return background_pool.submit(lambda: run_hook(directory, server.ready()))


@pytest.fixture(scope="session")
def literal_values_plan(
    literal_values: LiteralValues, own_emulator: OwnEmulator, background_pool: ThreadPoolExecutor
) -> Future[tuple[dict[str, Any], dict[str, Any]]]:
    """`terraform validate` of every stack of a configuration whose strings look like Terraform expressions, and a plan
    of its common and of a colour's App of Apps values against the emulator (tests/support/literal_values.py)."""
    root = check_root(literal_values)
    server = own_emulator()
    return background_pool.submit(lambda: validate_and_plan(root, own_environment(server)))


@pytest.fixture(scope="session")
def release_upgrade(
    example_app: Synthesized,
    own_emulator: OwnEmulator,
    background_pool: ThreadPoolExecutor,
    tmp_path_factory: pytest.TempPathFactory,
) -> Future[dict[str, Any]]:
    """This release's common planned against the state the release before left (tests/support/release_upgrade.py)."""
    directory = tmp_path_factory.mktemp("release-upgrade")
    common = example_app.json("common")
    server = own_emulator()
    return background_pool.submit(lambda: plan_upgrade(directory, common, own_environment(server)))


@pytest.fixture(scope="session")
def upgrade_cycle(background_pool: ThreadPoolExecutor, tmp_path_factory: pytest.TempPathFactory) -> Future[Cycle]:
    """Two upgrade cycles on an AWS emulator whose clusters have a Kubernetes API and controllers, every step the
    workflows' command (tests/support/upgrade_cycle.py, tests/test_upgrade_cycle.py). Each stage's configuration is
    synthesized here (jsii: this thread), as `make synth` writes it beside its state; the cycles on the pool."""
    from model.revisions import commit_of
    from tests.support.upgrade_cycle import configurations, synthesized, upgrade_cycles

    root = tmp_path_factory.mktemp("upgrade-cycle")
    stages = configurations(example_raw(), commit_of("HEAD", key="the cycle's revision"))
    syntheses = synthesized(root, stages)
    return background_pool.submit(upgrade_cycles, root / "run", syntheses)
