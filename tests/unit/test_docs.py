"""The documentation site builds with ``mkdocs build --strict`` and its generated pages are whole.

No database: the command reference is generated with a database URL that is never
connected to (``docs/gen_commands.py``), and the SQL reference from the SQL files.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def load_docs_module(name: str) -> ModuleType:
    """Import ``docs/<name>.py`` (the docs folder is not a package)."""
    spec = importlib.util.spec_from_file_location(f"docs_{name}", ROOT / "docs" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built strictly into a temporary folder (any warning fails the build)."""
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def page_text(site: Path, page: str) -> str:
    """The visible text of a built page (tags dropped, entities kept)."""
    html = (site / page / "index.html").read_text() if page else (site / "index.html").read_text()
    return re.sub(r"<[^>]+>", "", html)


@pytest.mark.slow
@pytest.mark.parametrize(
    "page",
    [
        "",
        "getting-started",
        "guide/queues",
        "guide/transactions",
        "guide/worker",
        "guide/tasks",
        "guide/celery",
        "guide/spark",
        "guide/admin",
        "guide/attributes",
        "guide/operating",
        "guide/databases",
        "reference/sql",
        "reference/python",
        "reference/commands",
        "design",
        "internals/message-path",
        "internals/attributes",
        "benchmarks",
        "changelog",
    ],
)
def test_the_page_is_built(site: Path, page: str) -> None:
    assert (site / page / "index.html").is_file()


@pytest.mark.slow
def test_the_command_reference_has_every_command_and_its_help(site: Path) -> None:
    text = page_text(site, "reference/commands")
    gen = load_docs_module("gen_commands")
    names = gen.command_names()
    assert "pgmq_consume" in names and "pgmq_send" in names
    for name in names:
        assert f"usage: manage.py {name}" in text, name
    assert "--until-empty" in text  # an option, from pgmq_consume's own parser


@pytest.mark.slow
def test_the_sql_reference_lists_every_public_function(site: Path) -> None:
    text = page_text(site, "reference/sql")
    hooks = load_docs_module("hooks")
    functions = hooks.public_sql_functions()
    assert len(functions) > 80
    for _stem, name, _arguments, _result in functions:
        assert f"pgmq.{name}(" in text, name
    assert not any(name.startswith("_") for _stem, name, _a, _r in functions)


@pytest.mark.slow
def test_the_python_reference_comes_from_the_docstrings(site: Path) -> None:
    html = (site / "reference/python/index.html").read_text()
    for anchor in (
        "django_pgmq.manager.QueueManager.send",
        "django_pgmq.manager.QueueManager.read",
        "django_pgmq.manager.QueueManager.set_queue_attributes",
        "django_pgmq.errors.QueueNotFound",
        "django_pgmq.operations.CreateQueue",
        "django_pgmq.tasks.backend.PgmqBackend",
    ):
        assert f'id="{anchor}"' in html, anchor


@pytest.mark.slow
def test_the_changelog_page_includes_the_changelog(site: Path) -> None:
    first_entry = next(
        line[3:].strip()
        for line in (ROOT / "CHANGELOG.md").read_text().splitlines()
        if line.startswith("## ")
    )
    assert first_entry in page_text(site, "changelog")


@pytest.mark.slow
def test_the_site_loads_nothing_from_elsewhere(site: Path) -> None:
    for page in site.rglob("*.html"):
        html = page.read_text()
        assert "fonts.googleapis.com" not in html, page
        assert "fonts.gstatic.com" not in html, page
        assert 'class="mermaid"' not in html, page  # Material would load mermaid from a CDN


@pytest.mark.slow
def test_the_design_page_shows_the_diagram(site: Path) -> None:
    assert 'src="../architecture.svg"' in (site / "design/index.html").read_text()
    assert (site / "architecture.svg").is_file()


def test_the_design_page_is_a_map_that_links_every_internals_page() -> None:
    """design.md stays short enough to read first; the detail is in docs/internals/."""
    text = (ROOT / "docs" / "design.md").read_text()
    assert len(text.splitlines()) <= 250
    pages = sorted(p.name for p in (ROOT / "docs" / "internals").glob("*.md"))
    assert pages, "the detail pages are gone"
    assert [p for p in pages if f"(internals/{p})" not in text] == []


