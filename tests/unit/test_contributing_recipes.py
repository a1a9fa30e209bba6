"""CONTRIBUTING.md's "How to add ..." recipes stay true.

Every recipe is read as text: each file, SQL object, Python name and docs link it names
must exist. And a recipe must name every place the code has for its kind of change,
found from the code itself: for a figure of a queue, every template that shows a queue's
figures, every function that builds a `QueueStats` field by field, every SQL object that
lists the dashboard's figures and the Prometheus gauge table; for a command, its declared
row in the command reference (or the guide named below it); for an attribute, the docs it
must touch.
The attribute recipe has a working test of its own besides
(`tests/integration/test_attribute_declaration.py` adds an attribute and follows it).
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "django_pgmq"
EXTENSIONS = (".py", ".sql", ".html", ".md", ".po", ".pot", ".mo", ".yml", ".toml", ".txt")


@cache
def recipes() -> dict[str, str]:
    """The recipes of CONTRIBUTING's "How to add ..." section, by their ``###`` title."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = text.split("\n## How to add ...\n", 1)[1].split("\n## ", 1)[0]
    parts = re.split(r"^### (.+)$", section, flags=re.M)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts), 2)}


def recipe(title_start: str) -> str:
    """The one recipe whose title starts with ``title_start``."""
    [text] = [body for title, body in recipes().items() if title.startswith(title_start)]
    return text


def inline_code(text: str) -> list[str]:
    """The backticked spans of ``text``, fenced blocks left out."""
    prose = re.sub(r"^ *```.*?^ *```", "", text, flags=re.S | re.M)
    return re.findall(r"`([^`\n]+)`", prose)


def named(text: str, name: str) -> bool:
    """Whether ``text`` names ``name`` as a word (``pgmq.`` or a path before it is fine)."""
    return re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", text) is not None


@cache
def sql_objects() -> dict[str, str]:
    """Every function, type and table the SQL files define (``pgmq.name``), with its text,
    comments left out (a comment above an object is not part of it)."""
    found: dict[str, str] = {}
    for path in sorted((PACKAGE / "sql").glob("*.sql")):
        text = re.sub(r"--[^\n]*", "", path.read_text(encoding="utf-8"))
        pattern = (
            r"^CREATE (?:OR REPLACE )?(?:FUNCTION|TYPE|TABLE|VIEW) (?:IF NOT EXISTS )?(pgmq\.\w+)"
        )
        starts = list(re.finditer(pattern, text, flags=re.M))
        ends = [s.start() for s in starts[1:]] + [len(text)] * bool(starts)
        for here, end in zip(starts, ends, strict=True):
            found[here.group(1)] = found.get(here.group(1), "") + text[here.start() : end]
    return found


def _existing(token: str) -> bool:
    """Whether a path a recipe names is in the tree (beside the repository root, the
    package or the tests; a ``*`` in it must match something)."""
    for base in (ROOT, PACKAGE):
        if any(base.glob(token.rstrip("/"))):
            return True
    if "/" not in token:
        return any(p for d in (PACKAGE, ROOT / "tests", ROOT / "docs") for p in d.rglob(token))
    return False


def _defines(path: Path, name: str) -> bool:
    """Whether the module at ``path`` (a file, or a package's modules) defines ``name``."""
    files = [path] if path.suffix == ".py" else sorted(path.glob("*.py"))
    if path.is_dir() and (path / f"{name}.py").is_file():
        return True
    pattern = rf"^\s*(?:def {name}\b|class {name}\b|{name}\s*[:=])"
    return any(re.search(pattern, f.read_text(encoding="utf-8"), flags=re.M) for f in files)


def _modules(name: str) -> list[Path]:
    """The package's modules and packages called ``name`` (``a/b`` for a path)."""
    found = [p for p in PACKAGE.rglob(f"{name}.py") if ".venv" not in p.parts]
    found += [p for p in PACKAGE.rglob(name) if p.is_dir() and (p / "__init__.py").is_file()]
    return found


