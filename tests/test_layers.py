"""The floors of the house: what the deployment is (model/) at the bottom, then the policies' documents (policies/),
then our constructs (components/) and the operator commands (tools/) side by side, then the stacks (stacks/), then
what builds, checks and measures it all (scripts/, bench/, main.py, app/); the tests above everything.

An import runs down or along its own floor, never up, and components/ and tools/ never import each other: what both
need (the hooks' contract, say) lives in model/. Every import counts, at the top of a module, inside a function and in a
TYPE_CHECKING block alike: an import moved into a function is still the same dependency.

And in model/, components/, stacks/ and tools/, no import hides inside a function to dodge a circle: one there says
why on its line or the line above (a heavy optional binding, the SDK loaded late so `--help` stays fast: the operator
commands' start is a `make bench` budget).

Each rule is a function of a module's path and source, tested first on small planted sources, then run on the tree.
"""

from __future__ import annotations

import ast
import importlib
import io
import tokenize
from pathlib import Path

import pytest

from model.hooks import HOOK_MODULES

# Each top-level package (or module) of the project and its floor; a module's own is its path's first part.
FLOORS = {
    "model": 0,
    "policies": 1,
    "components": 2,
    "tools": 2,
    "stacks": 3,
    "scripts": 4,
    "bench": 4,
    "main": 4,
    "app": 4,
    "tests": 5,
}
# Floors whose packages stand side by side: neither imports the other.
SIDE_BY_SIDE = {2}
# Where an import inside a function must say why it is there.
NO_HIDDEN_IMPORTS = ("model", "components", "stacks", "tools")
# Known edges that run upward, each with the change that removes it. Delete an entry when that change lands (the
# test fails on an entry no import needs any more).
# An upward import allowed for a while, with why and until when; none now (model/rules.py read policies/shape.py until
# the check moved down to model/policy_shape.py).
ALLOWED_UPWARD: dict[tuple[str, str], str] = {}


def floor_of(path: str) -> str:
    """The package a module of the project belongs to, by its path relative to the project (`main.py` -> main)."""
    first = path.split("/")[0]
    return first.removesuffix(".py")


