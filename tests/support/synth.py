"""Synthesize a configuration in-process and read the result back as JSON."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model.config import COMMON_STACK, Config
from model.routes import TRAFFIC_STACK
from stacks.app import synthesize_into


@dataclass(frozen=True)
class Synthesized:
    outdir: Path

    def stack_dir(self, stack: str) -> Path:
        return self.outdir / "stacks" / stack

    def text(self, stack: str) -> str:
        return (self.stack_dir(stack) / "cdk.tf.json").read_text()

    def json(self, stack: str) -> dict[str, Any]:
        return dict(json.loads(self.text(stack)))

    def stacks(self) -> list[str]:
        return sorted(p.name for p in (self.outdir / "stacks").iterdir())

    def colours(self) -> list[str]:
        """The colours' stacks: every stack but common and traffic."""
        return [stack for stack in self.stacks() if stack not in (COMMON_STACK, TRAFFIC_STACK)]

    def resources(self, stack: str, resource_type: str) -> dict[str, dict[str, Any]]:
        """Resources of one type, keyed by their construct path below the stack (e.g. `table/table`)."""
        found = self.json(stack).get("resource", {}).get(resource_type, {})
        return {body["//"]["metadata"]["path"].split("/", 1)[1]: body for body in found.values()}

    def resource(self, stack: str, resource_type: str, path: str) -> dict[str, Any]:
        return self.resources(stack, resource_type)[path]


def synthesize(config: Config, outdir: Path) -> Synthesized:
    synthesize_into(config, outdir)
    return Synthesized(outdir)


REFERENCE = re.compile(r"\$\{([^}]*)\}")


def references(node: Any) -> set[str]:
    """Every Terraform expression inside `${...}` anywhere in a JSON document."""
    return set(REFERENCE.findall(json.dumps(node)))
