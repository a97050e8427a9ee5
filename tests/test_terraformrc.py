"""scripts/terraformrc.py's Terraform config on a machine with a provider mirror: inits link the mirror's provider and
write nothing shared. A plugin cache here was shared state that every lock-less `terraform init` rewrote while other
directories' plans resolved their provider through it (a fresh clone's CI run failed "could not read package
directory"): the config names none, and the inits below, side by side as the rehearsal's are, prove it."""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path

import pytest

from scripts.terraformrc import LOCK_FILE, mirrored_providers, write_config
from tests.support.terraform import MIRRORED, MIRRORED_VERSION, MirrorInits

pytestmark = [pytest.mark.background("mirror_inits")]


@pytest.fixture
def inits(mirror_inits: Future[MirrorInits]) -> MirrorInits:
    return mirror_inits.result()


def test_inits_side_by_side_each_link_the_mirrors_provider(inits: MirrorInits) -> None:
    for done in inits.runs:
        assert done.returncode == 0, done.stdout + done.stderr
    for directory in inits.directories:
        link = inits.provider_link(directory)
        assert link.is_relative_to(inits.mirror), f"{directory.name}'s provider is {link}, not the mirror's"


def test_a_scratch_directorys_lock_file_keeps_each_providers_version_and_no_checksum(inits: MirrorInits) -> None:
    """tests/support/terraform.run (and the rehearsal's Project.run) after an init: no later command hashes the
    provider package against the lock file (scripts/terraformrc.forget_provider_checksums)."""
    for directory in inits.directories:
        lock = (directory / LOCK_FILE).read_text()
        assert f'provider "{MIRRORED}" {{' in lock, lock
        assert f'version     = "{MIRRORED_VERSION}"' in lock, lock
        assert "hashes" not in lock, lock


def test_an_init_writes_nothing_beside_the_config(inits: MirrorInits) -> None:
    """Nothing another directory's provider could resolve through is made or rewritten by an init."""
    assert inits.beside_config_after == inits.beside_config_before
    assert sorted(inits.beside_config_after) == [".", "terraformrc"]


def test_the_config_names_every_mirrored_provider_and_a_machine_without_a_mirror_gets_none(tmp_path: Path) -> None:
    assert mirrored_providers(tmp_path) == []
    assert write_config(tmp_path, tmp_path / "config" / "terraformrc") is None
    (tmp_path / MIRRORED / "5.100.0").mkdir(parents=True)
    config = write_config(tmp_path, tmp_path / "config" / "terraformrc")
    assert config is not None
    assert f'include = ["{MIRRORED}"]' in config.read_text()
    assert f'exclude = ["{MIRRORED}"]' in config.read_text()
