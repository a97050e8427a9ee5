"""Shared fixtures. jsii loads the aws provider once per pytest process (~15 s); every module
synthesizes its configurations once and asserts many times on the result."""

from __future__ import annotations

import functools
import os
import shutil
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from model.paths import PROJECT_DIR
from scripts.emulator import MotoProcess
from scripts.env import JSII_CACHE, JSII_CACHE_ROOT, TOOL_DIRS, node_options
from scripts.make_test import REHEARSAL_MODULES
from scripts.terraformrc import configure_environment

# Fixtures for checks that run beside the suite (terraform validate, checkov).
pytest_plugins = ["tests.support.background_checks"]

if TYPE_CHECKING:
    from tests.support.emulated_aws import Emulated
    from tests.support.fake_kubernetes import FakeKubernetes
    from tests.support.literal_values import LiteralValues
    from tests.support.synth import Synthesized

# The environment the Makefile sets, so that `pytest` alone behaves like `make test`. It must be
# in place before the first cdktf import starts the jsii runtime on whichever `node` is first.
os.environ["PATH"] = f"{TOOL_DIRS[0]}{os.pathsep}{os.environ['PATH']}"  # the pinned Node's
os.environ.setdefault("CHECKPOINT_DISABLE", "1")
os.environ.setdefault("NODE_OPTIONS", node_options())
os.environ.setdefault(JSII_CACHE_ROOT, str(JSII_CACHE))
configure_environment()


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects anything: every session sees every collected test
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """`make test` collects only REHEARSAL_MODULES for its rehearsal tier: a rehearsal test elsewhere would never run."""
    misplaced = misplaced_rehearsal_tests(item.nodeid for item in items if item.get_closest_marker("rehearsal"))
    if misplaced:
        raise pytest.UsageError(f"rehearsal tests outside scripts/make_test.py's REHEARSAL_MODULES: {', '.join(misplaced)}")


def misplaced_rehearsal_tests(nodeids: Iterable[str]) -> list[str]:
    """The modules of these rehearsal tests' node IDs that the rehearsal tier does not collect."""
    return sorted({nodeid.split("::")[0] for nodeid in nodeids} - set(REHEARSAL_MODULES))


def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> list[pytest.Item] | None:
    """cdktf's `Testing` helper is not a test class. Left to pytest, every module importing it
    gets a "cannot collect" warning whose source location costs a parse of cdktf's whole
    __init__.py (~1 s a module)."""
    if name == "Testing" and getattr(obj, "__module__", "") == "cdktf":
        return []
    return None


@pytest.fixture(scope="session", autouse=True)
def _one_botocore_loader() -> Iterator[None]:
    """Every boto3 Session of the session shares one botocore data loader, so each service's model and the endpoint
    data are parsed once per process instead of once per Session: the operator commands the tests call, each making
    its own Session as a command run by hand does, and moto's resets of the default one (~3 CPU-s of the unit tier)."""
    import botocore.loaders
    import botocore.session

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(botocore.session, "create_loader", functools.cache(botocore.loaders.create_loader))
        yield


@pytest.fixture(scope="session")
def project_dir() -> Path:
    return PROJECT_DIR


@pytest.fixture(scope="session")
def inside_project() -> Iterator[Path]:
    """A scratch directory inside the checkout, removed at the end: output synthesized here sits
    where `cdktf synth` puts it (below the project), so a path of the checkout in it shows."""
    directory = PROJECT_DIR / ".cache" / "tests" / f"session-{uuid.uuid4().hex[:8]}"
    directory.mkdir(parents=True)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="session")
def example_app(inside_project: Path) -> Synthesized:
    """The shipped example (examples/blue-green.json), synthesized once for the whole session."""
    from tests.support.configs import example
    from tests.support.synth import synthesize

    return synthesize(example(), inside_project / "example" / "cdktf.out")


@pytest.fixture(scope="session")
def everything_on(inside_project: Path) -> Synthesized:
    """tests/support/configs.EVERYTHING_ON synthesized once: the other side of every optional switch."""
    from tests.support.configs import EVERYTHING_ON, validated
    from tests.support.synth import synthesize

    return synthesize(validated(EVERYTHING_ON), inside_project / "everything-on" / "cdktf.out")


@pytest.fixture(scope="session")
def variant_app(inside_project: Path) -> Synthesized:
    """tests/support/configs.VARIANT synthesized once: the other side of the example's switches, three colours."""
    from tests.support.configs import VARIANT, validated
    from tests.support.synth import synthesize

    return synthesize(validated(VARIANT), inside_project / "variant" / "cdktf.out")


@pytest.fixture(scope="session")
def literal_values(inside_project: Path) -> LiteralValues:
    """tests/support/literal_values.py's configuration synthesized once: strings that look like Terraform expressions."""
    from tests.support.literal_values import synthesize_literal_values

    return synthesize_literal_values(inside_project / "literal-values")


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    """One emulator server (scripts/emulator.py) for the session's out-of-process tests that run on the main thread,
    one after another, each cleaning up what it made; a check of the background pool has one of its own
    (tests/support/background_checks.py own_emulator). ACM issues DNS-validated certificates at once."""
    server = MotoProcess({"MOTO_ACM_VALIDATION_WAIT": "0"})
    try:
        yield server.ready()
    finally:
        server.stop()


@pytest.fixture(scope="module")
def emulated_clients() -> Iterator[Emulated]:
    """moto in-process for one test module (tests/support/emulated_aws.py in_process_aws), and clients on it."""
    from tests.support.emulated_aws import Emulated, in_process_aws, one_key_for_moto_certificates

    with pytest.MonkeyPatch.context() as patch:
        one_key_for_moto_certificates(patch)
        with in_process_aws(patch):
            yield Emulated.connect()


@pytest.fixture
def emulated(emulated_clients: Emulated) -> Iterator[Emulated]:
    """A fresh world per test (tests/support/emulated_aws.py): built before, removed after."""
    world = emulated_clients.fresh()
    yield world
    world.clean()


@pytest.fixture
def argocd() -> Iterator[FakeKubernetes]:
    """A colour's Argo CD behind a Kubernetes API (tests/support/fake_kubernetes.py): the App of Apps
    and its children, all Synced and Healthy."""
    from model.platform import CHILDREN, PARENT_APPLICATION
    from tests.support.fake_kubernetes import FakeKubernetes

    fake = FakeKubernetes()
    for name in (PARENT_APPLICATION, *(c.name for c in CHILDREN)):
        fake.add_application(name)
    yield fake
    fake.close()


@pytest.fixture
def percentiles(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support.emulated_aws import teach_percentiles

    teach_percentiles(monkeypatch)


@pytest.fixture
def no_aws_credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """This process's AWS SDK finds no credentials at all (botocore's real chain, nothing stubbed)."""
    from tests.support.emulated_aws import CREDENTIAL_VARIABLES, without_credentials

    for name, value in without_credentials({}, tmp_path).items():
        monkeypatch.setenv(name, value)
    for name in CREDENTIAL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