def problems(text: str) -> list[str]:
    """What a recipe names that is not there, one line each."""
    found = []
    for token in inline_code(text):
        token = token.strip()
        if any(c in token for c in " <>{}()\"'") and not token.endswith("()"):
            continue
        token = token.removesuffix("()")
        sql_name = re.fullmatch(r"pgmq\.(\w+)", token)
        dotted = re.fullmatch(r"([\w/]+)\.([A-Za-z_]\w*\*?)", token)
        if sql_name:
            if token not in sql_objects():
                found.append(f"{token}: no such function or type in django_pgmq/sql/")
        elif token.endswith(EXTENSIONS) or token.endswith("/"):
            if not _existing(token):
                found.append(f"{token}: no such file or folder")
        elif dotted and not token[0].isupper():
            module, name = dotted.groups()
            modules = _modules(module)
            if not modules:
                continue  # not a module of ours (``q.stats``, ``Base._fetch``)
            if name.endswith("*"):
                prefix = name[:-1]
                ok = any(
                    re.search(rf"^{prefix}\w*\s*[:=]", m.read_text(encoding="utf-8"), re.M)
                    for m in modules
                    if m.is_file()
                )
            else:
                ok = any(_defines(m, name) for m in modules)
            if not ok:
                found.append(f"{token}: {module} defines no {name}")
    for target, anchor in re.findall(r"\]\(([^)#\s]+\.md)(?:#([\w-]+))?\)", text):
        page = ROOT / target
        if not page.is_file():
            found.append(f"{target}: no such page")
        elif anchor and anchor not in heading_ids(page):
            found.append(f"{target}#{anchor}: no such heading")
    return found


def heading_ids(page: Path) -> set[str]:
    """The anchors of a Markdown page's headings, as mkdocs' toc makes them."""
    ids = set()
    for heading in re.findall(r"^#{1,6} (.+)$", page.read_text(encoding="utf-8"), flags=re.M):
        slug = re.sub(r"[^\w\s-]", "", heading.lower()).strip()
        ids.add(re.sub(r"[\s]+", "-", slug))
    return ids


def package_modules() -> list[Path]:
    """The package's Python modules, migrations left out."""
    return [p for p in sorted(PACKAGE.rglob("*.py")) if "migrations" not in p.parts]


def builders(cls: str) -> list[str]:
    """The module-level functions and methods that build a ``cls`` field by field (a call
    with more than one argument, nested functions included): each must learn of a new
    field."""
    found = []
    for path in package_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        methods = [n for c in tree.body if isinstance(c, ast.ClassDef) for n in c.body]
        for node in [*tree.body, *methods]:
            if isinstance(node, ast.FunctionDef) and any(
                isinstance(call, ast.Call)
                and getattr(call.func, "id", "") == cls
                and len(call.args) + len(call.keywords) > 1
                for call in ast.walk(node)
            ):
                found.append(node.name)
    return found


def test_the_recipes_are_found():
    titles = list(recipes())
    assert len(titles) >= 5, titles
    for start in ("A queue attribute", "A figure of a queue", "A management command"):
        assert recipe(start)


@pytest.mark.parametrize("title", sorted(recipes()))
def test_what_a_recipe_names_exists(title: str):
    assert problems(recipes()[title]) == []


def test_the_reading_catches_a_name_that_is_gone():
    """The checks can fail: a recipe naming a file, an SQL function, a module's name or a
    heading that do not exist is caught."""
    made_up = (
        "`django_pgmq/nowhere.py`, `pgmq._no_such_builder`, `sqlrun.NO_SUCH_NAME`, "
        "`attribute_spec.KINDS`, [x](docs/guide/attributes.md#no-such-heading)"
    )
    assert [line.split(":")[0] for line in problems(made_up)] == [
        "django_pgmq/nowhere.py",
        "pgmq._no_such_builder",
        "sqlrun.NO_SUCH_NAME",
        "docs/guide/attributes.md#no-such-heading",
    ]


# A figure of a queue --------------------------------------------------------------------


def dashboard_figures() -> list[str]:
    """The figures ``pgmq.queue_figures`` has beyond pgmq's ``metrics_result``: those
    only the dashboard's paths compute, so an object naming all of them lists figures."""
    text = sql_objects()["pgmq.queue_figures"]
    columns = re.findall(r"^\s+(\w+) [\w\[\] ]+,?$", text, flags=re.M)
    after = columns[columns.index("default_partition_length") + 1 :]
    return [c for c in after if c != "estimated"]


