"""The project's own YAML (the component registry, the EKS calendar) read by libyaml: what yaml.safe_load reads, at a
tenth of the cost every operator command pays as it starts (model/yaml_text.py)."""

from __future__ import annotations

import pytest
import yaml

from model import yaml_text
from model.eks_calendar import CALENDAR_FILE
from model.platform import ENTRY, REGISTRY


def test_the_project_s_yaml_is_read_by_libyaml_as_safe_load_reads_it() -> None:
    # The pinned PyYAML's wheel carries libyaml; without it every command would parse with pure Python again, unseen.
    assert yaml.__with_libyaml__
    assert yaml_text._LOADER is yaml.CSafeLoader
    files = [*sorted(REGISTRY.glob(f"*/{ENTRY}")), CALENDAR_FILE]
    assert len(files) > 2
    for path in files:
        text = path.read_text()
        assert yaml_text.parse(text) == yaml.safe_load(text), path


def test_a_document_that_would_build_python_objects_is_refused() -> None:
    """Safe: a tag asking for a Python object is an error, as with safe_load, never an object."""
    with pytest.raises(yaml.constructor.ConstructorError, match="python/object/apply"):
        yaml_text.parse("!!python/object/apply:os.system ['true']")
