"""Which colours serve, as the live weights say: the rule that keeps a serving colour frozen in CI, decided with the
job's AWS credentials when the job runs, never from config.json's weights (which only seed a new traffic stack; no
shift writes them, so after a shift they name the wrong colour).

A colour serves when the shared load balancer gives it weight: the weights parameter or any application's public
rule (tools/live_weights.py `colour_weight`, the reading the teardown trusts too). A serving colour whose stack changed
while its own entry `clusters.<colour>` did not is frozen: the deploy skips it and says so; a change that names it is
deployed (what runs in a serving colour changes only by an edit that names it: docs/architecture.md).

Runs in the project's .venv (boto3, model/): the deploy and plan jobs run it after `make synth`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from model.routes import weights_parameter
from scripts.ci.stacks import COMMON, TRAFFIC


@dataclass(frozen=True)
class LiveWeights:
    """The live weight of each colour (the larger of the parameter's and any public rule's), and the config's."""

    project: str
    live: Mapping[str, int]
    configured: Mapping[str, int]

    def serves(self, colour: str) -> bool:
        return self.live.get(colour, 0) > 0

    def frozen(self, colour: str, *, named: Collection[str]) -> bool:
        """Serving, and this change does not name it: its stack changed by someone else's edit."""
        return self.serves(colour) and colour not in named

    def summary(self) -> str:
        """The live split and, where it differs, the config's: markdown lines for a job summary."""
        lines = [f"Live weights ({weights_parameter(self.project)} and the public rules): {_describe(self.live)}"]
        if any(self.live.get(colour, 0) != weight for colour, weight in self.configured.items()):
            lines.append(
                f"The config says {_describe(self.configured)}: it differs from the live weights, which decide who "
                "serves (config weights only seed a new traffic stack; set `clusters.<colour>.weight` to the live split "
                "to keep them telling the same story)"
            )
        return "\n\n".join(lines)

    def frozen_line(self, colour: str) -> str:
        return (
            f"- {colour}: serving (live weight {self.live.get(colour, 0)}), frozen, not deployed (its entry "
            f"`clusters.{colour}` is unchanged)"
        )


def live_weights(project_dir: Path, colours: Collection[str]) -> LiveWeights:
    """Each colour's live weight, read with the caller's AWS credentials in the configuration's region."""
    from model.loading import load_config
    from tools.aws import Aws
    from tools.live_weights import colour_weight

    config = load_config(project_dir / "cdktf.json")
    aws = Aws(config.region)
    live = {colour: colour_weight(aws.elbv2, aws.ssm, config.project, colour) for colour in colours}
    return LiveWeights(config.project, live, config.weights)


def colours_of(stacks: Collection[str]) -> list[str]:
    return [stack for stack in stacks if stack not in (COMMON, TRAFFIC)]


def _describe(weights: Mapping[str, int]) -> str:
    return ", ".join(f"{colour} {weight}" for colour, weight in weights.items()) or "none"
