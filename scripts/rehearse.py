"""`make rehearse`: the first deploy, rehearsed against an AWS emulator in a scratch copy of the project, as an
identity that holds only the deployer policy (policies/deployer.py), with IAM enforced; and the traffic moved by an
identity that holds only the traffic operator's (policies/traffic_operator.json).

    make rehearse        # or: python -m scripts.rehearse [--keep]

One line per step with its time; exit 1 at the first failing step, with the end of its output.
The copy has its own cdktf.json, cdktf.out and state: the project's terraform-state/ and cdktf.out/ are never touched,
and nothing can reach a real account (every AWS_* variable points at the emulator). Steps: start the emulator (moto,
certificates issued at once) on a free loopback port; create the project's permissions boundary as the administrator
does, the deployer and the traffic operator (IAM users holding the deployer's managed policies, and the traffic
operator's), then enforce IAM; create the parent zone; `cdktf synth`; `cdktf deploy common`, then `cdktf deploy
traffic`, as the deployer; read back what each made; `terraform plan` of both with no drift; plan each colour's AWS
part against common's and traffic's state; a colour's pod registered in its target group (what its load balancer
controller does); `python -m tools.shift --to <it> --now --force` and `--status` as the traffic operator (the drain needs no
cluster); `cdktf deploy common` and `cdktf deploy traffic` again as the deployer, as a pipeline deploying from Git
would, and the live weights still the drain's (no deploy reverts a shift); `cdktf destroy traffic`, then `cdktf
destroy common`; every call of the deployer and of the operator was allowed.

What the enforced emulator proves is action coverage: moto authorizes most services against Resource `*` (it
knows no request's ARN) and evaluates no condition, so the deployer holds the policy with every Allow's
resource widened to `*` there, and without its conditioned Denies (moto would apply them to every call). It stores a
role's boundary without checking the policy exists and never applies one. Scoping, the boundary conditions and the
boundary itself are proven call by call in tests/test_deployer_calls.py and tests/test_deployer_boundary.py.

A colour cannot be applied to the emulator (it has no EKS add-ons, access entries or Pod Identity),
so each colour's AWS part (cluster, nodes, add-ons, access, Pod Identity associations) is planned
against common's real state instead, without its helm/kubernetes part (those providers need a
cluster to talk to).
"""

from __future__ import annotations

import argparse
import functools
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model.config import COMMON_STACK, applications, preview_hostname, public_hostname
from model.loading import ConfigError, config_from_dict, load_config
from model.paths import PROJECT_DIR
from model.routes import (
    APPLICATION_TAG,
    COLOUR_TAG,
    PUBLIC,
    ROUTE_TAG,
    TRAFFIC_STACK,
    load_balancer_name,
    target_group_name,
    weights_parameter,
)
from policies import boundary
from policies.deployer import Deployer, boundary_document, documents, operator_document, operator_policy_name
from scripts.emulator import CREDENTIALS, MotoProcess, client
from scripts.scratch_project import Project, Run
from tools.live_weights import parse

# The emulator issues certificates at once and has AWS's managed policies to attach.
EMULATOR_SETTINGS = {"MOTO_ACM_VALIDATION_WAIT": "0", "MOTO_IAM_LOAD_MANAGED_POLICIES": "true"}
EMULATOR_ACCOUNT = "123456789012"  # moto's default account
DEPLOYER_USER = "deployer"
OPERATOR_USER = "traffic-operator"  # holds only the traffic operator's policy
ADMIN_USER = "emulator-admin"  # reads back what the deployer made, and sets up what a user already has
ALLOW_ALL = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}


class StepFailedError(Exception):
    def __init__(self, step: str, output: str) -> None:
        super().__init__(step)
        self.step, self.output = step, output


class Rehearsal:
    """Runs the steps in order, one line each: `[  12.3 s] ok    what it did`."""

    def __init__(self, out: Callable[[str], None] = print) -> None:
        self.say = out
        self.started = time.monotonic()

    def step(self, name: str, action: Callable[[], str | Run]) -> None:
        """action: returns what to print after the name, or a Run that must have exited 0."""
        start = time.monotonic()
        result = action()
        seconds = time.monotonic() - start
        if isinstance(result, Run):
            if result.returncode != 0:
                self.say(f"  [{seconds:6.1f} s] FAIL  {name}: `{result.command}` exited {result.returncode}")
                raise StepFailedError(name, result.output)
            result = ""
        self.say(f"  [{seconds:6.1f} s] ok    {name}{': ' + result if result else ''}")


