"""The sample app's image recipe and build script (no Docker engine here: checked as text)."""

from __future__ import annotations

import importlib.metadata
import json
import re
import shlex

import yaml

from tests.support.sample_app import APP_DIR

# First boto3 whose credential chain speaks the EKS Pod Identity agent's container endpoint.
POD_IDENTITY_BOTO3 = (1, 34, 41)


def dockerfile() -> list[tuple[str, str]]:
    """(instruction, arguments) per instruction, continuation lines joined."""
    text = re.sub(r"\\\n", " ", (APP_DIR / "Dockerfile").read_text())
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]


def requirements() -> dict[str, str]:
    lines = [line.split("#")[0].strip() for line in (APP_DIR / "requirements.txt").read_text().splitlines()]
    return dict(line.split("==") for line in lines if line)


def test_runtime_dependencies_are_pinned_and_tested_with_those_versions() -> None:
    pins = requirements()
    assert sorted(pins) == ["boto3", "fastapi", "uvicorn"]
    # The tests run the app on exactly what the image installs.
    assert {name: importlib.metadata.version(name) for name in pins} == pins
    assert tuple(int(part) for part in pins["boto3"].split(".")) >= POD_IDENTITY_BOTO3


def test_base_image_is_slim_python_pinned_by_version() -> None:
    (base,) = [args for instruction, args in dockerfile() if instruction == "FROM"]
    assert re.fullmatch(r"python:3\.\d+\.\d+-slim(-\w+)?", base), base


def test_runs_uvicorn_as_a_non_root_user_without_reload() -> None:
    steps = dockerfile()
    (user,) = [args for instruction, args in steps if instruction == "USER"]
    assert user.isdigit()
    assert int(user) != 0
    (command,) = [json.loads(args) for instruction, args in steps if instruction == "CMD"]
    assert command[:7] == ["uvicorn", "main:app", "--host", "0.0.0.0", "--port", "8080", "--proxy-headers"]
    assert "--reload" not in command
    assert "HEALTHCHECK" not in [instruction for instruction, _ in steps]


def test_dependencies_are_installed_before_the_code_is_copied() -> None:
    steps = [f"{instruction} {args}" for instruction, args in dockerfile()]
    order = [
        next(i for i, s in enumerate(steps) if s.startswith(prefix))
        for prefix in ("COPY requirements.txt", "RUN pip install", "COPY main.py")
    ]
    assert order == sorted(order)


def test_buildspec_logs_in_builds_tags_with_the_commit_and_pushes() -> None:
    spec = yaml.safe_load((APP_DIR / "buildspec.yml").read_text())
    assert spec["version"] == 0.2
    commands = [c for phase in ("pre_build", "build", "post_build") for c in spec["phases"][phase]["commands"]]
    text = "\n".join(commands)
    assert "aws ecr get-login-password" in text
    assert "docker login --username AWS --password-stdin" in text
    assert 'IMAGE_TAG="${CODEBUILD_RESOLVED_SOURCE_VERSION' in text
    build = shlex.split(next(c for c in commands if c.startswith("docker build")))
    assert build[-1] == "app"  # the build context is app/, where the Dockerfile is
    assert any(c.startswith('docker push "$IMAGE_REPOSITORY_URL:$IMAGE_TAG"') for c in commands)
    assert any("image URI" in c for c in spec["phases"]["post_build"]["commands"])
