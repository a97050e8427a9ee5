"""Sample configuration shared by several test modules, and the project file around a config
(no jsii import here: config tests stay fast)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# A configuration with the image build switched on (a made-up connection and repository).
CONNECTION_ARN = "arn:aws:codeconnections:ap-northeast-1:123456789012:connection/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"
REPO_URL = "https://github.com/acme/eks-blue-green.git"
WITH_IMAGE_BUILD = {"image": {"build_connection_arn": CONNECTION_ARN}, "gitops": {"repo_url": REPO_URL}}
# Every optional part switched on: image build, the app delivered by Terraform, extra cluster admins.
EVERYTHING_ON = {
    **WITH_IMAGE_BUILD,
    "app": {"delivery": "helm"},
    "eks": {"admin_role_arns": ["arn:aws:iam::123456789012:role/admins"]},
}


def write_project(directory: Path, config: Any, *, in_file: bool = False) -> Path:
    """directory/cdktf.json holding config as `context.config`, or, with in_file, naming
    directory/config.json that holds it. Returns the cdktf.json path."""
    cdktf = {"language": "python", "app": "python main.py", "context": {"config": "config.json" if in_file else config}}
    if in_file:
        (directory / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    path = directory / "cdktf.json"
    path.write_text(json.dumps(cdktf, indent=2) + "\n")
    return path