def figure_places() -> list[str]:
    """Every place the code has for a new figure, found from the code."""
    figures = dashboard_figures()
    assert len(figures) >= 4, figures
    places = [
        name
        for name, text in sql_objects().items()
        if all(named(text, f) for f in figures) and not name.startswith("pgmq.metrics")
    ]
    for path in sorted((PACKAGE / "templates").rglob("*.html")):
        if "{% figure " in path.read_text(encoding="utf-8"):
            places.append(path.name)
    places += builders("QueueStats")
    for path in package_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:  # a table of gauges that reads a queue's figures (q.stats)
            targets = [node.target] if isinstance(node, ast.AnnAssign) else []
            targets += node.targets if isinstance(node, ast.Assign) else []
            reads_stats = any(
                isinstance(n, ast.Attribute) and n.attr == "stats" for n in ast.walk(node)
            )
            places += [
                t.id
                for t in targets
                if isinstance(t, ast.Name) and "GAUGES" in t.id and reads_stats
            ]
    return places


def test_the_figure_recipe_names_every_place_the_code_has_for_a_figure():
    places = figure_places()
    # What the code has today; a new place is found without changing this test.
    assert {
        "pgmq.queue_figures",
        "pgmq._queue_figures_counted",
        "pgmq._dashboard_stats",
        "overview.html",
        "overview_all.html",
        "QUEUE_GAUGES",
    } <= set(places), places
    text = recipe("A figure of a queue")
    missing = [p for p in places if not named(text, p.removeprefix("pgmq."))]
    assert missing == [], f"CONTRIBUTING's figure recipe does not name {missing}"


def test_the_overview_total_sums_every_figure_but_the_ages():
    """The figure recipe says a count needs nothing in `total_stats`: every field of
    `QueueStats` but the name, the ages (``*_sec``) and ``estimated`` is summed, None as 0,
    whatever fields the record has."""
    from dataclasses import fields
    from types import SimpleNamespace

    from django_pgmq.dashboard.overview import total_stats
    from django_pgmq.records import QueueStats

    names = [f.name for f in fields(QueueStats)]
    figures = [n for n in names if n not in ("queue_name", "estimated")]
    assert {"queue_length", "oldest_msg_age_sec", "poison_length"} <= set(figures)

    def stats(value: int | None, estimated: set[str]) -> SimpleNamespace:
        row = QueueStats(
            queue_name="q", estimated=frozenset(estimated), **dict.fromkeys(figures, value)
        )
        return SimpleNamespace(stats=row)

    total = total_stats([stats(3, {"queue_length"}), stats(4, set()), stats(None, {"x"})])
    for name in figures:
        assert getattr(total, name) == (None if name.endswith("_sec") else 7), name
    assert total.estimated == {"queue_length", "x"} and total.queue_name == ""


def estimated_label_row() -> str:
    """The row of ``pgmq_figure_estimated`` in the operating guide's table of metrics."""
    text = (ROOT / "docs" / "guide" / "operating.md").read_text(encoding="utf-8")
    [row] = [line for line in text.splitlines() if line.startswith("| `pgmq_figure_estimated`")]
    return row


def test_every_figure_that_can_be_an_estimate_is_a_value_of_the_estimated_label():
    """What the figure recipe says for Prometheus: each figure SQL can mark as an estimate
    is named in the row of ``pgmq_figure_estimated``, the label's values."""
    objects = sql_objects()
    columns = re.findall(r"^\s+(\w+) [\w\[\] ]+,?$", objects["pgmq._dashboard_stats"], re.M)
    marked = set()
    for name in ("pgmq._queue_figures_estimated", "pgmq._dashboard_archive_figures"):
        marked |= {c for c in re.findall(r"'(\w+)'", objects[name]) if c in columns}
    assert {"queue_length", "poison_length", "archive_size"} <= marked, marked
    row = estimated_label_row()
    assert sorted(c for c in marked if not named(row, c)) == []
    assert "pgmq_figure_estimated" in recipe("A figure of a queue")


# A SQL statement ------------------------------------------------------------------------