def rehearse(config: dict[str, Any], scratch: Path, out: Callable[[str], None] = print) -> None:
    """Every step against a fresh emulator in scratch; raises StepFailedError at the first failure."""
    show = Rehearsal(out)
    server = MotoProcess(EMULATOR_SETTINGS, iam=True)
    try:
        show.step("start the AWS emulator", lambda: f"moto on {server.ready()}, certificates issued at once")
        identities: list[Identities] = []
        show.step(
            "create the deployer and the traffic operator (IAM users holding only their policies), then enforce IAM",
            lambda: _enforced(server, config, identities),
        )
        admin, deployer, operator = identities[0].admin, identities[0].deployer, identities[0].operator
        project = Project.create(scratch / "project", server.endpoint, config, admin)
        deploy_common(project, show, as_deployer=deployer)
        deploy_traffic(project, show, as_deployer=deployer)
        show.step("read back what common made", lambda: _read_back(project))
        show.step("read back what traffic made", lambda: describe_traffic(read_traffic(project)))
        for stack in (COMMON_STACK, TRAFFIC_STACK):
            show.step(f"terraform plan {stack} as the deployer: no drift", functools.partial(_no_drift, project, deployer, stack))
        colours = list(project.settings.clusters)
        show.step(
            f"plan each colour's AWS part against common's and traffic's state as the deployer ({', '.join(colours)}, "
            "in one Terraform run)",
            lambda: _colour_plans(project, colours, deployer),
        )
        target, before = drain_target(project), live_weights(project)
        show.step(
            f"{target}'s pod registered in its target groups (what its controller does)", lambda: register_pod(project, target)
        )
        show.step(
            f"python -m tools.shift --to {target} --now --force as the traffic operator",
            lambda: shift_now(project, target, operator),
        )
        show.step(f"the rules and the weights moved to {target}", lambda: _moved(project, target, before))
        show.step("python -m tools.shift --status as the traffic operator", lambda: shift_status(project, operator))
        drained = live_weights(project)
        for stack in (COMMON_STACK, TRAFFIC_STACK):
            show.step(
                f"cdktf deploy {stack} again as the deployer, as a pipeline would (of that synth: --skip-synth)",
                functools.partial(project.run, "cdktf", "deploy", stack, "--skip-synth", "--auto-approve", env=deployer),
            )
        show.step("no deploy reverted the shift: the weights and every public rule", lambda: _kept(project, drained))
        for stack in (TRAFFIC_STACK, COMMON_STACK):
            show.step(
                f"cdktf destroy {stack} as the deployer (of that synth: --skip-synth)",
                functools.partial(project.run, "cdktf", "destroy", stack, "--skip-synth", "--auto-approve", env=deployer),
            )
        show.step("every call of the deployer and of the traffic operator was allowed", lambda: calls_allowed(server))
    finally:
        server.stop()
    seconds = time.monotonic() - show.started
    out(
        f"rehearsal passed in {seconds:.0f} s: as the deployer, common and traffic deploy, read back without drift and "
        "serve every colour's plan; the traffic operator drains to a colour; no deploy reverts it; both stacks go"
    )


@dataclass(frozen=True)
class Identities:
    """Credentials on an emulator that enforces IAM, as AWS_* variables."""

    admin: dict[str, str]
    deployer: dict[str, str]
    operator: dict[str, str]  # the traffic operator: may only move traffic


