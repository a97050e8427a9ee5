"""The migrations wing (model/migrations/): every migration is listed with its condition and its pieces, each piece
exists, every migration-marked name of the product is a listed piece, and none is past its due date."""

from __future__ import annotations

import ast
import dataclasses
import datetime as dt
import re
from collections.abc import Iterable
from pathlib import Path

import pytest

from model.migrations import MIGRATIONS, SUPPORT_WINDOW, Migration, Release, overdue
from model.paths import PROJECT_DIR

# Where the product code lives: a migration-marked name defined here must be a piece of some migration.
PRODUCT = ("model", "components", "stacks", "tools")
MARKED = re.compile(r"FORMER_\w+|RETIRED\w*")


# --- (i) the dates ------------------------------------------------------------------------------------------------------


def test_no_migration_is_due() -> None:
    """A deliberate date test: when a migration's support window ends, this fails until the next maintainer deletes its
    pieces (or, with a reason in its keeps_it_alive, moves its release on). The message says which and how."""
    due = overdue(MIGRATIONS, dt.date.today())
    assert due == [], "\n".join(due)


def test_the_checker_names_a_migration_past_its_due_date_with_its_condition_and_pieces() -> None:
    """A made-up migration 91 days old: due yesterday. Its twin of today, and the same migration a day before its due
    date, are not."""
    today = dt.date(2030, 6, 1)
    old = Release(("#1",), "abc1234", today - SUPPORT_WINDOW - dt.timedelta(days=1), "a made-up change")
    made_up = Migration(
        name="made-up", release=old, keeps_it_alive="nobody", delete_when="now.", pieces=("model/nowhere.py::THING",)
    )
    fresh = dataclasses.replace(made_up, name="fresh", release=dataclasses.replace(old, date=today))
    (said,) = overdue([made_up, fresh], today)
    assert said == (
        "made-up was due on 2030-05-31 (90 days after abc1234 of 2030-03-02, #1: a made-up change). Delete it when: "
        "now. Its pieces: model/nowhere.py::THING"
    )
    assert overdue([made_up], made_up.due) == []  # due on the day, refused the day after


def test_every_migration_says_what_keeps_it_alive_and_when_it_goes() -> None:
    assert len({m.name for m in MIGRATIONS}) == len(MIGRATIONS)
    for m in MIGRATIONS:
        assert m.keeps_it_alive.strip(), m.name
        assert m.delete_when.strip(), m.name
        assert m.pieces, m.name
        assert re.fullmatch(r"[0-9a-f]{7,40}", m.release.commit), m.name
        assert all(re.fullmatch(r"#[0-9]+", issue) for issue in m.release.issues), m.name
        assert m.due == m.release.date + SUPPORT_WINDOW


# --- (ii) every piece exists --------------------------------------------------------------------------------------------


def defines(source: str, name: str) -> bool:
    """Whether Python source defines `name` at its top level, or `Class.attribute` (a method or a field) in a class."""
    scope: list[ast.stmt] = ast.parse(source).body
    *outer, last = name.split(".")
    for part in outer:
        classes = [node for node in scope if isinstance(node, ast.ClassDef) and node.name == part]
        if not classes:
            return False
        scope = classes[0].body
    return last in names_defined(scope)


def names_defined(body: Iterable[ast.stmt]) -> set[str]:
    """The names a block of statements defines: functions, classes, assignments (annotated or not)."""
    found: set[str] = set()
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(node.name)
        elif isinstance(node, ast.Assign):
            found |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found.add(node.target.id)
    return found


def missing(piece: str, root: Path) -> str | None:
    """Why a piece does not exist under root, or None when it does."""
    path, _, symbol = piece.partition("::")
    file = root / path
    if not file.is_file():
        return f"{piece}: no file {path}"
    if not symbol:
        return None
    text = file.read_text(encoding="utf-8")
    found = defines(text, symbol) if file.suffix == ".py" else symbol in text
    return None if found else f"{piece}: {path} has no {symbol}"


@pytest.mark.parametrize("migration", MIGRATIONS, ids=[m.name for m in MIGRATIONS])
def test_every_piece_exists(migration: Migration) -> None:
    assert [why for piece in migration.pieces if (why := missing(piece, PROJECT_DIR))] == []


def test_the_piece_check_fails_on_a_missing_file_name_or_text(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("class Stack:\n    def __init__(self) -> None: ...\nFORMER_X = {}\n")
    (tmp_path / "p.json").write_text('{"Sid": "Kept"}')
    assert [missing(p, tmp_path) for p in ("m.py", "m.py::FORMER_X", "m.py::Stack.__init__", "p.json::Kept")] == [None] * 4
    assert [missing(p, tmp_path) for p in ("n.py", "m.py::FORMER_Y", "m.py::Stack.run", "m.py::Other.x", "p.json::Gone")] == [
        "n.py: no file n.py",
        "m.py::FORMER_Y: m.py has no FORMER_Y",
        "m.py::Stack.run: m.py has no Stack.run",
        "m.py::Other.x: m.py has no Other.x",
        "p.json::Gone: p.json has no Gone",
    ]


# --- (iii) every migration-marked name is listed ------------------------------------------------------------------------


def marked_names(source: str) -> set[str]:
    """Every name matching FORMER_* or RETIRED* the source defines, at any depth (a constant, a function, a class, an
    attribute of one), or imports under a name of its own."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found |= {t.id for target in targets for t in ast.walk(target) if isinstance(t, ast.Name)}
        elif isinstance(node, ast.alias) and node.asname:
            found.add(node.asname)
    return {name for name in found if MARKED.fullmatch(name)}


def unlisted(root: Path, folders: Iterable[str], migrations: Iterable[Migration]) -> list[str]:
    """`path::name` of each marked name defined under the folders that no migration lists as a piece."""
    listed = {piece for m in migrations for piece in m.pieces}
    return [
        f"{file.relative_to(root).as_posix()}::{name}"
        for folder in folders
        for file in sorted((root / folder).rglob("*.py"))
        for name in sorted(marked_names(file.read_text(encoding="utf-8")))
        if f"{file.relative_to(root).as_posix()}::{name}" not in listed
    ]


def test_every_migration_marked_name_of_the_product_is_a_piece_of_a_migration() -> None:
    assert unlisted(PROJECT_DIR, PRODUCT, MIGRATIONS) == []
    # The scan sees the product's own (else the assertion above proves nothing).
    seen = {name for folder in PRODUCT for f in (PROJECT_DIR / folder).rglob("*.py") for name in marked_names(f.read_text())}
    assert {"FORMER_IMAGE_BUILD", "RETIRED", "RETIRED_KEYS", "RETIRED_WITH_CONTRACT_1"} <= seen


def test_the_scan_finds_a_planted_former_name_and_a_retired_one(tmp_path: Path) -> None:
    (tmp_path / "model" / "deep").mkdir(parents=True)
    (tmp_path / "model" / "deep" / "old.py").write_text(
        "FORMER_NAMES = {}\nclass Plan:\n    RETIRED_FIELDS: frozenset[str] = frozenset()\n"
        "def retired() -> None: ...\nKEEP = 1\nfrom x import y as RETIRED_ALIAS\n"
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "t.py").write_text("FORMER_TEST = 1\n")  # outside the product: not asked
    listed = Migration("m", Release((), "abc1234", dt.date(2030, 1, 1), "x"), "k", "d", ("model/deep/old.py::FORMER_NAMES",))
    assert unlisted(tmp_path, PRODUCT, [listed]) == [
        "model/deep/old.py::RETIRED_ALIAS",
        "model/deep/old.py::RETIRED_FIELDS",
    ]
