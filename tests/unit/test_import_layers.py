"""The house drawn from django_pgmq's imports matches docs/design.md's picture ("Layout").

Every import (module level, in a function, under TYPE_CHECKING) is read with ``ast``,
without importing anything, and attributed to a unit: a top-level module or subpackage
of django_pgmq (``contrib``'s packages each count as one: ``contrib.celery``,
``contrib.spark``). The tests fail on an import cycle between units (outside
`ALLOWED_CYCLES`), between two modules of one unit (outside `ALLOWED_MODULE_CYCLES`:
kombu's pattern) and on an import in a direction design.md forbids (`FORBIDDEN`).
Fix a finding by moving code to the unit whose job it is, not by hiding the import.
"""

from __future__ import annotations

import ast
import sys
import warnings
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "django_pgmq"
ROOT = "django_pgmq"  # the package's __init__: the user API, the top of the house

# Cycles between units that are allowed, each with its reason (design.md, "Layout").
# Empty: kombu's transport pattern (kombu imports our transport by the path the
# scheme names, the transport imports kombu) is between kombu and contrib.celery,
# not between two units of ours.
ALLOWED_CYCLES: dict[frozenset[str], str] = {}

_CALLERS = {"internal", "worker", "dashboard", "tasks", "management", "admin", "templatetags"}
_SCREENS = {"urls", "apps", "contrib.celery", "contrib.spark", "sqltools"}
# unit -> units it must never import (design.md, "Layout": what may import what).
FORBIDDEN: dict[str, set[str]] = {
    # The user API knows no part built on it.
    "manager": _CALLERS
    | _SCREENS
    | {"pausing", "schedule_settings", "notify", "operations", "models"},
    # The internal layer serves the worker, the admin and Tasks; it knows none of them.
    "internal": _CALLERS - {"internal"} | _SCREENS | {"pausing", "schedule_settings"},
    "worker": {"dashboard", "tasks", "management", "admin", "templatetags"} | _SCREENS,
    "tasks": {"dashboard", "management", "templatetags"} | _SCREENS,
    "dashboard": {"worker", "management"} | _SCREENS,
    # The integrations are clients of the SQL API and of the user API.
    "contrib.celery": _CALLERS | {"contrib.spark", "sqltools"},
    "contrib.spark": _CALLERS | {"contrib.celery", "sqltools"},
}
# Units at the bottom, with everything of django_pgmq they may import (nothing else).
BOTTOM: dict[str, set[str]] = {
    "records": set(),  # and the standard library only (test below)
    "errors": set(),
    "names": {"errors"},
    # Declarations and rules that the rest derives from (standard library only too).
    "api": set(),
    "cron": set(),
    # The consumer settings' declaration: its checks raise our errors, name a queue.
    "consumer_settings": {"errors", "names"},
}
# Only this deprecated shim may import the developer tooling; nothing at run time does.
SQLTOOLS_USERS = {"sqltools", "sqlmigrate"}
# Deprecated aliases of moved modules: kept for users, imported by no part of django_pgmq.
DEPRECATED = {"messages", "topics", "partitions", "sqlmigrate"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    """Whether ``name`` (dotted, under django_pgmq) is a module or package in the tree."""
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def unit(module: str) -> str:
    """The unit a dotted module name belongs to."""
    parts = module.split(".")
    if len(parts) == 1:
        return ROOT
    if parts[1] == "contrib" and len(parts) > 2:
        return f"contrib.{parts[2]}"
    return parts[1]


def _targets(module: str, is_package: bool, node: ast.AST) -> Iterator[str]:
    """The django_pgmq modules an import statement imports."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            here = module.split(".") if is_package else module.split(".")[:-1]
            base = ".".join(here[: len(here) - node.level + 1])
            source = f"{base}.{node.module}" if node.module else base
        else:
            source = node.module or ""
        for alias in node.names:
            name = f"{source}.{alias.name}"
            yield name if _is_module(name) else source


@cache
def module_pairs() -> list[tuple[str, str, str]]:
    """(importing module, imported module of django_pgmq, where) for every import of ours."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for target in _targets(module, path.name == "__init__.py", node):
                if target == ROOT or target.startswith(ROOT + "."):
                    found.append((module, target, f"{module}:{node.lineno}"))
    return found


@cache
def imports() -> list[tuple[str, str, str]]:
    """(importing unit, imported unit, where) for every import between two units."""
    return [(unit(a), unit(b), here) for a, b, here in module_pairs() if unit(a) != unit(b)]


def _cycles(edges: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one unit (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in edges.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = set()
            while True:
                other = stack.pop()
                component.add(other)
                if other == node:
                    break
            if len(component) > 1:
                found.append(component)

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_reading_finds_the_imports():
    """The reader sees relative, absolute, function-level and ``from . import x`` imports."""
    pairs = {(a, b) for a, b, _ in imports()}
    assert ("manager", "records") in pairs  # from ..records import Message
    assert ("worker", "internal") in pairs
    assert ("management", "contrib.spark") in pairs  # in a function
    assert ("apps", "schedule_settings") in pairs  # from .schedule_settings import ...
    assert ("routing", "conf") in pairs  # from . import conf


def _cycles_in(pairs: list[tuple[str, str, str]], allowed: Iterable[frozenset[str]]) -> str:
    """The cycles of an import graph outside ``allowed``, each import in them with its
    place, one a line ('' when there is none)."""
    edges: dict[str, set[str]] = {}
    for a, b, _ in pairs:
        edges.setdefault(a, set()).add(b)
    cycles = [c for c in _cycles(edges) if frozenset(c) not in set(allowed)]
    found = {f"{a} -> {b} ({here})" for c in cycles for a, b, here in pairs if {a, b} <= c}
    return "\n".join(sorted(found))


def test_no_import_cycle_between_units():
    assert _cycles_in(imports(), ALLOWED_CYCLES) == ""


# Cycles between modules of one unit that are allowed, each with its reason.
ALLOWED_MODULE_CYCLES: dict[frozenset[str], str] = {
    frozenset(
        f"django_pgmq.contrib.celery.{m}" for m in ("channel", "qos", "transport")
    ): "kombu's virtual-transport pattern: the Transport names its Channel class, the "
    "Channel its QoS class and its Transport, the QoS the Channel it settles for",
}


@cache
def module_imports() -> list[tuple[str, str, str]]:
    """(importing module, imported module, where) for every import between two modules of
    one unit (a package's own ``__init__`` counts as a module of it)."""
    return [
        (a, b, here) for a, b, here in module_pairs() if b != ROOT and a != b and unit(a) == unit(b)
    ]


def test_no_import_cycle_between_the_modules_of_a_unit():
    """Inside a package too (the worker's threads, the dashboard's pages): a module that
    needs its caller gets what it needs passed in, or a Protocol, not an import back."""
    assert _cycles_in(module_imports(), ALLOWED_MODULE_CYCLES) == ""


def test_the_allowed_module_cycle_is_still_one():
    """An allowance that no longer matches a cycle is stale: drop it."""
    edges: dict[str, set[str]] = {}
    for a, b, _ in module_imports():
        edges.setdefault(a, set()).add(b)
    found = {frozenset(c) for c in _cycles(edges)}
    assert set(ALLOWED_MODULE_CYCLES) <= found


def test_a_cycle_is_found():
    """The check can fail: a made-up back edge makes a cycle it reports."""
    assert _cycles({"manager": {"conf"}, "conf": {"routing"}, "routing": {"manager"}}) == [
        {"manager", "conf", "routing"}
    ]


@pytest.mark.parametrize("importer", sorted(FORBIDDEN))
def test_no_import_in_a_forbidden_direction(importer):
    found = [
        f"{importer} -> {b} ({here})"
        for a, b, here in imports()
        if a == importer and b in FORBIDDEN[importer]
    ]
    assert found == []


@pytest.mark.parametrize("bottom", sorted(BOTTOM))
def test_the_bottom_units_import_only_below_them(bottom):
    found = [f"{b} ({here})" for a, b, here in imports() if a == bottom and b not in BOTTOM[bottom]]
    assert found == []


@pytest.mark.parametrize("module", ["records", "api", "cron"])
def test_the_declarations_import_the_standard_library_only(module):
    tree = ast.parse((PACKAGE / f"{module}.py").read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append("." * node.level + (node.module or ""))
    outside = [name for name in found if name.split(".")[0] not in sys.stdlib_module_names]
    assert outside == [] and "__future__" in found


def test_nothing_at_run_time_imports_the_sql_tooling_or_the_package_root():
    found = [
        f"{a} -> {b} ({here})"
        for a, b, here in imports()
        if (b == "sqltools" and a not in SQLTOOLS_USERS) or b == ROOT
    ]
    assert found == []


def test_no_part_imports_a_deprecated_alias():
    found = [f"{a} -> {b} ({here})" for a, b, here in imports() if b in DEPRECATED]
    assert found == []


def test_the_public_records_are_the_package_s_and_the_internal_ones_are_not():
    import django_pgmq
    from django_pgmq import records

    defined = {
        name
        for name, value in vars(records).items()
        if isinstance(value, type) and value.__module__ == records.__name__
    }
    public = set(records.__all__)
    assert public < defined
    assert public <= set(django_pgmq.__all__)
    assert {"QueueStats", "Scrape", "BrowsedMessage"} <= defined - public
    assert not (defined - public) & set(dir(django_pgmq))


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("messages", "Message"),
        ("messages", "QueueLimits"),
        ("topics", "TopicBinding"),
        ("partitions", "Partition"),
        ("partitions", "interval_text"),
        ("contrib.spark.export", "ExportRun"),
        ("notify", "NotifyThrottle"),
    ],
)
def test_the_old_record_modules_still_give_their_names_with_a_warning(module, name):
    import importlib

    old = importlib.import_module(f"django_pgmq.{module}")
    with pytest.warns(DeprecationWarning, match=f"django_pgmq.{module}.{name} is deprecated"):
        value = getattr(old, name)
    assert value.__name__ == name
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not hasattr(old, "NoSuchRecord")


def test_the_old_sqlmigrate_path_runs_the_new_module():
    from django_pgmq import sqlmigrate
    from django_pgmq.sqltools import migrate

    assert sqlmigrate.live_sql is migrate.live_sql
    assert sqlmigrate.main is migrate.main