def enforce_deployer(server: MotoProcess, config: dict[str, Any]) -> Identities:
    """On a fresh emulator (IAM not enforced yet): an admin, the project's permissions boundary (created by the admin,
    attached to no one), the deployer holding the deployer's managed policies and the traffic operator holding its own,
    filled for config, created and attached as README says; then IAM enforced. Nothing else may run on it meanwhile."""
    region = config_from_dict(config).region
    iam = client("iam", server.endpoint, region)
    admin = _user(iam, ADMIN_USER)
    iam.put_user_policy(UserName=ADMIN_USER, PolicyName="everything", PolicyDocument=json.dumps(ALLOW_ALL))
    deployer = _user(iam, DEPLOYER_USER)
    filled_for = Deployer(config_from_dict(config), EMULATOR_ACCOUNT)
    iam.create_policy(
        PolicyName=boundary.policy_name(filled_for.config.project), PolicyDocument=json.dumps(boundary_document(filled_for))
    )
    for name, document in documents(filled_for).items():
        arn = iam.create_policy(PolicyName=name, PolicyDocument=json.dumps(widened(document)))["Policy"]["Arn"]
        iam.attach_user_policy(UserName=DEPLOYER_USER, PolicyArn=arn)
    operator = _user(iam, OPERATOR_USER)
    name = operator_policy_name(filled_for.config.project)
    arn = iam.create_policy(PolicyName=name, PolicyDocument=json.dumps(widened(operator_document(filled_for))))["Policy"]
    iam.attach_user_policy(UserName=OPERATOR_USER, PolicyArn=arn["Arn"])
    server.enforce_iam()
    return Identities(admin, deployer, operator)


# moto names an action by the service its request was signed for (the SigV4 credential scope), which for a few
# services is not IAM's prefix (moto/iam/access_control.py, IAMRequestBase: f"{self._service}:{action}"): the Resource
# Groups Tagging API is signed for `tagging`, its IAM actions are `tag:` (Service Authorization Reference, "Actions,
# resources, and condition keys for Amazon Resource Group Tagging API").
SIGNED_AS = {"tag": "tagging"}


def signed_as(action: str) -> str:
    """An IAM action as moto names it."""
    prefix, _, name = action.partition(":")
    return f"{SIGNED_AS.get(prefix, prefix)}:{name}"


def as_iam(action: str) -> str:
    """An action as moto names it, by IAM's prefix."""
    prefix, _, name = action.partition(":")
    return f"{next((iam for iam, signed in SIGNED_AS.items() if signed == prefix), prefix)}:{name}"


def widened(document: dict[str, Any]) -> dict[str, Any]:
    """The document as the emulator can enforce it: every Allow on Resource `*`. moto 5.2 authorizes most services'
    requests against `*` (it knows no request's ARN), so a scoped Allow would never match there; its conditions it
    does not evaluate. A Deny with a condition is left out: moto takes a condition it cannot evaluate as met (only
    StringEquals on sts:ExternalId is known to it), so `NeverPassARoleToAnotherService` would refuse every PassRole
    there. The actions, and every unconditioned Deny, stay as they are: the emulator proves which actions are needed."""
    return {
        **document,
        "Statement": [
            {**s, "Resource": "*", "Action": _signed_too(s["Action"])} if s["Effect"] == "Allow" else s
            for s in document["Statement"]
            if s["Effect"] == "Allow" or "Condition" not in s
        ],
    }


def _signed_too(actions: str | list[str]) -> list[str]:
    """The actions, and each by the name moto gives it where that differs (signed_as)."""
    listed = [actions] if isinstance(actions, str) else list(actions)
    return list(dict.fromkeys([*listed, *(signed_as(action) for action in listed)]))


def calls_allowed(server: MotoProcess) -> str:
    """Every call the deployer and the operator made since IAM was enforced, allowed; raises StepFailedError naming
    each refused one."""
    said = []
    for user in (DEPLOYER_USER, OPERATOR_USER):
        made = calls_of(server, user)
        refused = sorted({action for outcome, action in made if outcome != "allowed"})
        if refused:
            raise StepFailedError("every call was allowed", f"AccessDenied for the {user}: {', '.join(refused)}")
        said.append(f"{user} {len(made)} calls of {len({action for _, action in made})} actions")
    return f"{', '.join(said)}; no AccessDenied"


def calls_of(server: MotoProcess, user: str) -> list[tuple[str, str]]:
    """(allowed|denied, service:Action) of each call an IAM user made since IAM was enforced."""
    return [(outcome, as_iam(action)) for outcome, caller, action in server.judged() if caller.endswith(f":user/{user}")]


def _user(iam: Any, name: str) -> dict[str, str]:
    iam.create_user(UserName=name)
    key = iam.create_access_key(UserName=name)["AccessKey"]
    return {**CREDENTIALS, "AWS_ACCESS_KEY_ID": key["AccessKeyId"], "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"]}


