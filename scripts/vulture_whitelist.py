"""What vulture cannot see being used (make test's dead-code lint, pyproject.toml [tool.vulture]): names read by another
library or by people, each with who reads it. Vulture reads this file as code that uses them; nothing imports it."""

# mypy: ignore-errors
# ruff: noqa: B018, F821

# http.client.HTTPConnection.connect's contract: the connection reads `self.sock` (tools/readiness/probe.py).
_.sock
# A component's entry (argocd/apps/platform/<name>/component.yaml) is validated whole; argocd/apps's chart reads
# ignoreDifferences from it, Python does not (model/platform.py).
_.ignore_differences
# Each command's line of what it is for: the list is read by people (tools/commands.py).
_.purpose
# Set on moto's EKS objects for its DescribeCluster / DescribeNodegroup answers to carry (scripts/emulator.py).
_.access_config
_.upgrade_policy
_.update_config
