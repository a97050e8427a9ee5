"""docs/contributing.md cannot drift silently from the tree it describes: each of its walks (adding a component, an
application, an operator command) says in its heading how many files it takes, which must be the number of files it
lists, and each listed path must have an instance in the project (`<name>`, `<tag>` stand for any one); its Layout
names every module of model/ and stacks/. Whether a walk's count is what a new one really takes was measured by hand
(the walk's own paragraph says when); tests/test_adding_an_application.py repeats the application's on every run."""

from __future__ import annotations

import re

import pytest

from model.paths import PROJECT_DIR

CONTRIBUTING = PROJECT_DIR / "docs" / "contributing.md"
WALK = re.compile(
    r"^### Adding an? (?P<what>[^:\n]+): (?P<count>\d+) files\n"
    r".*?<!-- walk: (?P<key>\w+) -->\n(?P<items>.*?)<!-- end of walk -->",
    re.S | re.M,
)
ITEM = re.compile(r"^(\d+)\. `([^`]+)`", re.M)
PLACEHOLDER = re.compile(r"<[^>]+>")


def walks(text: str) -> dict[str, tuple[int, list[tuple[int, str]]]]:
    """Each walk by its key: the count its heading says, and its items (number, path)."""
    return {m["key"]: (int(m["count"]), [(int(n), path) for n, path in ITEM.findall(m["items"])]) for m in WALK.finditer(text)}


WALKS = walks(CONTRIBUTING.read_text())


def test_the_three_walks_are_there() -> None:
    assert sorted(WALKS) == ["application", "command", "component"]


@pytest.mark.parametrize("key", sorted(WALKS))
def test_a_walk_takes_as_many_files_as_it_says(key: str) -> None:
    count, items = WALKS[key]
    assert [number for number, _ in items] == list(range(1, len(items) + 1)), "items numbered 1, 2, ... one per file"
    assert len({path for _, path in items}) == len(items), "a file listed twice"
    assert len(items) == count, f"the heading says {count} files, the walk lists {len(items)}"


@pytest.mark.parametrize("key", sorted(WALKS))
def test_every_file_a_walk_lists_has_an_instance_in_the_project(key: str) -> None:
    """`argocd/apps/platform/<name>/policy.json` must match some component's: a walk that names a file the project
    no longer has (moved, renamed) fails here."""
    _, items = WALKS[key]
    missing = [path for _, path in items if not any(PROJECT_DIR.glob(PLACEHOLDER.sub("*", path).rstrip("/")))]
    assert missing == []


def test_the_checks_see_a_wrong_count_and_a_moved_file() -> None:
    """The parsing itself: a heading that says one file more than it lists, and a path nothing matches."""
    text = (
        "### Adding a thing: 3 files\n\n<!-- walk: thing -->\n1. `tools/<name>.py`: the command.\n"
        "2. `nowhere/<name>.txt`: gone.\n<!-- end of walk -->\n"
    )
    ((count, items),) = walks(text).values()
    assert (count, len(items)) == (3, 2)
    assert [path for _, path in items if not any(PROJECT_DIR.glob(PLACEHOLDER.sub("*", path)))] == ["nowhere/<name>.txt"]


def layout(text: str) -> str:
    start = text.index("## Layout")
    return text[start : text.index("\n## ", start + 1)]


@pytest.mark.parametrize("folder", ["model", "stacks"])
def test_the_layout_names_every_module(folder: str) -> None:
    """A module (`name.py`) or package (`name/`) of the folder that the Layout section does not name: add a few words
    on it there."""
    described = layout(CONTRIBUTING.read_text())
    present = [
        p.name + ("/" if p.is_dir() else "")
        for p in sorted((PROJECT_DIR / folder).iterdir())
        if (p.suffix == ".py" and p.name != "__init__.py") or (p.is_dir() and (p / "__init__.py").exists())
    ]
    assert len(present) >= 4, present
    assert [name for name in present if not re.search(rf"\b{re.escape(name)}", described)] == []
