"""Common's state moves (the `common-state-moves` migration of model/migrations/): the Terraform address each resource
had before it was renamed, which common's `moved` blocks name (stacks/common.py wires them). Data only.

Before the component registry named every shared role after its component, two roles had other construct ids; before
applications were data, common made one image repository and its build project, for the one application it knew.
Terraform moves their state to the new addresses instead of replacing roles that running pods assume and a repository
with its images. Such state moves to the first application with a policy (its role) and the first with an image (its
repository and build): in a configuration upgraded as docs/upgrading.md says, the application that took the former
one's place.
"""

from __future__ import annotations

FORMER_PLATFORM_ADDRESSES = {
    "aws-load-balancer-controller": {
        "role": "aws_iam_role.lbc-role_F0F36708",
        "policy": "aws_iam_policy.lbc-role_policy_EA9D2542",
        "attachment": "aws_iam_role_policy_attachment.lbc-role_attachment_39CCB8BD",
    },
}
FORMER_APPLICATION_ROLE = {
    "role": "aws_iam_role.app-role_42B844E6",
    "policy": "aws_iam_policy.app-role_policy_547F7C8A",
    "attachment": "aws_iam_role_policy_attachment.app-role_attachment_B3DECB32",
}
FORMER_IMAGE_REPOSITORY = {
    "repo": "aws_ecr_repository.image_repo_5A10A6C5",
    "lifecycle": "aws_ecr_lifecycle_policy.image_lifecycle_FE8AA4C1",
}
FORMER_IMAGE_BUILD = {
    "logs": "aws_cloudwatch_log_group.image-build_logs_8FA068C3",
    "role": "aws_iam_role.image-build_role_7E9C5ED9",
    "policy": "aws_iam_role_policy.image-build_policy_01805513",
    "project": "aws_codebuild_project.image-build_project_EACDA54E",
}