def test_every_public_function_of_ours_has_a_row_in_the_sql_reference():
    """The SQL statement recipe: a public function that is not pgmq's has a row in
    "Our additions" of docs/reference/sql.md (the integrations' by their prefix)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    pgmq_names = {key.split("(")[0] for key in hooks.PGMQ_113}
    ours = {
        name
        for _stem, name, _arguments, result in hooks.public_sql_functions()
        if name not in pgmq_names and result.lower() != "trigger"
    }
    assert {"set_queue_attributes", "create_workflow", "celery_publish"} <= ours
    page = (ROOT / "docs" / "reference" / "sql.md").read_text(encoding="utf-8")
    table = page.split("\n## Our additions\n", 1)[1].split("\n## ", 1)[0]
    firsts = [line.split(" | ")[0] for line in table.splitlines() if line.startswith("| `")]
    listed = {n for cell in firsts for n in re.findall(r"`(\w+\*?)`", cell)}
    missing = sorted(
        n
        for n in ours
        if n not in listed and not any(p.endswith("*") and n.startswith(p[:-1]) for p in listed)
    )
    assert missing == [], f'no row in docs/reference/sql.md "Our additions" for {missing}'
    text = recipe("A SQL statement")
    assert "docs/reference/sql.md" in text and '"Our additions"' in text


# A management command -------------------------------------------------------------------


def command_names() -> list[str]:
    """The app's management commands."""
    return sorted(p.stem for p in (PACKAGE / "management" / "commands").glob("pgmq_*.py"))


REFERENCE = ROOT / "docs" / "reference" / "commands.md"
TABLE = "What they print and when they fail"


def test_every_command_declares_its_row_or_its_guide():
    """The reference's table is generated from each command's `reference`: a command
    that declares none (or a row that would not make one) is named."""
    from django_pgmq.sqltools import command_table

    declared = command_table.declarations()
    assert set(declared) == set(command_names())
    assert command_table.problems(declared) == []


def test_a_command_without_its_declaration_is_named():
    """The check can fail: no `reference`, a row whose usage names another command, a
    pointer without a link, each give a line naming the command."""
    from django_pgmq.management.reference import GuidePointer, ReferenceRow
    from django_pgmq.sqltools import command_table

    found = command_table.problems(
        {
            "pgmq_none": None,
            "pgmq_row": ReferenceRow("`pgmq_other QUEUE`", "`done`", "a | b"),
            "pgmq_guide": GuidePointer("the worker", "the worker guide"),
        }
    )
    named = [line.split(":")[0] for line in found]
    assert named == ["pgmq_none", "pgmq_row", "pgmq_row", "pgmq_guide"]
    assert "declares no `reference`" in found[0]


def test_the_reference_table_is_what_the_commands_declare():
    """The page's generated region holds one row per command that declares one, and names
    under it each command a guide explains (`sqltools.regenerate` writes it)."""
    from django_pgmq.management.reference import GuidePointer
    from django_pgmq.sqltools import command_table

    declared = command_table.declarations()
    text = REFERENCE.read_text(encoding="utf-8")
    assert command_table.rendered()[REFERENCE] == text, (
        "run: python -m django_pgmq.sqltools.regenerate"
    )
    section = text.split(f"\n## {TABLE}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `pgmq_")]
    in_rows = {re.match(r"\| `(pgmq_\w+)", row).group(1) for row in rows}
    below = set(re.findall(r"`(pgmq_\w+)`", section[section.rindex("\n|") :]))
    guided = {name for name, ref in declared.items() if isinstance(ref, GuidePointer)}
    assert {"pgmq_create", "pgmq_send"} <= in_rows and "pgmq_consume" in below
    assert (in_rows, below) == (set(declared) - guided, guided)


def test_the_command_recipe_says_where_the_row_is_declared():
    text = recipe("A management command")
    assert "docs/reference/commands.md" in text and f'"{TABLE}"' in text
    assert "ReferenceRow" in text and "GuidePointer" in text and "sqltools.regenerate" in text
    assert f"## {TABLE}" in REFERENCE.read_text(encoding="utf-8")


def test_every_command_is_built_on_the_base_the_recipe_names():
    """The recipe says `PgmqCommand`: every command's class derives from it."""
    bases = {"PgmqCommand"}
    for path in [PACKAGE / "management" / "command_base.py", *PACKAGE.rglob("*_command.py")]:
        classes = [n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.ClassDef)]
        bases |= {c.name for c in classes if {getattr(b, "id", None) for b in c.bases} & bases}
    assert "PgmqCommand" in recipe("A management command")
    for name in command_names():
        tree = ast.parse((PACKAGE / "management" / "commands" / f"{name}.py").read_text())
        [command] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Command"]
        assert {getattr(b, "id", None) for b in command.bases} & bases, name


# A queue attribute ----------------------------------------------------------------------

ATTRIBUTES_GUIDE = ROOT / "docs" / "guide" / "attributes.md"