def _enforced(server: MotoProcess, config: dict[str, Any], identities: list[Identities]) -> str:
    identities.append(enforce_deployer(server, config))
    policies = len(documents(Deployer(config_from_dict(config), EMULATOR_ACCOUNT)))
    return f"{DEPLOYER_USER} holds {policies} managed policies, {OPERATOR_USER} 1"


def deploy_common(project: Project, show: Rehearsal, as_deployer: dict[str, str] | None = None) -> None:
    """What a user does first: the parent zone exists already; synth, init, `cdktf deploy common` (as_deployer:
    with the deployer's credentials)."""
    parent = project.settings.dns.parent_zone
    show.step(f"create the parent zone {parent}", lambda: create_parent_zone(project, parent))
    show.step("cdktf synth", lambda: project.run("cdktf", "synth"))
    show.step(
        "terraform init common (offline: providers from the local mirror when there is one)", lambda: project.init(COMMON_STACK)
    )
    # The CLI's own flag: deploy what that synth wrote (a plain `cdktf deploy common` would synthesize it again).
    show.step(
        f"cdktf deploy common{' as the deployer' if as_deployer else ''} (of that synth: --skip-synth)",
        lambda: project.run("cdktf", "deploy", COMMON_STACK, "--skip-synth", "--auto-approve", env=as_deployer),
    )


def deploy_traffic(project: Project, show: Rehearsal, as_deployer: dict[str, str] | None = None) -> None:
    """After common: `cdktf deploy traffic` (the shared load balancer's ~60 s are the provider's own waits)."""
    show.step("terraform init traffic", lambda: project.init(TRAFFIC_STACK))
    show.step(
        f"cdktf deploy traffic{' as the deployer' if as_deployer else ''} (of that synth: --skip-synth)",
        lambda: project.run("cdktf", "deploy", TRAFFIC_STACK, "--skip-synth", "--auto-approve", env=as_deployer),
    )


# --- the traffic stack, as AWS holds it: read with boto3 (the admin's), never from Terraform's state ----------------


@dataclass(frozen=True)
class Rule:
    arn: str
    host: str
    tags: dict[str, str]
    forwards: dict[str, int]  # target group name -> weight
    priority: str


@dataclass(frozen=True)
class Traffic:
    """The shared load balancer and what hangs off it, as the emulator holds them."""

    load_balancer: dict[str, Any]
    listeners: dict[int, dict[str, Any]]  # by port
    target_groups: dict[str, dict[str, str]]  # name -> tags
    rules: list[Rule]  # the HTTPS listener's, but the default
    records: dict[str, dict[str, Any]]  # the sub-zone's A records by name (without the trailing dot)
    weights: dict[str, int]  # the weights parameter's colours


def read_traffic(project: Project) -> Traffic:
    elbv2, config = project.aws("elbv2"), project.settings
    (balancer,) = elbv2.describe_load_balancers(Names=[load_balancer_name(config.project)])["LoadBalancers"]
    listeners = {
        item["Port"]: item for item in elbv2.describe_listeners(LoadBalancerArn=balancer["LoadBalancerArn"])["Listeners"]
    }
    groups = elbv2.describe_target_groups(LoadBalancerArn=balancer["LoadBalancerArn"])["TargetGroups"]
    tags = _tags(elbv2, [g["TargetGroupArn"] for g in groups])
    names = {g["TargetGroupArn"]: g["TargetGroupName"] for g in groups}
    # A target group no rule forwards to is not in the load balancer's listing: read each of the stack's by name.
    for app in applications(config):
        for colour in config.clusters:
            name = target_group_name(config.project, app.name, colour)
            if name not in names.values():
                (group,) = elbv2.describe_target_groups(Names=[name])["TargetGroups"]
                names[group["TargetGroupArn"]] = name
                tags |= _tags(elbv2, [group["TargetGroupArn"]])
    raw = [r for r in elbv2.describe_rules(ListenerArn=listeners[443]["ListenerArn"])["Rules"] if not r["IsDefault"]]
    rule_tags = _tags(elbv2, [r["RuleArn"] for r in raw])
    rules = [
        Rule(
            arn=r["RuleArn"],
            host=next(c["HostHeaderConfig"]["Values"][0] for c in r["Conditions"] if c["Field"] == "host-header"),
            tags=rule_tags[r["RuleArn"]],
            forwards=_forwards(r, names),
            priority=r["Priority"],
        )
        for r in raw
    ]
    route53 = project.aws("route53")
    (zone,) = [z for z in route53.list_hosted_zones()["HostedZones"] if z["Name"] == f"{config.dns.zone_name}."]
    records = {
        r["Name"].rstrip("."): r
        for r in route53.list_resource_record_sets(HostedZoneId=zone["Id"])["ResourceRecordSets"]
        if r["Type"] == "A"
    }
    name = weights_parameter(config.project)
    value = project.aws("ssm").get_parameter(Name=name)["Parameter"]["Value"]
    weights = parse(name, value).colours  # each colour's, as the guards read it (tools/live_weights.py)
    return Traffic(balancer, listeners, {names[arn]: tags[arn] for arn in names}, rules, records, weights)


