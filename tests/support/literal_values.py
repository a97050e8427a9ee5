"""A configuration whose strings look like Terraform expressions, and what Terraform makes of its synthesis (a background
check, tests/support/background_checks.py): `terraform validate` of every stack, and a plan against the AWS emulator
of common (its tags, its application's role and policy) and of the App of Apps' values as a colour hands them to its
root release (the helm provider cannot be installed here: a `terraform_data` holds what the release would be given,
its references read from stand-in states of common and traffic). One root holds it all, at the depth of a stack's
directory (`<outdir>/checks/root`), so the colour's relative remote state paths read what they would read from
`<outdir>/stacks/<colour>`: the stand-in states sit in the configured state directory, whose name looks like an
expression too.

The values (each would be evaluated, fail, or break cdktf's references if it reached Terraform as written):
`${aws:username}` in an application's policy file, `${POD_NAME}` and others in its Helm values, `${file(...)}` in tags,
`%{ if true }x%{ endif }` (a directive), a `${` that never closes, cdktf's own reference marker."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from model.config import COMMON_STACK, Config, applications
from model.contract import LIST_OUTPUTS, TRAFFIC_DESCRIPTIONS, TrafficOutput, common_outputs
from model.literal import literal
from model.platform import PARENT_APPLICATION
from model.routes import TRAFFIC_STACK, output_key
from scripts.ci.stacks import aws_part
from scripts.emulator import client
from tests.support.configs import example_raw, release_of, validated
from tests.support.terraform import run, write_root

if TYPE_CHECKING:
    # Not at run time: the background checks' plugin imports this module before any test needs the jsii runtime.
    from tests.support.synth import Synthesized

REGION = "ap-northeast-1"
PARENT_ZONE = "example.com"  # the example's dns.parent_zone: common looks it up
APPLICATION = "reports"
POLICY = "tests/fixtures/applications/reports/policy.json"
IAM_VARIABLE = "${aws:username}"  # in the policy file
HOST_FILE = '${file("/etc/hostname")}'
DIRECTIVE = "%{ if true }x%{ endif }"
POD_NAME = "${POD_NAME}"
UNCLOSED = "costs 5$ or ${"
CDKTF_MARKER = "${TfToken[TOKEN.1]}"
# The Helm values of the application: each kind of value, and a key that looks like an expression.
VALUES: dict[str, Any] = {
    "env": [{"name": "POD", "value": POD_NAME}],
    "greeting": DIRECTIVE,
    "price": UNCLOSED,
    "marker": CDKTF_MARKER,
    "${key}": "a key",
}
TAG_KEY = "${path.cwd}"
REPO_URL = "https://git.example.com/${ORG}/reports.git"
REVISION = "reports-${BUILD}"
GITOPS_REVISION = "release-${GIT_TAG}"
DESCRIPTION = f"reports, {DIRECTIVE}"
SSO_NAME = "Okta ${SSO}"
SSO_ISSUER = "https://acme.okta.com/${tenant}"
ADMIN_GROUP = "platform-${team}"
CREDENTIAL_URL = "https://git.example.com/${ORG}/"  # opens REPO_URL
STATE_DIRECTORY = "state-${terraform.workspace}"
# Strings that must come back from Terraform as written when `literal` has escaped them (a module of their own).
SAMPLES = (IAM_VARIABLE, DIRECTIVE, UNCLOSED, CDKTF_MARKER, "$${x}", "$$${x}", "%%{x}", "a$", "$", "}${a ${b}", "%{", "${}")
# The root's modules: every stack (validated), the release's stand-in and the samples (planned with common).
RELEASE, SAMPLES_MODULE = "release", "samples"


def literal_config(root: Path, secret: Path) -> dict[str, Any]:
    """The shipped example and an application of every such value, its state under root, a tag reading secret."""
    raw = example_raw()
    reports = {
        "host": "reports",
        "description": DESCRIPTION,
        "source": {"repo_url": REPO_URL, "path": "charts/reports", "revision": REVISION},
        "policy": POLICY,
        "values": VALUES,
    }
    apps = {**raw["applications"], APPLICATION: reports}
    clusters = dict(raw["clusters"])
    for colour, entry in clusters.items():
        mine = {**entry.get("applications", {}), **release_of({APPLICATION: reports})}
        clusters[colour] = {**entry, "applications": mine} if entry.get("weight") else entry
    serving = [colour for colour, entry in clusters.items() if entry.get("weight")]
    standby = next(colour for colour in clusters if colour not in serving)
    clusters[standby] = {**clusters[standby], "gitops_revision": GITOPS_REVISION}
    return {
        **raw,
        "tags": {**raw.get("tags", {}), "Host": HOST_FILE, "Secret": f'${{file("{secret}")}}', "Note": DIRECTIVE, TAG_KEY: "k"},
        "applications": apps,
        "clusters": clusters,
        "gitops": {
            **raw["gitops"],
            "credentials": {**raw["gitops"]["credentials"], "reports": {"url": CREDENTIAL_URL, "secret": "eks-bg/reports"}},
        },
        "argocd": {
            "url": "https://argocd.acme.internal",
            "sso": {"name": SSO_NAME, "issuer": SSO_ISSUER, "client_id": "0oa8f2acme", "client_secret": "sso"},
            "admin_groups": [ADMIN_GROUP],
        },
        "state": {"backend": "local", "directory": str(root / STATE_DIRECTORY)},
    }


@dataclass(frozen=True)
class LiteralValues:
    config: Config
    app: Synthesized
    secret: str  # what the file a tag names holds: nowhere in a plan, if no tag is evaluated

    @property
    def state_directory(self) -> Path:
        return self.app.outdir.parent / STATE_DIRECTORY

    @property
    def standby(self) -> str:
        """The colour without weight, which follows GITOPS_REVISION."""
        return next(colour for colour, cluster in self.config.clusters.items() if not cluster.weight)


def synthesize_literal_values(root: Path) -> LiteralValues:
    """literal_config synthesized into root/cdktf.out (jsii: main thread only), with the file its tag names."""
    from tests.support.synth import synthesize

    secret = root / "secret"
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text(f"secret-{uuid.uuid4().hex}")
    config = validated(literal_config(root, secret))
    return LiteralValues(config, synthesize(config, root / "cdktf.out"), secret.read_text())


def parent_release(colour_stack: Mapping[str, Any]) -> dict[str, Any]:
    """The colour's root release (the App of Apps) as synthesized."""
    (release,) = [r for r in colour_stack["resource"]["helm_release"].values() if r["name"] == PARENT_APPLICATION]
    return dict(release)


