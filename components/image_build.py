"""CodeBuild project that builds an application's image from its Git repository and pushes it to its ECR repository."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from cdktf_cdktf_provider_aws.cloudwatch_log_group import CloudwatchLogGroup
from cdktf_cdktf_provider_aws.codebuild_project import CodebuildProject, CodebuildProjectEnvironmentEnvironmentVariable
from cdktf_cdktf_provider_aws.iam_role import IamRole
from cdktf_cdktf_provider_aws.iam_role_policy import IamRolePolicy
from constructs import Construct

import policies

BUILD_IMAGE = "aws/codebuild/standard:7.0"
LOG_RETENTION_DAYS = 365


class ImageBuild(Construct):
    def __init__(
        self,
        scope: Construct,
        id_: str,
        *,
        name: str,
        repository_url: str,
        repository_arn: str,
        source_url: str,
        source_type: str,
        buildspec: str,
        connection_arn: str,
        account_id: str,
        kms_key_arn: str,
        permissions_boundary: str,
        moved_from: Mapping[str, str] = MappingProxyType({}),
    ) -> None:
        """buildspec: its path in the source repository. permissions_boundary: the project's boundary's ARN
        (policies/boundary.py), carried by the build's role. moved_from: the Terraform address each of its resources had
        before ("logs", "role", "policy", "project"); default none. Terraform moves that state here."""
        super().__init__(scope, id_)
        logs = CloudwatchLogGroup(
            self, "logs", name=f"/aws/codebuild/{name}", retention_in_days=LOG_RETENTION_DAYS, kms_key_id=kms_key_arn
        )
        role = IamRole(
            self,
            "role",
            name=name,
            assume_role_policy=policies.render("codebuild_trust", ACCOUNT_ID=account_id),
            permissions_boundary=permissions_boundary,
        )
        # This repository, these logs, this connection: the build cannot push anywhere else.
        policy = IamRolePolicy(
            self,
            "policy",
            role=role.id,
            policy=policies.render(
                "codebuild_image_build",
                LOG_GROUP_ARN=logs.arn,
                REPOSITORY_ARN=repository_arn,
                CONNECTION_ARN=connection_arn,
                # The action prefix matches the ARN's: codeconnections, or codestar-connections for older connections.
                CONNECTION_SERVICE=connection_arn.split(":")[2],
            ),
        )
        project = CodebuildProject(
            self,
            "project",
            name=name,
            description=f"Builds {buildspec} and pushes the image to {repository_url}, tagged with the commit id",
            service_role=role.arn,
            source={
                "type": source_type,
                "location": source_url,
                "buildspec": buildspec,
                "git_clone_depth": 1,
                "auth": {"type": "CODECONNECTIONS", "resource": connection_arn},
            },
            artifacts={"type": "NO_ARTIFACTS"},
            environment={
                "compute_type": "BUILD_GENERAL1_SMALL",
                "image": BUILD_IMAGE,
                "type": "LINUX_CONTAINER",
                # Docker builds need the privileged daemon.
                "privileged_mode": True,
                "environment_variable": [
                    CodebuildProjectEnvironmentEnvironmentVariable(name="IMAGE_REPOSITORY_URL", value=repository_url)
                ],
            },
            logs_config={"cloudwatch_logs": {"group_name": logs.name}},
        )
        made = {"logs": logs, "role": role, "policy": policy, "project": project}
        for part, address in moved_from.items():
            made[part].move_from_id(address)
