"""The public API is declared once (``django_pgmq/api.py``) and every list of it is derived.

``__all__``, the module-level functions, the async twins, the documented manager methods
and the tests' lists all come from the declaration: a method added to `QueueManager`
without declaring it, or a declared name that no longer exists, fails here.
"""

from __future__ import annotations

import inspect

import django_pgmq as pgmq
from django_pgmq import api, errors, records
from django_pgmq.manager import QueueManager
from tests.unit.test_docs import ROOT, load_docs_module


def public_members() -> set[str]:
    """Every public-named member of QueueManager that is not an async twin."""
    names = {n for n in dir(QueueManager) if not n.startswith("_")}
    return {n for n in names if not (n.startswith("a") and n[1:] in names)}


def test_every_public_member_of_the_manager_is_declared_once():
    declared = [*api.PUBLIC_METHODS, *api.HELPERS]
    assert len(declared) == len(set(declared)), "a name is declared twice"
    assert public_members() == set(declared)
    assert set(api.MODULE_FUNCTIONS) <= set(api.PUBLIC_METHODS)


def test_every_public_method_has_an_async_twin_and_no_helper_has_one():
    for name in api.PUBLIC_METHODS:
        assert inspect.iscoroutinefunction(getattr(QueueManager, api.twin(name))), name
    for name in api.HELPERS:
        assert not hasattr(QueueManager, api.twin(name)), name


def test_the_package_exports_exactly_the_declared_names():
    assert pgmq.__all__ == api.package_all(records.__all__)
    for name in pgmq.__all__:
        assert getattr(pgmq, name) is not None, name
    for name in api.MODULE_FUNCTIONS:
        assert callable(getattr(pgmq, name)) and name in pgmq.__all__
        assert inspect.iscoroutinefunction(getattr(pgmq, api.twin(name))), name
    for name in set(api.PUBLIC_METHODS) - set(api.MODULE_FUNCTIONS):
        assert name not in pgmq.__all__ and api.twin(name) not in pgmq.__all__


def test_every_error_class_is_exported():
    classes = {
        name
        for name, value in vars(errors).items()
        if inspect.isclass(value) and issubclass(value, errors.PgmqError)
    }
    assert classes == set(api.ERRORS)


def test_the_reference_page_documents_the_declaration():
    hooks = load_docs_module("hooks")
    page = (ROOT / "docs" / "reference" / "python.md").read_text()
    assert "<!-- generated: module-functions -->" in page
    assert "<!-- generated: manager-members -->" in page
    assert "::: django_pgmq.manager.QueueManager" not in page  # no hand-kept member list
    members = hooks.render_manager_members()
    listed = [line.strip()[2:] for line in members.splitlines() if line.strip().startswith("- ")]
    assert listed == list(api.PUBLIC_METHODS)
    table = hooks.render_module_functions()
    for name in api.MODULE_FUNCTIONS:
        assert f"| `{name}` | `{api.twin(name)}` |" in table