def _imports(tree: ast.Module) -> list[tuple[int, str, bool]]:
    """(line, imported module, inside a function) of every absolute import of a module, wherever it is."""
    found: list[tuple[int, str, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                found.extend((child.lineno, alias.name, in_function) for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                found.append((child.lineno, child.module, in_function))
            visit(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda))

    visit(tree, False)
    return found


def upward_imports(path: str, source: str) -> list[str]:
    """Each import of the module at `path` that runs up a floor, or across to the package beside its own."""
    own = floor_of(path)
    if own not in FLOORS:
        return []
    wrong = []
    for line, module, _ in _imports(ast.parse(source, path)):
        target = module.split(".")[0]
        if target not in FLOORS or target == own:
            continue
        if FLOORS[target] > FLOORS[own]:
            why = f"{target}/ is floor {FLOORS[target]}, above {own}/ (floor {FLOORS[own]})"
        elif FLOORS[target] == FLOORS[own] and FLOORS[own] in SIDE_BY_SIDE:
            why = f"{target}/ stands beside {own}/ (floor {FLOORS[own]}): put what both need in model/"
        else:
            continue
        if (path, target) not in ALLOWED_UPWARD:
            wrong.append(f"{path}:{line}: imports {module}: {why}")
    return wrong


def _commented_lines(source: str) -> set[int]:
    """The lines that hold a comment (a `#` in a string is none)."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return {token.start[0] for token in tokens if token.type == tokenize.COMMENT}


def hidden_imports(path: str, source: str) -> list[str]:
    """Each import inside a function of a module of model/, components/, stacks/ or tools/ with no comment on its line
    or the line above saying why it is there."""
    if floor_of(path) not in NO_HIDDEN_IMPORTS:
        return []
    commented = _commented_lines(source)
    return [
        f"{path}:{line}: imports {module} inside a function: import it at the top, or say why not in a comment"
        for line, module, in_function in _imports(ast.parse(source, path))
        if in_function and not {line, line - 1} & commented
    ]


def project_modules(project_dir: Path) -> dict[str, str]:
    """Every Python module of the project's floors (tests aside), by its path relative to the project; not what a
    hidden directory holds (scripts/checkov/.venv: a virtualenv, none of it ours)."""
    found = {}
    for name in FLOORS:
        for path in [project_dir / f"{name}.py", *sorted((project_dir / name).rglob("*.py"))]:
            relative = path.relative_to(project_dir)
            if name == "tests" or not path.is_file() or any(part.startswith(".") for part in relative.parts):
                continue
            found[relative.as_posix()] = path.read_text()
    return found


# --- the checkers, on planted sources --------------------------------------------------------------------------------


def test_fails_on_an_import_from_a_floor_above() -> None:
    source = "from stacks.app import build\n"
    assert upward_imports("model/x.py", source) == [
        "model/x.py:1: imports stacks.app: stacks/ is floor 3, above model/ (floor 0)"
    ]


def test_fails_on_an_upward_import_inside_a_function_or_a_type_checking_block() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from scripts.docs import between\n"
        "def f() -> None:\n"
        "    import stacks.cluster  # a comment does not make an upward import right\n"
    )
    assert [line.split(": ")[0] for line in upward_imports("policies/x.py", source)] == ["policies/x.py:3", "policies/x.py:5"]


def test_fails_when_components_and_tools_import_each_other() -> None:
    assert upward_imports("components/x.py", "from tools.log_group import WATCH_ENV\n") == [
        "components/x.py:1: imports tools.log_group: tools/ stands beside components/ (floor 2): put what both need in model/"
    ]
    assert len(upward_imports("tools/hooks/x.py", "import components.destroy_hook\n")) == 1


def test_passes_imports_down_along_and_outside_the_project() -> None:
    source = "import json\nimport boto3\nfrom model.hooks import GUARD_ENV\nimport policies\nfrom tools.aws import Aws\n"
    assert upward_imports("tools/x.py", source) == []
    assert upward_imports("scripts/x.py", "from stacks.app import build\nfrom bench import run\n") == []


def test_fails_on_an_import_inside_a_function_that_says_nothing() -> None:
    source = 'def f() -> None:\n    x = "# not a comment"\n    import boto3\n'
    assert hidden_imports("tools/x.py", source) == [
        "tools/x.py:3: imports boto3 inside a function: import it at the top, or say why not in a comment"
    ]
    # A method's import counts too; a nested function's as well.
    method = "class C:\n    def m(self) -> None:\n        def g() -> None:\n            from model import config\n"
    assert len(hidden_imports("components/x.py", method)) == 1


def test_passes_an_import_inside_a_function_that_says_why() -> None:
    on_its_line = "def f() -> None:\n    import boto3  # lazy: --help stays fast\n"
    above = "def f() -> None:\n    # a heavy optional binding\n    from components.web_acl import WebAcl\n"
    assert hidden_imports("tools/x.py", on_its_line) == []
    assert hidden_imports("stacks/x.py", above) == []
    # Outside model/, components/, stacks/ and tools/ the rule does not apply.
    assert hidden_imports("scripts/x.py", "def f() -> None:\n    import moto\n") == []


# --- the tree ---------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def modules(project_dir: Path) -> dict[str, str]:
    found = project_modules(project_dir)
    # The scan must reach every floor, not pass on an empty tree.
    assert {floor_of(path) for path in found} == set(FLOORS) - {"tests"}, sorted(found)
    return found


def test_no_import_runs_upward(modules: dict[str, str]) -> None:
    assert [wrong for path, source in modules.items() for wrong in upward_imports(path, source)] == []


def test_every_allowed_upward_import_is_still_needed(modules: dict[str, str]) -> None:
    """An allowance outliving its import would let the next one in unseen."""
    used = {
        (path, module.split(".")[0]) for path, source in modules.items() for _, module, _ in _imports(ast.parse(source, path))
    }
    assert sorted(set(ALLOWED_UPWARD) - used) == []


def test_no_import_hides_inside_a_function(modules: dict[str, str]) -> None:
    assert [wrong for path, source in modules.items() for wrong in hidden_imports(path, source)] == []


@pytest.mark.parametrize("command", sorted(HOOK_MODULES))
def test_each_hook_command_the_stacks_write_still_runs_its_hook(command: str) -> None:
    """Deployed stacks' state holds `python -m tools.<hook>`, which destroy-time provisioners run as written: the shim
    of that name starts the hook of tools/hooks/."""
    assert importlib.import_module(command).main is importlib.import_module(HOOK_MODULES[command]).main
