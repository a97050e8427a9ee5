"""The shared load balancer may reach this colour's pods: its security group, admitted by the cluster security group
EKS puts on every node (and so on every pod's network interface: the VPC CNI gives pods the node's groups).

Any TCP port: the load balancer only ever connects to the targets its target groups hold, and those are the pods the
colour's load balancer controller registered for its TargetGroupBindings, at their Services' target ports. The rule
carries the check that the traffic stack has a target group for each of the colour's applications: without them the
colour's pods could never be reached, and a plan says so before anything is made (Terraform then evaluates nothing that
depends on the rule, the parent Application whose facts name the target groups among them).
"""

from __future__ import annotations

from collections.abc import Sequence

from cdktf import Fn, IResolvable, Precondition, TerraformResourceLifecycle, Token
from cdktf_cdktf_provider_aws.vpc_security_group_ingress_rule import VpcSecurityGroupIngressRule
from constructs import Construct

from model.routes import output_key


class LoadBalancerAccess(Construct):
    def __init__(
        self,
        scope: Construct,
        id_: str,
        *,
        colour: str,
        cluster_security_group_id: str,
        load_balancer_security_group_id: str,
        target_groups: IResolvable,
        applications: Sequence[str],
    ) -> None:
        """target_groups: the traffic stack's output, by colour then application (their output keys)."""
        super().__init__(scope, id_)
        present = Token.as_list(Fn.keys(Fn.lookup(target_groups, output_key(colour), {})))
        self.rule = VpcSecurityGroupIngressRule(
            self,
            "from-load-balancer",
            security_group_id=cluster_security_group_id,
            referenced_security_group_id=load_balancer_security_group_id,
            description="the shared load balancer (traffic stack), to the pods it has targets for",
            ip_protocol="tcp",
            from_port=1,
            to_port=65535,
            lifecycle=TerraformResourceLifecycle(
                precondition=[
                    Precondition(
                        condition=Fn.alltrue([Fn.contains(present, output_key(name)) for name in applications]),
                        error_message=f"the traffic stack has no target group for every application of {colour} yet (it "
                        f"has: {Token.as_string(Fn.join(', ', present))}): run `cdktf deploy traffic` first",
                    )
                ]
            ),
        )