def test_the_attribute_recipe_names_the_docs_it_must_touch():
    """Its explanation in the guide ("in detail", when the recipe's rule asks for one),
    and the table "What holds for which client", which goes by side."""
    text = recipe("A queue attribute")
    guide = ATTRIBUTES_GUIDE.read_text(encoding="utf-8")
    assert "docs/guide/attributes.md" in text
    assert '"What each does, in detail"' in text and "\nWhat each does, in detail" in guide
    assert '"What holds for which client"' in text
    assert "What holds for which client" in {
        h.strip() for h in re.findall(r"^## (.+)$", guide, flags=re.M)
    }


# The attributes whose one line of help cannot say it all: a limit (what it counts), a
# retention (who deletes, when), one naming another queue or taking a rate. CONTRIBUTING's
# attribute recipe states this rule; any other attribute's help stands alone.
DETAIL_SIDES = ("limit", "retention")
DETAIL_KINDS = ("queue", "rate")


def detail_bullets() -> dict[str, str]:
    """The bullets of the guide's "What each does, in detail", by each attribute key
    named before the bullet's first colon (``max_receive_count`` + ``dead_letter_queue``)."""
    guide = ATTRIBUTES_GUIDE.read_text(encoding="utf-8")
    after = guide.split("\nWhat each does, in detail", 1)[1].split("\n\n", 2)[1]
    found: dict[str, str] = {}
    for line in after.splitlines():
        if line.startswith("- "):
            for key in re.findall(r"`([a-z_]+)`", line.split(":", 1)[0]):
                found[key] = line
    return found


def test_the_client_table_has_a_row_for_every_side():
    """Which clients apply an attribute goes by its side: a new attribute of a known side
    needs no row; a new side does."""
    from django_pgmq.attributes_declared import DECLARED

    guide = ATTRIBUTES_GUIDE.read_text(encoding="utf-8")
    section = guide.split("\n## What holds for which client\n", 1)[1].split("\n## ", 1)[0]
    first_cells = [line.split("|")[1] for line in section.splitlines() if line.startswith("| `")]
    listed = {name for cell in first_cells for name in re.findall(r"`(\w+)`", cell)}
    assert sorted({s.side for s in DECLARED} - listed) == []
    assert sorted(listed - {s.side for s in DECLARED} - {"both"}) == []


def test_every_attribute_is_explained_in_detail_or_by_its_help_alone():
    """A limit or retention attribute, or one of kind queue or rate, has its bullet in
    "What each does, in detail"; any other's help is one sentence naming no other
    attribute (a pair explained together has a bullet), and may have a bullet."""
    from django_pgmq.attributes_declared import DECLARED

    rule = recipe("A queue attribute")
    assert all(f"`{word}`" in rule for word in DETAIL_SIDES + DETAIL_KINDS)
    keys = {s.key for s in DECLARED}
    bullets = detail_bullets()
    assert sorted(set(bullets) - keys) == [], "bullets of no declared attribute"
    unexplained = [
        s.key
        for s in DECLARED
        if (s.side in DETAIL_SIDES or s.kind in DETAIL_KINDS) and s.key not in bullets
    ]
    assert unexplained == [], "these need a bullet in the guide's 'in detail'"
    not_alone = [
        s.key
        for s in DECLARED
        if s.key not in bullets
        and (
            re.fullmatch(r"[^.]+(\.\.[^.]+)*\.", s.help) is None
            or any(re.search(rf"\b{k}\b", s.help) for k in keys - {s.key})
        )
    ]
    assert not_alone == [], "help that needs a bullet: one sentence, no other attribute"


def test_the_attribute_recipe_names_every_side():
    """Every side the declaration uses is one the recipe lists."""
    from django_pgmq.attributes_declared import DECLARED

    text = recipe("A queue attribute")
    missing = sorted({s.side for s in DECLARED if f"`{s.side}`" not in text})
    assert missing == [], missing


# A worker behaviour ---------------------------------------------------------------------


def test_the_worker_recipe_names_every_place_that_builds_a_consumer_or_its_settings():
    """A new setting is a new field of `Consumer` and `QueueSettings`: every function that
    builds one field by field must decide its value, so the recipe names each."""
    places = builders("Consumer") + builders("QueueSettings")
    assert {"consumer", "plan", "resolve"} <= set(places), places
    text = recipe("A worker behaviour")
    assert [p for p in places if not named(text, p)] == []


