"""i18n of the admin: every user-facing string of the dashboard is marked for translation,
the shipped ``locale/django.pot`` lists them all, the shipped German translation covers
every one of them (its compiled ``.mo`` too), a page in German shows German, and times
follow the admin's time zone."""

from __future__ import annotations

import ast
import gettext
import re
from pathlib import Path

import pytest

import django_pgmq

PACKAGE = Path(django_pgmq.__file__).parent
TEMPLATES = sorted((PACKAGE / "templates" / "django_pgmq" / "admin").glob("*.html"))
PYTHON = sorted(
    [
        *(PACKAGE / "dashboard").glob("*.py"),
        *(PACKAGE / "templatetags").glob("*.py"),
        PACKAGE / "attributes_declared.py",  # the attributes form's labels
        PACKAGE / "models.py",  # the task results' labels and statuses
        PACKAGE / "tasks" / "results_admin.py",
    ]
)
POT = PACKAGE / "locale" / "django.pot"
GERMAN = PACKAGE / "locale" / "de" / "LC_MESSAGES"
GETTEXT = {"_", "gettext", "gettext_lazy", "ngettext", "pgettext"}

BLOCK = re.compile(r"{%\s*blocktranslate\b(.*?)%}(.*?){%\s*endblocktranslate\s*%}", re.S)
TAG_ARGUMENT = re.compile(r"""\b_\((["'])(.*?)\1\)""")  # {% crumb _("Queues") url %}
TRANSLATE = re.compile(r"""{%\s*translate\s+(["'])(.*?)\1\s*%}""", re.S)
# Text that needs no translation: technical names, numbers, symbols and entities.
ALLOWED = re.compile(r"^(msg_id|read_ct|vt|ms|pgmq-[\w-]+|[\W\d_]+|&\w+;)$")


def pot_msgids(path: Path = POT) -> set[str]:
    """The msgid and msgid_plural strings of a .pot or .po (continuation lines joined)."""
    ids, current = set(), None
    for line in path.read_text(encoding="utf-8").splitlines():
        match = re.match(r'^(msgid|msgid_plural) "(.*)"$', line)
        if match:
            if current is not None:
                ids.add(current)
            current = match.group(2)
        elif line.startswith('"') and current is not None:
            current += line[1:-1]
        else:
            if current is not None:
                ids.add(current)
            current = None
    return {i.encode().decode("unicode_escape").encode("latin-1").decode() for i in ids} - {""}


def template_messages(text: str) -> set[str]:
    """The msgids a template marks, in the form makemessages writes them."""
    found = {m.group(2) for m in TRANSLATE.finditer(text)}
    found.update(m.group(2) for m in TAG_ARGUMENT.finditer(text))
    for block in BLOCK.finditer(text):
        body = re.sub(r"{{\s*(\w+)\s*}}", r"%(\1)s", block.group(2))
        found.update(part for part in re.split(r"{%\s*plural\s*%}", body))
    return found


def unmarked_text(text: str) -> list[str]:
    """Words a template shows without marking them (tags, variables and marked text removed)."""
    text = BLOCK.sub(" ", text)
    text = TRANSLATE.sub(" ", text)
    text = re.sub(r"{#.*?#}|{%.*?%}|{{.*?}}", " ", text, flags=re.S)
    shown = []
    for attr in re.findall(r'\b(?:title|placeholder|aria-label|alt)="([^"]*)"', text):
        shown.extend(attr.split())
    for tag in re.findall(r'<input[^>]*type="submit"[^>]*>', text):  # a button's label
        shown.extend(" ".join(re.findall(r'\bvalue="([^"]*)"', tag)).split())
    text = re.sub(r"<[^>]*>", " ", text)
    shown.extend(text.split())
    return [word for word in shown if not ALLOWED.match(word)]


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda p: p.name)
def test_every_string_a_template_shows_is_marked(template):
    assert unmarked_text(template.read_text(encoding="utf-8")) == []


def test_the_check_finds_an_unmarked_string():
    html = (
        '<p title="Hello there">{% translate "Fine" %} Not marked {{ value }}</p>'
        '<input type="submit" value="Go"><input type="hidden" name="x" value="on">'
    )
    assert unmarked_text(html) == ["Hello", "there", "Go", "Not", "marked"]


def python_messages(path: Path) -> set[str]:
    """The literal strings passed to gettext functions in a module."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in GETTEXT:
            found.update(
                arg.value
                for arg in node.args
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
            )
    return found


def gettext_aliases(path: Path) -> set[str]:
    """The names a module binds Django's translation functions to (``import ... as``)."""
    return {
        alias.asname or alias.name
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and node.module == "django.utils.translation"
        for alias in node.names
        if "gettext" in alias.name
    }


@pytest.mark.parametrize("module", PYTHON, ids=lambda p: p.name)
def test_gettext_is_called_by_a_name_makemessages_extracts(module):
    """xgettext only knows ``_``, ``gettext``, ``gettext_lazy``...: a string passed to an
    alias such as ``_lazy`` is marked in the code but never reaches the .pot."""
    assert gettext_aliases(module) <= GETTEXT