def release_module(colour_stack: Mapping[str, Any]) -> dict[str, Any]:
    """What the colour's root release is handed, on a `terraform_data`, with the remote states it reads as synthesized."""
    release = parent_release(colour_stack)
    given = {key: release[key] for key in ("name", "namespace", "values")}
    return {
        "data": {"terraform_remote_state": colour_stack["data"]["terraform_remote_state"]},
        "resource": {"terraform_data": {RELEASE: {"input": given}}},
    }


def samples_module() -> dict[str, Any]:
    return {"resource": {"terraform_data": {SAMPLES_MODULE: {"input": [literal(s) for s in SAMPLES]}}}}


def stand_in_states(config: Config, directory: Path) -> None:
    """common's and traffic's states as far as a colour reads them: every output of their contracts, made up."""
    common = {name: [f"{name}-1"] if name in LIST_OUTPUTS else f"{name}-value" for name in common_outputs(config)}
    groups = {
        output_key(colour): {output_key(app.name): f"arn:tg/{colour}/{app.name}" for app in applications(config)}
        for colour in config.clusters
    }
    traffic: dict[str, Any] = {name: f"{name}-value" for name in TRAFFIC_DESCRIPTIONS}
    traffic[TrafficOutput.TARGET_GROUPS] = groups
    directory.mkdir(parents=True, exist_ok=True)
    for stack, outputs in ((COMMON_STACK, common), (TRAFFIC_STACK, traffic)):
        state = {
            "version": 4,
            "terraform_version": "1.11.4",
            "serial": 1,
            "lineage": f"literal-values-{stack}",
            "outputs": {name: {"value": value, "type": _type(value)} for name, value in outputs.items()},
            "resources": [],
        }
        (directory / f"{stack}.tfstate").write_text(json.dumps(state))


def _type(value: Any) -> Any:
    """A value's type as a state file writes it."""
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return ["list", "string"]
    return ["object", {key: _type(item) for key, item in value.items()}]


def check_root(values: LiteralValues) -> Path:
    """<outdir>/checks/root: every stack as a module (the colours' AWS part), the standby colour's release and the
    samples; the stand-in states in the state directory."""
    stacks = {name: values.app.json(name) for name in values.app.stacks()}
    modules = {name: aws_part(document)[0] for name, document in stacks.items()}
    modules |= {RELEASE: release_module(stacks[values.standby]), SAMPLES_MODULE: samples_module()}
    stand_in_states(values.config, values.state_directory)
    return write_root(values.app.outdir / "checks" / "root", modules)


def validate_and_plan(root: Path, env: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(`terraform validate -json`, `terraform show -json` of a plan of common, the release and the samples) of the
    root, against the emulator (a background thread: no jsii here)."""
    route53 = client("route53", env["AWS_ENDPOINT_URL"], REGION)
    # The emulator is this check's own (tests/support/background_checks.py own_emulator): nobody else made the zone.
    route53.create_hosted_zone(Name=PARENT_ZONE, CallerReference="literal-values")

    def terraform(*arguments: str) -> str:
        done = run(root, *arguments, "-input=false", "-no-color", env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    terraform("init")
    validated: dict[str, Any] = json.loads(run(root, "validate", "-json", "-no-color", env=env).stdout)
    targets = [f"-target=module.{name}" for name in (COMMON_STACK, RELEASE, SAMPLES_MODULE)]
    terraform("plan", "-lock=false", *targets, "-out=literal.plan")
    shown: dict[str, Any] = json.loads(run(root, "show", "-json", "literal.plan", env=env).stdout)
    return validated, shown