def describe_traffic(traffic: Traffic) -> str:
    public = sum(1 for r in traffic.rules if r.tags.get(ROUTE_TAG) == PUBLIC)
    return (
        f"load balancer {traffic.load_balancer['LoadBalancerName']} ({scheme(traffic.load_balancer)}), listeners "
        f"{', '.join(str(port) for port in sorted(traffic.listeners))}, {len(traffic.target_groups)} target groups, "
        f"{public} public and {len(traffic.rules) - public} preview rules, {len(traffic.records)} alias records, weights "
        f"{traffic.weights}"
    )


def scheme(balancer: dict[str, Any]) -> str:
    """AWS's default when the create call names none, as the provider's does for `internal = false` (the emulator
    echoes only a scheme it was sent)."""
    return str(balancer.get("Scheme", "internet-facing"))


def expected_hosts(project: Project) -> dict[str, str | None]:
    """Every host the traffic stack routes: public (None: every colour) and each colour's preview host."""
    config = project.settings
    hosts: dict[str, str | None] = {}
    for app in applications(config):
        hosts[public_hostname(config, app)] = None
        hosts |= {preview_hostname(config, app, colour): colour for colour in config.clusters}
    return hosts


def live_weights(project: Project) -> dict[str, Any]:
    """What the traffic is split by now: the weights parameter, and each public rule's forward by colour."""
    traffic = read_traffic(project)
    colour_of = {name: tags.get(COLOUR_TAG, "") for name, tags in traffic.target_groups.items()}
    rules = {
        r.tags[APPLICATION_TAG]: {colour_of[group]: weight for group, weight in r.forwards.items()}
        for r in traffic.rules
        if r.tags.get(ROUTE_TAG) == PUBLIC
    }
    return {"parameter": traffic.weights, "rules": rules}


def drain_target(project: Project) -> str:
    """The colour the rehearsal drains to: one without weight now."""
    weights = project.settings.weights
    return next(colour for colour, weight in weights.items() if weight == 0)


def register_pod(project: Project, colour: str) -> str:
    """What the colour's load balancer controller does for a ready pod: register it in the colour's target groups (the
    emulator reports a registered target healthy), so the drain finds the target able to take the traffic."""
    elbv2, config = project.aws("elbv2"), project.settings
    names = [target_group_name(config.project, app.name, colour) for app in applications(config)]
    for number, name in enumerate(names):
        (group,) = elbv2.describe_target_groups(Names=[name])["TargetGroups"]
        elbv2.register_targets(TargetGroupArn=group["TargetGroupArn"], Targets=[{"Id": f"10.0.100.{10 + number}", "Port": 8080}])
    return f"{', '.join(names)}: one healthy target each"


def shift_now(project: Project, colour: str, env: dict[str, str]) -> Run:
    """`python -m tools.shift --to <colour> --now --force` with env's credentials (the operator's), against the
    emulator. --force: the colour without weight is the one being built, which follows a branch (main, in the shipped
    configuration), and the drain refuses weight to a branch without it; the targets are healthy (register_pod)."""
    config = str(project.root / "cdktf.json")
    return project.run("python", "-m", "tools.shift", "--to", colour, "--now", "--force", "--config", config, env=env)


def shift_status(project: Project, env: dict[str, str]) -> Run:
    return project.run("python", "-m", "tools.shift", "--status", "--config", str(project.root / "cdktf.json"), env=env)


def _moved(project: Project, target: str, before: dict[str, Any]) -> str:
    after = live_weights(project)
    total = sum(before["parameter"].values())
    wanted = {colour: total if colour == target else 0 for colour in before["parameter"]}
    if after["parameter"] != wanted or any(rule != wanted for rule in after["rules"].values()):
        raise StepFailedError("the drain", f"wanted {wanted} everywhere, AWS holds {after}")
    return f"{before['parameter']} -> {after['parameter']}, in the parameter and {len(after['rules'])} public rule(s)"


