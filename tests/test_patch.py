"""`python -m tools.patch <colour>`: what EKS offers a colour, printed beside its pins and written into its entry only.

SSM is moto's (in-process): AWS's public parameters cannot be put through the API (moto refuses names under /aws, as
AWS does), so the test places the EKS one in moto's store, where AWS publishes it. moto has no DescribeAddonVersions:
EKS is a real botocore client with a Stubber, whose responses botocore checks against the EKS API's own model (the
shape of docs.aws.amazon.com/eks/latest/APIReference/API_DescribeAddonVersions.html).

And the point of pinning per colour: a patch of blue (its node release and add-on versions) changes blue's
synthesized stack and leaves green's, common's and traffic's byte for byte.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from model.eks_addons import ADDONS
from model.loading import ConfigError, config_file, load_config, write_colour
from model.paths import PROJECT_DIR
from tests.support.configs import example_raw, with_api_access
from tests.support.emulated_aws import in_process_aws
from tests.support.synth import Synthesized, synthesize
from tools import patch

REGION = "ap-northeast-1"
ACCOUNT = "123456789012"
# What the public parameter holds for 1.35 on x86_64 (a release of that version: `<k8s patch>-<build date>`).
RELEASE = "1.35.0-20251120"


def offered(addon: str, version: str, *, default: str, newer: str) -> dict[str, Any]:
    """A DescribeAddonVersions page for one add-on: a newer build than EKS's default, an older one, and one of
    another Kubernetes version only (which the command must not offer)."""

    def entry(addon_version: str, *, cluster_version: str = version, is_default: bool = False) -> dict[str, Any]:
        return {
            "addonVersion": addon_version,
            "architecture": ["amd64", "arm64"],
            "compatibilities": [{"clusterVersion": cluster_version, "platformVersions": ["*"], "defaultVersion": is_default}],
            "requiresConfiguration": False,
        }

    return {
        "addons": [
            {
                "addonName": addon,
                "type": "networking",
                "addonVersions": [
                    entry(newer),
                    entry(default, is_default=True),
                    entry("v0.0.1-eksbuild.1"),
                    entry("v99.0.0-eksbuild.1", cluster_version="1.99"),
                ],
                "publisher": "eks",
                "owner": "aws",
            }
        ]
    }


# Per add-on: EKS's default for 1.35 and a newer build (version numbers made up for the test, in EKS's format).
# Made-up versions, one minor per add-on, all above any add-on's MINIMUM_VERSIONS (model/eks_addons.py: the rules
# refuse a pin older than that, so a written pin must be one the config then accepts).
DEFAULTS = {addon: f"v1.{60 + i}.0-eksbuild.1" for i, addon in enumerate(ADDONS)}
NEWEST = {addon: f"v1.{60 + i}.2-eksbuild.3" for i, addon in enumerate(ADDONS)}


@pytest.fixture
def ssm(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    from moto.ssm.models import Parameter, ssm_backends

    with in_process_aws(monkeypatch):
        store = ssm_backends[ACCOUNT][REGION]._parameters
        name = patch.release_parameter("1.35", "AL2023_x86_64_STANDARD")
        store[name].append(
            Parameter(  # moto's own class, as its store holds it
                account_id=ACCOUNT,
                name=name,
                value=RELEASE,
                parameter_type="String",
                description=None,
                allowed_pattern=None,
                keyid=None,
                last_modified_date=dt.datetime.now(dt.UTC),
                version=1,
                data_type="text",
            )
        )
        yield boto3.client("ssm", region_name=REGION)


def stubbed_eks(pages: Mapping[str, dict[str, Any]], version: str = "1.35") -> tuple[Any, Stubber]:
    eks = boto3.client("eks", region_name=REGION, aws_access_key_id="testing", aws_secret_access_key="testing")
    stub = Stubber(eks)
    for addon in ADDONS:
        stub.add_response("describe_addon_versions", pages[addon], {"addonName": addon, "kubernetesVersion": version})
    stub.activate()
    return eks, stub


@pytest.fixture
def eks() -> Iterator[Stubber]:
    client, stub = stubbed_eks({a: offered(a, "1.35", default=DEFAULTS[a], newer=NEWEST[a]) for a in ADDONS})
    yield stub
    client.close()


def project(directory: Path, config: Any) -> Path:
    """A project whose cdktf.json names config.json, written as the project ships it (two-space JSON) but with green's
    entry on one line: bytes no writer of this project would make, so a rewrite of the whole file shows."""
    (directory / "cdktf.json").write_text(json.dumps({"language": "python", "context": {"config": "config.json"}}))
    green = json.dumps(config["clusters"]["green"])
    text = json.dumps(config, indent=2) + "\n"
    text = text.replace(json.dumps(config["clusters"]["green"], indent=2).replace("\n", "\n    "), green)
    assert json.loads(text) == config
    assert green in text
    (directory / "config.json").write_text(text)
    return directory / "cdktf.json"


@pytest.fixture
def cdktf_json(tmp_path: Path) -> Path:
    return project(tmp_path, with_api_access(example_raw()))


@pytest.fixture
def wired(monkeypatch: pytest.MonkeyPatch, ssm: Any, eks: Stubber) -> None:
    monkeypatch.setattr(patch, "clients", lambda region: (ssm, eks.client))


def entry_text(text: str, colour: str) -> tuple[str, str, str]:
    """(what comes before the colour's entry, the entry, what comes after), the entry found by its own parse."""
    start = text.index(f'"{colour}": ') + len(f'"{colour}": ')
    _, end = json.JSONDecoder().raw_decode(text, start)
    return text[:start], text[start:end], text[end:]


# --- the look-up ------------------------------------------------------------------------------------------


def test_the_public_parameter_is_the_one_aws_documents_for_each_ami_type() -> None:
    # AWS, Amazon EKS User Guide, "Retrieve recommended Amazon Linux AMI IDs": amazon-linux-2023/x86_64/standard and
    # amazon-linux-2023/arm64/standard.
    assert patch.release_parameter("1.35", "AL2023_x86_64_STANDARD") == (
        "/aws/service/eks/optimized-ami/1.35/amazon-linux-2023/x86_64/standard/recommended/release_version"
    )
    assert patch.release_parameter("1.36", "AL2023_ARM_64_STANDARD") == (
        "/aws/service/eks/optimized-ami/1.36/amazon-linux-2023/arm64/standard/recommended/release_version"
    )


@pytest.mark.usefixtures("wired")
def test_prints_each_pin_beside_the_default_and_the_newest_and_writes_nothing(
    cdktf_json: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (cdktf_json.parent / "config.json").read_bytes()
    assert patch.main(["blue", "--config", str(cdktf_json)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "blue (Kubernetes 1.35):"
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[2:] if line.startswith("  ") and line.split()}
    assert rows["nodes.release_version"] == [patch.NOT_PINNED, RELEASE, RELEASE]
    for addon in ADDONS:
        assert rows[addon] == [patch.NOT_PINNED, DEFAULTS[addon], NEWEST[addon]]
    assert "nothing written" in out
    assert (cdktf_json.parent / "config.json").read_bytes() == before


@pytest.mark.usefixtures("wired")
@pytest.mark.parametrize("newest", [False, True])
def test_write_pins_only_that_colours_entry_and_keeps_every_other_byte(cdktf_json: Path, newest: bool) -> None:
    config_file = cdktf_json.parent / "config.json"
    before = config_file.read_text()
    head, blue, tail = entry_text(before, "blue")
    assert patch.main(["blue", "--write", *(["--newest"] if newest else []), "--config", str(cdktf_json)]) == 0
    after = config_file.read_text()
    assert after.startswith(head)
    assert after.endswith(tail)
    written = json.loads(after[len(head) : len(after) - len(tail)])
    expected = json.loads(blue)
    expected["nodes"] = {"release_version": RELEASE}
    expected["addon_versions"] = NEWEST if newest else DEFAULTS
    assert written == expected
    assert list(written)[: len(json.loads(blue))] == list(json.loads(blue))  # the entry's keys keep their order
    pinned = load_config(cdktf_json).clusters["blue"]
    assert pinned.nodes.release_version == RELEASE
    assert dict(pinned.addon_versions) == expected["addon_versions"]


def test_write_into_the_config_of_cdktf_json_itself_keeps_the_rest(tmp_path: Path) -> None:
    raw = {"language": "python", "context": {"config": with_api_access(example_raw()), "other": [1, 2]}}
    path = tmp_path / "cdktf.json"
    path.write_text(json.dumps(raw, indent=4) + "\n")  # another indentation than the writer's
    before = path.read_text()
    head, _, tail = entry_text(before, "green")
    write_colour(path, "green", {"nodes": {"release_version": "1.36.1-20260601"}})
    after = path.read_text()
    assert after.startswith(head)
    assert after.endswith(tail)
    assert json.loads(after)["context"]["config"]["clusters"]["green"]["nodes"] == {"release_version": "1.36.1-20260601"}


def test_write_refuses_what_the_config_refuses_and_writes_nothing(cdktf_json: Path) -> None:
    config_file = cdktf_json.parent / "config.json"
    before = config_file.read_bytes()
    with pytest.raises(ConfigError, match=r"clusters\.blue\.nodes\.release_version: \"1\.36\.1-20260601\" is not allowed"):
        write_colour(cdktf_json, "blue", {"nodes": {"release_version": "1.36.1-20260601"}})  # blue runs 1.35
    assert config_file.read_bytes() == before


# --- refusals: one line, exit 2, nothing written ------------------------------------------------------------


@pytest.mark.usefixtures("wired")
def test_refuses_an_unknown_colour(cdktf_json: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert patch.main(["purple", "--write", "--config", str(cdktf_json)]) == 2
    assert capsys.readouterr().err == "refused: clusters.purple: no such colour; configured: blue, green\n"


def test_refuses_an_add_on_eks_does_not_offer_for_the_version(
    cdktf_json: Path, ssm: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = ADDONS[-1]
    pages = {a: offered(a, "1.35", default=DEFAULTS[a], newer=NEWEST[a]) for a in ADDONS}
    pages[missing] = {"addons": []}
    client, _ = stubbed_eks(pages)
    monkeypatch.setattr(patch, "clients", lambda region: (ssm, client))
    before = (cdktf_json.parent / "config.json").read_bytes()
    assert patch.main(["blue", "--write", "--config", str(cdktf_json)]) == 2
    assert capsys.readouterr().err == f"refused: EKS offers no version of the add-on {missing} for Kubernetes 1.35\n"
    assert (cdktf_json.parent / "config.json").read_bytes() == before


def test_refuses_a_version_eks_publishes_no_ami_release_for(
    tmp_path: Path, ssm: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(patch, "clients", lambda region: (ssm, None))
    config = with_api_access(example_raw())
    config["clusters"]["blue"]["nodes"] = {"ami_type": "AL2023_ARM_64_STANDARD", "instance_types": ["m7g.large"]}
    cdktf_json = project(tmp_path, config)
    assert patch.main(["blue", "--config", str(cdktf_json)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("refused: EKS publishes no AMI release for Kubernetes 1.35 and AL2023_ARM_64_STANDARD")
    assert patch.release_parameter("1.35", "AL2023_ARM_64_STANDARD") in err


@pytest.mark.usefixtures("no_aws_credentials")
def test_refuses_without_credentials_in_one_line(cdktf_json: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert patch.main(["blue", "--write", "--config", str(cdktf_json)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("refused: no usable AWS credentials"), err
    assert err.count("\n") == 1, err


# --- a patch of one colour changes that colour's stack only --------------------------------------------------


@pytest.fixture(scope="module")
def patched_blue(inside_project: Path) -> Synthesized:
    """The shipped example with blue patched, loaded and synthesized as the example is (conftest.py's example_app:
    the state beside the project, the output as deep below it), so that only the patch can tell them apart."""
    raw = example_raw()
    raw["clusters"]["blue"]["nodes"] = {"release_version": RELEASE}
    raw["clusters"]["blue"]["addon_versions"] = dict(DEFAULTS)
    (inside_project / "patched").mkdir()
    (inside_project / "patched" / "config.json").write_text(json.dumps(raw))
    config = config_file(inside_project / "patched" / "config.json", project_dir=PROJECT_DIR)
    return synthesize(config, inside_project / "patched" / "cdktf.out")


def test_a_patch_of_blue_changes_blues_stack_and_no_other_byte_for_byte(
    patched_blue: Synthesized, example_app: Synthesized
) -> None:
    assert patched_blue.stacks() == example_app.stacks()
    changed = [stack for stack in example_app.stacks() if patched_blue.text(stack) != example_app.text(stack)]
    assert changed == ["blue"]


def test_the_patch_reaches_blues_node_group_and_add_ons(patched_blue: Synthesized) -> None:
    (group,) = patched_blue.resources("blue", "aws_eks_node_group").values()
    assert group["release_version"] == RELEASE
    assert group["force_update_version"] is False
    assert group["update_config"] == {"max_unavailable": 1}
    addons = {body["addon_name"]: body.get("addon_version") for body in patched_blue.resources("blue", "aws_eks_addon").values()}
    assert addons == DEFAULTS


def test_an_unpinned_node_group_leaves_the_release_to_eks(example_app: Synthesized) -> None:
    for colour in example_app.colours():
        (group,) = example_app.resources(colour, "aws_eks_node_group").values()
        assert "release_version" not in group
