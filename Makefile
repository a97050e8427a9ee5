# Two commands on a fresh machine (python3, node/npm, terraform): `make synth`, `make test`.
# Installs are stamped on their lock files, so re-running does not reinstall anything.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
# The Python and Node installs of a fresh clone run side by side (each mostly waits on disk and network);
# their lines may interleave (an output sync would hold back make test's output until it ends).
MAKEFLAGS += --jobs=2

PYTHON ?= python3
# Pipfile.lock is pipenv's (`make lock`); installing from it goes through uv: parallel, from its cache.
UV_VERSION := 0.13.9
PIPENV_VERSION := 2026.10.3
TOOLS := .cache/tools
UV := $(TOOLS)/bin/uv
VENV_STAMP := .venv/.synced
NODE_STAMP := node_modules/.synced
# checkov pins its dependencies exactly (boto3 among them): it gets a virtualenv of its own.
CHECKOV_STAMP := scripts/checkov/.venv/.synced
# Everything the tests (and the benchmark, which runs them) need installed.
TEST_STAMPS := $(VENV_STAMP) $(NODE_STAMP) $(CHECKOV_STAMP)
INDEX_URL := PIP_INDEX_URL="$${PIP_INDEX_URL:-$$($(PYTHON) -m scripts.pip_index_url)}"
UV_INDEX := UV_DEFAULT_INDEX="$${PIP_INDEX_URL:-$$($(PYTHON) -m scripts.pip_index_url)}"

# Every recipe line runs in the environment a shell gets from `source scripts/env.sh` (README): bash reads
# BASH_ENV before each `bash -c`, so make and a shell by hand cannot drift. The variables and why: scripts/env.py
# (the pinned Node and the virtualenv first on PATH, the provider mirror when there is one, no checkpoint call,
# NODE_OPTIONS, the jsii cache, and CI=true when the output goes to no terminal: no spinner frames in logs).
export BASH_ENV := $(CURDIR)/scripts/env.sh
# Only for `make lock`'s own pipenv.
export PIPENV_VENV_IN_PROJECT := 1
export PIPENV_VERBOSITY := -1
export PIPENV_NOSPIN := 1
export PIPENV_YES := 1

PIPENV := $(TOOLS)/pipenv/bin/pipenv

.PHONY: help synth test check pytest test-unit test-emulated bench rehearse docs lint typecheck format lock clean

help:
	@echo "make synth     install the locked toolchain and write cdktf.out/stacks/*"
	@echo "make test      lint, type-check and run every test (the emulator rehearsal beside the rest)"
	@echo "make test-unit the unit tier: every in-process test but the emulated tier's (what make bench times)"
	@echo "make test-emulated  whole operator runs (the shift's) against moto in-process (make bench times it too)"
	@echo "make bench     synth and test speed against the CDKTF floor (budgets PASS/FAIL)"
	@echo "make rehearse  deploy common to an AWS emulator in a scratch copy, check it, plan the colours, destroy"
	@echo "make docs      regenerate config.schema.json, docs/configuration.md (reference, compatibility"
	@echo "               table), README's diagram, docs/architecture.md's lists and policies/README.md's roles"
	@echo "make format    apply ruff formatting"
	@echo "make lock      re-lock Pipfile.lock (and checkov's) after editing a Pipfile"

# A synth that fails, whatever failed (cdktf.json, the app, the CLI), leaves no earlier output behind: a plan in
# cdktf.out/stacks/<stack> would otherwise plan yesterday's configuration. main.py does the same for the app's own.
FORGET_SYNTH := rm -rf cdktf.out/stacks cdktf.out/manifest.json
synth: $(VENV_STAMP) $(NODE_STAMP)
	$(PYTHON) -m scripts.cdktf_json || { $(FORGET_SYNTH); exit 2; }
	cdktf synth || { $(FORGET_SYNTH); exit 1; }

test: $(TEST_STAMPS)
	python -m scripts.make_test

check: lint typecheck

lint: $(VENV_STAMP)
	ruff check .
	ruff format --check .
	vulture

typecheck: $(VENV_STAMP)
	mypy
	mypy app/main.py  # apart: both it and the project's main.py are a module named `main`

pytest: $(TEST_STAMPS)
	pytest

# The unit tier: every test that runs in-process (what `make bench` times); make test runs the out-of-process
# tier (the emulator rehearsal, Terraform, checkov) beside it.
test-unit: $(TEST_STAMPS)
	pytest -m "not rehearsal and not background and not emulated"

test-emulated: $(TEST_STAMPS)
	pytest -m "emulated and not background"

bench: $(TEST_STAMPS)
	python -m bench.run

rehearse: $(VENV_STAMP) $(NODE_STAMP)
	python -m scripts.rehearse

docs: $(VENV_STAMP) $(NODE_STAMP)
	python -m scripts.policies_readme
	python -m scripts.docs

format: $(VENV_STAMP)
	ruff format .
	ruff check --fix .

$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet uv==$(UV_VERSION)

$(PIPENV):
	$(PYTHON) -m venv $(TOOLS)/pipenv
	$(TOOLS)/pipenv/bin/pip install --quiet pipenv==$(PIPENV_VERSION)

# A virtualenv with the lock's pins, each checked against its hashes (and pip, which tests/test_layout.py reads).
define SYNC
	$(UV) venv --quiet --seed --allow-existing --python $(PYTHON) $(1)
	$(PYTHON) -m scripts.lock_requirements $(2) $(3) > $(1)/requirements.txt
	$(UV_INDEX) $(UV) pip install --quiet --require-hashes --python $(1)/bin/python -r $(1)/requirements.txt
endef

$(VENV_STAMP): Pipfile.lock | $(UV)
	$(call SYNC,.venv,Pipfile.lock,--dev)
	touch $@

$(CHECKOV_STAMP): scripts/checkov/Pipfile.lock | $(UV)
	$(call SYNC,scripts/checkov/.venv,scripts/checkov/Pipfile.lock,)
	touch $@

$(NODE_STAMP): package-lock.json
	npm ci --no-audit --no-fund --prefer-offline
	touch $@

lock: | $(PIPENV)
	$(INDEX_URL) $(PIPENV) lock
	$(INDEX_URL) PIPENV_PIPFILE=scripts/checkov/Pipfile $(PIPENV) lock

clean:
	rm -rf cdktf.out .pytest_cache .mypy_cache .ruff_cache
