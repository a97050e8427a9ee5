"""Sample configuration shared by several test modules (no jsii import here: config tests stay fast)."""

from __future__ import annotations

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
