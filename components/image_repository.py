"""ECR repository for one application's image: immutable tags, scan on push, lifecycle policy."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from cdktf_cdktf_provider_aws.ecr_lifecycle_policy import EcrLifecyclePolicy
from cdktf_cdktf_provider_aws.ecr_repository import EcrRepository, EcrRepositoryEncryptionConfiguration
from constructs import Construct

import policies


class ImageRepository(Construct):
    def __init__(
        self,
        scope: Construct,
        id_: str,
        *,
        repository_name: str,
        protected: bool,
        moved_from: Mapping[str, str] = MappingProxyType({}),
    ) -> None:
        """protected: on by default in config (deletion_protection). On, ECR refuses to delete a repository holding
        images (no force_delete) and common's deletion guard stops `cdktf destroy common` first; off, the
        destroy deletes it with its images. moved_from: the Terraform address each of its resources had before
        ("repo", "lifecycle"); default none. Terraform moves that state here instead of replacing the repository."""
        super().__init__(scope, id_)
        repo = EcrRepository(
            self,
            "repo",
            name=repository_name,
            # A tag names one image forever, so blue and green can never run different bits under one tag.
            image_tag_mutability="IMMUTABLE",
            image_scanning_configuration={"scan_on_push": True},
            # KMS with the AWS-managed key: no key to run, and its use shows up in CloudTrail.
            encryption_configuration=[EcrRepositoryEncryptionConfiguration(encryption_type="KMS")],
            force_delete=not protected,
        )
        # Untagged images only: the tag a lagging colour runs must still be there when its pods reschedule.
        lifecycle = EcrLifecyclePolicy(self, "lifecycle", repository=repo.name, policy=policies.render("ecr_lifecycle"))
        made = {"repo": repo, "lifecycle": lifecycle}
        for part, address in moved_from.items():
            made[part].move_from_id(address)
        self.repository_url = repo.repository_url
        self.repository_arn = repo.arn