def test_the_shipped_pot_lists_every_marked_string():
    """Run ``manage.py makemessages`` (see CONTRIBUTING.md) when this fails."""
    marked = set().union(
        *(template_messages(p.read_text(encoding="utf-8")) for p in TEMPLATES),
        *(python_messages(p) for p in PYTHON),
    )
    assert len(marked) > 150
    missing = sorted(marked - pot_msgids())
    assert missing == [], f"not in {POT.name}: {missing}"


def test_times_are_shown_in_the_admins_time_zone(client, queue, manager, internal, settings):
    from django.utils import timezone

    from tests.integration.test_admin_views import ALL_PERMS, login, page

    login(client, *ALL_PERMS)
    msg_id = manager.send(queue, {"n": 1})
    [message] = internal.browse_messages(queue)
    settings.TIME_ZONE = "Asia/Kathmandu"  # UTC+05:45: no other zone shows these minutes
    html = client.get(page(queue)).content.decode()
    local = timezone.localtime(message.enqueued_at, timezone.get_fixed_timezone(345))
    assert local.strftime("%Y-%m-%d %H:%M:%S") in html
    assert message.enqueued_at.strftime("%Y-%m-%d %H:%M:%S") not in html  # not UTC
    assert "Times are shown in the time zone Asia/Kathmandu." in html
    assert msg_id == message.msg_id


def po_entries(path: Path) -> list[dict[str, str]]:
    """The entries of a .po file: msgid, msgid_plural, msgstr / msgstr[n], flags (raw text)."""
    entries: list[dict[str, str]] = []
    entry: dict[str, str] = {}
    key = ""
    for line in [*path.read_text(encoding="utf-8").splitlines(), ""]:
        if not line.strip():
            if entry:
                entries.append(entry)
            entry, key = {}, ""
        elif line.startswith("#,"):
            entry["flags"] = line
        elif match := re.match(r'^(msgid|msgid_plural|msgstr(?:\[\d\])?) "(.*)"$', line):
            key = match.group(1)
            entry[key] = match.group(2)
        elif line.startswith('"') and key:
            entry[key] += line[1:-1]
    return [e for e in entries if e.get("msgid")]


def test_the_german_translation_is_complete_and_compiled():
    """Every string of the .pot has a German translation, in the .po and in the .mo.

    After ``makemessages`` (CONTRIBUTING.md) update ``locale/de`` with ``msgmerge``,
    translate what is new and compile it with ``msgfmt``; this fails until then.
    """
    po = GERMAN / "django.po"
    assert pot_msgids(po) == pot_msgids(), "the German .po is not merged with the .pot"
    entries = po_entries(po)
    assert len(entries) > 150
    untranslated = [
        e["msgid"]
        for e in entries
        if "fuzzy" in e.get("flags", "")
        or not all(v for k, v in e.items() if k.startswith("msgstr"))
    ]
    assert untranslated == [], f"not translated (or fuzzy) in {po}: {untranslated}"
    with open(GERMAN / "django.mo", "rb") as mo:
        compiled = gettext.GNUTranslations(mo)
    decode = lambda raw: raw.encode().decode("unicode_escape").encode("latin-1").decode()  # noqa: E731
    stale = []
    for entry in entries:
        msgid = decode(entry["msgid"])
        if "msgid_plural" in entry:
            got = compiled.ngettext(msgid, decode(entry["msgid_plural"]), 2)
            wanted = decode(entry["msgstr[1]"])
        else:
            got, wanted = compiled.gettext(msgid), decode(entry["msgstr"])
        if got != wanted:
            stale.append(msgid)
    assert stale == [], f"django.mo is older than django.po (run msgfmt): {stale}"


def test_the_dashboard_speaks_german_when_the_language_is_german(client, queue, manager, settings):
    from tests.integration.test_admin_views import ADMIN, ALL_PERMS, login, page

    settings.LANGUAGE_CODE = "de"
    login(client, *ALL_PERMS)
    manager.send(queue, {"n": 1})
    html = client.get(page(queue)).content.decode()
    for german in (
        "Eine Nachricht senden",
        "Queue-Attribute",
        "Aktuelle Nachrichten",
        "Queue-Länge",
    ):
        assert german in html, german
    assert "Send a message" not in html and "Queue attributes" not in html
    overview = client.get(ADMIN).content.decode()
    assert "Noch keine Queues." in overview or "Nachrichten in der aktuellen Tabelle" in overview


def test_the_schedule_pages_speak_german(client, queue, internal, settings):
    """The schedule pages (list, page, its form's lazy labels, the plural) in German."""
    from tests.integration.test_admin_views import ADMIN, ALL_PERMS, login

    settings.LANGUAGE_CODE = "de"
    login(client, *ALL_PERMS)
    internal.create_schedule("i18n_nightly", "30 2 * * *", queue, {"n": 1})
    try:
        listing = client.get(f"{ADMIN}schedules/").content.decode()
        html = client.get(f"{ADMIN}schedules/i18n_nightly/edit/").content.decode()
    finally:
        internal.drop_schedule("i18n_nightly")
    for german in ("Zeitpläne", "Nächster Termin", "eingeschaltet"):
        assert german in listing, german
    for german in ("Nächste Termine", "0 Termine übersprungen", "Task-Argumente", "Zeitzone"):
        assert german in html, german
    assert "Next ticks" not in html and "Task arguments" not in html
