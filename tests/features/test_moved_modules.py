"""The modules that moved when the package was layered stay importable by their old names
for one release (CHANGELOG.md), each with a DeprecationWarning naming the new place."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

from txcodec._moved import MOVED

CHECK_EACH = """
import importlib, json, sys, warnings
from txcodec._moved import MOVED
wrong = []
for old in sorted(MOVED):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    if not any(issubclass(w.category, DeprecationWarning) and old in str(w.message) for w in caught):
        wrong.append(f"{old}: no DeprecationWarning naming it")
    new = MOVED[old]
    if isinstance(new, str) and module is not importlib.import_module(new):
        wrong.append(f"{old}: not the module {new}")
print(json.dumps(wrong))
"""


def test_every_old_module_name_still_imports_and_says_where_it_went():
    # a process of its own, which has imported neither the old names nor the new modules
    run = subprocess.run([sys.executable, "-c", CHECK_EACH], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == []
    assert len(MOVED) > 40  # every module of the flat layout that moved


def test_the_names_an_old_module_had_are_found_where_they_went():
    with pytest.warns(DeprecationWarning):
        common = importlib.import_module("txcodec.common")
        changes = importlib.import_module("txcodec.changes")
        html = importlib.import_module("txcodec.render.html")
    from txcodec.export import html as new_html
    from txcodec.kit import changes as new_changes
    from txcodec.model import common as new_common
    from txcodec.model import common_json

    assert common.Conversation is new_common.Conversation and common.from_json is common_json.from_json
    assert common.to_json is new_changes.to_json and changes.conversation_changes is new_changes.conversation_changes
    assert html is new_html  # a submodule of a moved package is that module, not a second copy
    # the new modules keep their own spec: importlib.resources still finds the templates
    assert new_html.__spec__.name == "txcodec.export.html" and new_common.__spec__.name == "txcodec.model.common"
    from importlib import resources

    assert resources.files("txcodec.export").joinpath("templates").is_dir()
    with pytest.raises(AttributeError):
        common.no_such_name  # noqa: B018


def test_every_new_place_exists_and_no_old_name_is_a_module_of_its_own():
    import importlib.util
    from pathlib import Path

    import txcodec

    root = Path(txcodec.__file__).parent.parent
    for old, new in MOVED.items():
        for name in (new,) if isinstance(new, str) else new:
            assert importlib.util.find_spec(name) is not None, name
        # an old name that is a file again would be imported instead of its alias
        path = root / Path(*old.split("."))
        assert not path.with_suffix(".py").exists() and not (path / "__init__.py").exists(), old
