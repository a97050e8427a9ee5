"""The operator commands' AWS calls, found in their code, are the calls the call table lists for them, so the
table (tests/support/deployer_calls.yaml) cannot go stale when a command starts calling AWS in a new way.

A call is `<client>.<operation>(...)` or `<client>.get_paginator("<operation>")` on a client named after its
service (eks, elbv2, route53, ec2, logs, cloudwatch, s3, ssm, sts, sns: tools/aws.py's names), in the code a command runs:
its own module (every module of a package command), and what it imports from tools/, function by function. A command
may be listed in several entries, one per mode (`tools.shift --now`); their union is what its code calls, both ways: a
row no code makes any more is stale. The commands are tools/commands.py's (tests/test_layout.py keeps that list equal
to the programs under tools/), so a new one is scanned as soon as it is listed.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest

from model.paths import PROJECT_DIR
from tests.support.deployer_calls import owners
from tools import commands

# A client's variable name -> its botocore service; the IAM action prefix, where it differs from the service name.
CLIENTS = {name: name for name in ("eks", "elbv2", "route53", "ec2", "logs", "cloudwatch", "s3", "ssm", "sts", "sns")}
IAM_PREFIX = {"elbv2": "elasticloadbalancing"}
# The commands: every program of tools/commands.py, and the one script CI runs with a role's credentials before it
# operates a colour; not an administrator's (tools.state_bucket): it has no rows in the call table, its actions are
# listed in tools/README.md instead (tests/test_state_bucket.py keeps that list equal to its calls).
COMMANDS = (*(c.module for c in commands.COMMANDS if c.run_by != commands.ADMINISTRATOR), "scripts.ci.reach_cluster")


@cache
def operations(service: str) -> dict[str, str]:
    """boto3's method name -> the API operation, for a service (botocore's own model)."""
    import botocore.session
    from botocore import xform_name

    model = botocore.session.get_session().get_service_model(service)
    return {xform_name(operation): operation for operation in model.operation_names}


@dataclass
class Module:
    name: str
    path: Path
    tree: ast.Module
    defs: dict[str, ast.stmt] = field(default_factory=dict)  # top-level functions and classes by name
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # local name -> (module, attribute)


@cache
def modules(root: Path, package: str) -> dict[str, Module]:
    """Every module of the package below root, parsed (once: each command's tests read them); not what a hidden
    directory holds (scripts/checkov/.venv, a virtualenv of thousands of modules, none of them ours)."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        if any(part.startswith(".") for part in path.relative_to(root).parts):
            continue
        parts = path.relative_to(root).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        tree = ast.parse(path.read_text(), str(path))
        module = Module(name, path, tree)
        module.defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
        for node in ast.walk(tree):  # imports inside functions too (a command that loads a module only when it runs it)
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == package:
                module.imports |= {alias.asname or alias.name: (node.module, alias.name) for alias in node.names}
            elif isinstance(node, ast.Import):
                module.imports |= {
                    alias.asname or alias.name: (alias.name, None) for alias in node.names if alias.name.split(".")[0] == package
                }
        found[name] = module
    return found


def reachable(found: dict[str, Module], command: str) -> Iterator[tuple[Module, ast.AST]]:
    """The code a command runs: its modules whole, then each function or class it names from another module."""
    todo: list[tuple[Module, ast.AST]] = [(m, m.tree) for n, m in found.items() if n == command or n.startswith(command + ".")]
    seen: set[tuple[str, int]] = set()
    while todo:
        module, node = todo.pop()
        if (module.name, id(node)) in seen:
            continue
        seen.add((module.name, id(node)))
        yield module, node
        for used in {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}:
            todo += _named(found, module, used)


def _named(found: dict[str, Module], module: Module, name: str) -> list[tuple[Module, ast.AST]]:
    if name in module.defs:
        return [(module, module.defs[name])]
    if name not in module.imports:
        return []
    source, attribute = module.imports[name]
    if attribute is not None and source in found and attribute in found[source].defs:
        return [(found[source], found[source].defs[attribute])]
    whole = f"{source}.{attribute}" if attribute is not None else source  # `from tools import readiness`, `import tools.x`
    return [(found[whole], found[whole].tree)] if whole in found else []


@dataclass(frozen=True)
class Found:
    action: str
    where: str  # path:line


def aws_calls(module: Module, node: ast.AST) -> Iterator[Found]:
    strings = {str(n.value) for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    # Every operation named on a client, called there or handed to a helper that calls it (a pager following NextToken:
    # `pages(cloudwatch.describe_alarms, ...)`, tools/analysis/alarms.py).
    for attribute in (n for n in ast.walk(node) if isinstance(n, ast.Attribute)):
        service = CLIENTS.get(_client(attribute.value))
        if service is None:
            continue
        methods = [attribute.attr]
        if attribute.attr == "get_paginator":
            call = next((n for n in ast.walk(node) if isinstance(n, ast.Call) and n.func is attribute), None)
            first = call.args[0] if call is not None and call.args else None
            # A variable operation (a loop over several): the operation names written in the same function.
            named = str(first.value) if isinstance(first, ast.Constant) else None
            methods = [named] if named else sorted(s for s in strings if s in operations(service))
        for method in methods:
            if method in operations(service):
                yield Found(
                    f"{IAM_PREFIX.get(service, service)}:{operations(service)[method]}",
                    f"{_shown(module.path)}:{attribute.lineno}",
                )


def _shown(path: Path) -> str:
    return str(path.relative_to(PROJECT_DIR) if path.is_relative_to(PROJECT_DIR) else path)


def _client(node: ast.expr) -> str:
    """The last name of the expression a method is called on: `eks`, `self.aws.eks`, `aws.route53` all name a client."""
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else ""


def command_calls(root: Path, package: str, command: str) -> dict[str, list[str]]:
    """Each AWS action the command's code calls -> where."""
    found = modules(root, package)
    calls: dict[str, list[str]] = {}
    for module, node in reachable(found, command):
        for call in aws_calls(module, node):
            calls.setdefault(call.action, []).append(call.where)
    return calls


def package(command: str) -> str:
    """The top-level package a command's code is scanned in (tools, scripts)."""
    return command.split(".")[0]


def entries(command: str) -> list[str]:
    """The table's entries of a command: its own, and one per mode (`tools.shift --now`)."""
    return [name for name in owners("commands") if name == command or name.startswith(f"{command} ")]


def listed(command: str) -> set[str]:
    return {row["call"] for name in entries(command) for row in owners("commands")[name]["calls"]}


@pytest.mark.parametrize("command", COMMANDS)
def test_every_aws_call_a_command_makes_is_in_its_rows(command: str) -> None:
    made = command_calls(PROJECT_DIR, package(command), command)
    missing = {action: where for action, where in made.items() if action not in listed(command)}
    assert missing == {}, f"add these to commands.{command} in tests/support/deployer_calls.yaml (and the policy, if needed)"


@pytest.mark.parametrize("command", COMMANDS)
def test_no_row_lists_a_call_the_command_no_longer_makes(command: str) -> None:
    """A stale row would keep a grant in the policies that nothing needs (the shift's Route53 reads, once it moved to
    the load balancer's rules)."""
    stale = sorted(listed(command) - set(command_calls(PROJECT_DIR, package(command), command)))
    assert stale == [], f"remove these from commands.{command} in tests/support/deployer_calls.yaml (and the policy, if unused)"


def test_every_entry_of_the_table_is_a_command_or_one_of_its_modes() -> None:
    assert sorted(name for name in owners("commands") if name.split(" ")[0] not in COMMANDS) == []
    assert len(entries("tools.shift")) == 4


def test_the_scan_finds_a_call_through_an_imported_helper_and_a_paginator(tmp_path: Path) -> None:
    """A call the table does not list is found: here in a helper another module imports, and in a paginator."""
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "__init__.py").write_text("")
    (tmp_path / "tools" / "helpers.py").write_text(
        "def groups(eks):\n    return eks.describe_nodegroup(clusterName='c', nodegroupName='n')\n\n"
        "def unused(route53):\n    return route53.delete_hosted_zone(Id='z')\n"
    )
    (tmp_path / "tools" / "cmd.py").write_text(
        "from tools.helpers import groups\n\n"
        "def main(aws):\n"
        "    for kind in ('describe_load_balancers', 'describe_target_groups'):\n"
        "        aws.elbv2.get_paginator(kind)\n"
        "    aws.logs.get_paginator('describe_log_groups')\n"
        "    pages(aws.cloudwatch.describe_alarms, AlarmNamePrefix='p')\n"
        "    return groups(aws.eks)\n"
    )
    assert sorted(command_calls(tmp_path, "tools", "tools.cmd")) == [
        "cloudwatch:DescribeAlarms",  # handed to a helper, not called where it is named
        "eks:DescribeNodegroup",
        "elasticloadbalancing:DescribeLoadBalancers",
        "elasticloadbalancing:DescribeTargetGroups",
        "logs:DescribeLogGroups",
    ]