def test_every_pgmq_consume_option_has_a_row_in_the_worker_guide():
    """The worker recipe: a command-line option of pgmq_consume gets its row in the table
    of options under "Settings" in docs/guide/worker.md."""
    from django_pgmq.management.commands.pgmq_consume import Command

    parser = Command().create_parser("manage.py", "pgmq_consume")
    options = {
        o
        for action in parser._actions
        for o in action.option_strings
        if o.startswith("--") and action.dest not in DJANGO_OPTIONS
    }
    assert {"--batch", "--tasks", "--no-wait"} <= options, options
    guide = (ROOT / "docs" / "guide" / "worker.md").read_text(encoding="utf-8")
    section = guide.split("\n## Settings\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    listed = set(re.findall(r"--[\w-]+", " ".join(rows)))  # a deprecated spelling: any cell
    assert sorted(options - listed) == [], "no row in docs/guide/worker.md for these"
    assert "docs/guide/worker.md" in recipe("A worker behaviour")


# Django's own options of every command (--settings, --traceback, ...), the guide's
# business only where the table names them.
DJANGO_OPTIONS = {"help", "version", "settings", "pythonpath", "traceback", "no_color"}
DJANGO_OPTIONS |= {"force_color", "skip_checks", "verbosity"}


def test_every_declared_setting_is_a_field_of_both_records_the_recipe_names():
    from dataclasses import fields

    from django_pgmq.consumer_settings import SETTINGS
    from django_pgmq.worker.config import DEFAULTS, QueueSettings
    from django_pgmq.worker.registry import Consumer

    declared = [s.name for s in SETTINGS]
    assert set(DEFAULTS) <= set(declared)
    for record in (Consumer, QueueSettings):
        names = {f.name for f in fields(record)}
        assert [key for key in declared if key not in names] == [], record.__name__
    text = recipe("A worker behaviour")
    assert all(named(text, name) for name in ("Consumer", "QueueSettings", "ConsumerSettings"))


def test_every_declared_setting_has_its_option_default_and_row_in_the_worker_guide():
    """The declaration is followed: each setting is an option of pgmq_consume whose help
    gives its default, and has a row in the table under "Settings", with its default."""
    from django_pgmq.consumer_settings import SETTINGS
    from django_pgmq.management.commands.pgmq_consume import Command

    parser = Command().create_parser("manage.py", "pgmq_consume")
    helps = {o: a.help or "" for a in parser._actions for o in a.option_strings}
    guide = (ROOT / "docs" / "guide" / "worker.md").read_text(encoding="utf-8")
    section = guide.split("\n## Settings\n", 1)[1].split("\n## ", 1)[0]
    missing = []
    for setting in SETTINGS:
        shown = setting.shown_default or setting.shown(setting.default)
        rows = [line for line in section.splitlines() if line.startswith(f"| `{setting.flag}")]
        if setting.flag not in helps:
            missing.append(f"{setting.flag}: not an option of pgmq_consume")
        elif (
            not setting.is_switch
            and f"(default: {setting.default_text()})" not in helps[setting.flag]
        ):
            missing.append(f"{setting.flag}: its help does not give its default")
        if len(rows) != 1 or f"`{setting.name}`" not in rows[0] or shown not in rows[0]:
            missing.append(f"{setting.flag}: no row with its keyword and default in the guide")
    assert missing == []
    text = recipe("A worker behaviour")
    assert named(text, "consumer_settings.py") and named(text, "sqltools.regenerate")


# A record, or a module ------------------------------------------------------------------


def layout_names() -> set[str]:
    """The names in the first column of design.md's layout table."""
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    cells = [line.split(" | ")[0] for line in section.splitlines() if line.startswith("| `")]
    return {name.rstrip("/") for cell in cells for name in re.findall(r"`([^`]+)`", cell)}


def test_the_layout_table_has_every_top_level_module_and_package():
    """The module recipe says: add it to the layout table; the table then maps the tree."""
    assert "docs/design.md" in recipe("A record, or a module")
    tree = {p.name for p in PACKAGE.glob("*.py")} | {
        p.name for p in PACKAGE.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))
    }
    tree.add("pyspark_pgmq")  # beside the app, listed with the Spark source
    names = layout_names()
    listed = names | {n.split("/")[0] for n in names}  # contrib/celery/ lists contrib
    assert sorted(tree - listed) == [], "design.md's layout table lacks these"
    stale = sorted(
        n for n in names - tree if not (PACKAGE / n).exists() and not (ROOT / n).exists()
    )
    assert stale == [], "design.md's layout table names what is gone"