def _kept(project: Project, drained: dict[str, Any]) -> str:
    now = live_weights(project)
    if now != drained:
        raise StepFailedError("no deploy reverted the shift", f"after the deploys {now}, the drain left {drained}")
    return f"still {now['parameter']}"


def _forwards(rule: dict[str, Any], names: dict[str, str]) -> dict[str, int]:
    (action,) = [a for a in rule["Actions"] if a["Type"] == "forward"]
    tuples = action.get("ForwardConfig", {}).get("TargetGroups") or [{"TargetGroupArn": action["TargetGroupArn"], "Weight": 1}]
    return {names.get(t["TargetGroupArn"], t["TargetGroupArn"]): int(t.get("Weight", 1)) for t in tuples}


def _tags(elbv2: Any, arns: list[str]) -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    for start in range(0, len(arns), 20):
        for item in elbv2.describe_tags(ResourceArns=arns[start : start + 20])["TagDescriptions"]:
            found[item["ResourceArn"]] = {tag["Key"]: tag["Value"] for tag in item.get("Tags", [])}
    return found


def create_parent_zone(project: Project, name: str) -> str:
    project.aws("route53").create_hosted_zone(Name=name, CallerReference="rehearsal-parent")
    return "the zone you already have in your account"


def _read_back(project: Project) -> str:
    outputs = json.loads(project.run("terraform", "output", "-json", cwd=project.stack_dir(COMMON_STACK)).output)
    value = {name: output["value"] for name, output in outputs.items()}
    certificate = project.aws("acm").describe_certificate(CertificateArn=value["certificate_arn"])["Certificate"]
    table = project.aws("dynamodb").describe_table(TableName=value["table_name"])["Table"]
    if certificate["Status"] != "ISSUED" or table["TableStatus"] != "ACTIVE":
        raise StepFailedError("read back", f"certificate {certificate['Status']}, table {table['TableStatus']}")
    return (
        f"VPC {value['vpc_id']} with {len(value['private_subnet_ids'])} private subnets, zone {value['zone_name']}, "
        f"certificate ISSUED, table {value['table_name']} ACTIVE, {len(outputs)} outputs"
    )


def _no_drift(project: Project, env: dict[str, str], stack: str = COMMON_STACK) -> Run:
    return project.run(
        "terraform", "plan", "-detailed-exitcode", "-input=false", "-no-color", cwd=project.stack_dir(stack), env=env
    )


def _colour_plans(project: Project, colours: list[str], env: dict[str, str]) -> str | Run:
    plan, found = project.plan_aws_parts({colour: project.stack_dir(colour) for colour in colours}, env)
    if plan.returncode != 0:
        return plan
    kinds = sorted({address.split(".")[0].removeprefix("aws_") for planned in found.values() for address in planned})
    counts = ", ".join(f"{colour} {len(planned)}" for colour, planned in found.items())
    return f"resources: {counts} ({', '.join(kinds)})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make rehearse", description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the scratch copy (its path is printed)")
    parser.add_argument("--config", type=Path, default=PROJECT_DIR / "cdktf.json", help="the project file to rehearse")
    args = parser.parse_args(argv)
    try:
        raw = load_config(args.config)
    except ConfigError as err:
        print(err, file=sys.stderr)
        return 2
    # The project's configuration, as data: protection off, or the rehearsal's destroy could not finish.
    config = {**raw.model_dump(mode="json", exclude={"state"}), "deletion_protection": False}
    config["table"] = {**config["table"], "deletion_protection": False}
    scratch = Path(tempfile.mkdtemp(prefix="rehearsal-", dir=PROJECT_DIR / ".cache"))
    print(f"rehearsal in {scratch} (deletion protection off there; your cdktf.out/ and terraform-state/ are not touched)")
    try:
        rehearse(config, scratch)
    except StepFailedError as failed:
        print(f"rehearsal FAILED at: {failed.step}; the end of its output:\n{failed.output[-4000:]}", file=sys.stderr)
        print(f"the scratch copy stays for a look: {scratch}", file=sys.stderr)
        return 1
    if not args.keep:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
