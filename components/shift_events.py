"""The shift's events topic: `python -m tools.shift` publishes one JSON event per start, step, verdict, roll-back,
drain and end to it (tools/shift/events.py); a team subscribes e-mail, a chat channel or a webhook (docs/shift-events.md).

Encrypted with AWS's managed key for SNS (`alias/aws/sns`), not a key of the project's: the traffic stack has a key of
its own only with traffic.waf on, and that key's policy (policies/kms_key.json) names no SNS use, so each publisher
would need kms:GenerateDataKey and kms:Decrypt in its IAM policy as well (the traffic operator's, the deployer's), for
events that carry no secret (colours, weights, who ran the shift). AWS's key lets any principal of this account that
SNS lets publish use it through SNS only (kms:ViaService). What it cannot do is let another account or an AWS service
(CloudWatch alarms, EventBridge) publish: this topic is the shift's alone, which the topic policy says as well.
"""

from __future__ import annotations

from cdktf_cdktf_provider_aws.data_aws_caller_identity import DataAwsCallerIdentity
from cdktf_cdktf_provider_aws.data_aws_partition import DataAwsPartition
from cdktf_cdktf_provider_aws.sns_topic import SnsTopic
from cdktf_cdktf_provider_aws.sns_topic_policy import SnsTopicPolicy
from constructs import Construct

import policies

# AWS's managed key for SNS (above: why not the project's).
SNS_MANAGED_KEY = "alias/aws/sns"


class ShiftEvents(Construct):
    def __init__(self, scope: Construct, id_: str, *, topic_name: str) -> None:
        """topic_name: the name the shift finds the topic by (model/routes.py events_topic_name)."""
        super().__init__(scope, id_)
        topic = SnsTopic(self, "topic", name=topic_name, kms_master_key_id=SNS_MANAGED_KEY)
        # Only this account's principals publish (each still needs sns:Publish in its IAM policy). SNS's default policy
        # lets any principal whose request names this account as its source owner (AWS:SourceOwner) publish, subscribe
        # and change the topic's attributes: wider than the shift's events need.
        SnsTopicPolicy(
            self,
            "policy",
            arn=topic.arn,
            policy=policies.render(
                "sns_topic",
                ACCOUNT_ID=DataAwsCallerIdentity(self, "account").account_id,
                PARTITION=DataAwsPartition(self, "partition").partition,
                TOPIC_ARN=topic.arn,
            ),
        )
        self.topic_arn = topic.arn