def test_pgmq_113_signatures_match_the_pgmq_wheel() -> None:
    """The "compatible" column is right: the list equals pgmq's own SQL, bundled by its wheel."""
    import pgmq

    hooks = load_docs_module("hooks")
    bundled = Path(pgmq.__file__).parent / "sql" / "pgmq.sql"
    theirs = {
        hooks.signature_key(name, arguments)
        for name, arguments, _result in hooks.sql_functions(bundled.read_text())
        if not name.startswith("_")
    }
    assert theirs == hooks.PGMQ_113
    ours = {hooks.signature_key(name, args) for _s, name, args, _r in hooks.public_sql_functions()}
    assert ours >= hooks.PGMQ_113


def test_signature_key_tells_overloads_apart() -> None:
    hooks = load_docs_module("hooks")
    assert (
        hooks.signature_key("send", "queue_name TEXT, msg JSONB, delay TIMESTAMP WITH TIME ZONE")
        == "send(text,jsonb,timestamptz)"
    )
    assert (
        hooks.signature_key(
            "read", "queue_name text, vt integer, qty INT, conditional jsonb DEFAULT '{}'"
        )
        == "read(text,integer,integer,jsonb)"
    )
    assert hooks.signature_key("metrics_all", "") == "metrics_all()"


README_TEST_COMMAND = (
    "python3 -m venv .venv && .venv/bin/pip install -q -e '.[dev]' && .venv/bin/pytest"
)


def test_the_readme_is_a_landing_page_with_the_quick_start() -> None:
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 200
    assert "## Quick start" in text
    assert README_TEST_COMMAND in text  # .ci/run runs it verbatim
    assert ".venv/bin/python manage.py pgmq_demo" in text


def test_the_readmes_relative_links_lead_to_files_the_site_builds() -> None:
    text = (ROOT / "README.md").read_text()
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if "://" not in t]
    assert any(t.startswith("docs/") for t in local)
    for target in local:
        assert (ROOT / target).exists(), target


def test_the_readmes_speed_claim_is_the_ratio_its_table_shows() -> None:
    """The "Fast" bullet says the figures of the Performance table, not others."""
    text = (ROOT / "README.md").read_text()
    claim = re.search(
        r"reads\s+and archives about ([\d.]+) times .*? about\s+([\d.]+) times through the SQL API",
        text,
        re.S,
    )
    row = re.search(r"\| read \+ archive at batch 10 \| ([\d.]+)x \| ([\d.]+)x \|", text)
    assert claim and row, "the README lost its claim or its table row"
    manager, sql_api = claim.groups()
    assert (sql_api, manager) == row.groups()


def test_getting_started_has_a_complete_settings_example_that_runs() -> None:
    """INSTALLED_APPS, DATABASES, PGMQ, TASKS and LOGGING in one block, and it runs."""
    from django.utils.module_loading import import_string

    from django_pgmq import conf

    text = (ROOT / "docs" / "getting-started.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    [example] = [b for b in blocks if "INSTALLED_APPS" in b and "LOGGING" in b]
    names: dict = {}
    exec(compile(example, "getting-started.md", "exec"), names)  # plain assignments only
    assert {"pgtrigger", "django_pgmq"} <= set(names["INSTALLED_APPS"])
    assert names["DATABASES"]["default"]["ENGINE"] == "django.db.backends.postgresql"
    assert set(names["PGMQ"]) <= set(conf.DEFAULTS)
    for key, value in names["PGMQ"].items():
        assert conf._VALID[key][0](value) if key in conf._VALID else True, key
    backend = names["TASKS"]["default"]
    assert backend["BACKEND"] == "django_pgmq.tasks.PgmqBackend" and backend["QUEUES"]
    for formatter in names["LOGGING"]["formatters"].values():
        import_string(formatter["()"])
    assert "psycopg[binary]" in text and "libpq" in text
