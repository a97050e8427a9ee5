"""The stack's own resources of one type as AWS holds them, found by the default tags every resource of a stack carries
(model/tags.py) in one call to the Resource Groups Tagging API: what a replacement guard reads the running resource
from. A fresh account has none, and its guards pass."""

from __future__ import annotations

from cdktf import TerraformProvider
from cdktf_cdktf_provider_aws.data_aws_resourcegroupstaggingapi_resources import (
    DataAwsResourcegroupstaggingapiResources,
    DataAwsResourcegroupstaggingapiResourcesTagFilter,
)
from constructs import Construct

from model.tags import PROJECT_TAG, STACK_TAG


def stack_tagged(
    scope: Construct,
    id_: str,
    *,
    resource_type: str,
    project: str,
    stack: str,
    provider: TerraformProvider | None = None,
) -> DataAwsResourcegroupstaggingapiResources:
    """The data source of the stack's resources of `resource_type` (the Tagging API's filter, `dynamodb:table` say);
    provider: where the API lists them (a global service's in us-east-1 only), default the stack's."""
    return DataAwsResourcegroupstaggingapiResources(
        scope,
        id_,
        provider=provider,
        resource_type_filters=[resource_type],
        tag_filter=[
            DataAwsResourcegroupstaggingapiResourcesTagFilter(key=PROJECT_TAG, values=[project]),
            DataAwsResourcegroupstaggingapiResourcesTagFilter(key=STACK_TAG, values=[stack]),
        ],
    )
