"""The generated regions of hand-written pages: what stands between a page's
``<!-- NAME: generated, begin -->`` and ``<!-- NAME: generated, end -->`` lines, which a
generator rewrites and ``regenerate --check`` compares, leaving the prose around alone."""

from __future__ import annotations


def markers(name: str) -> tuple[str, str]:
    """The begin and end markers of the region called ``name``."""
    return f"<!-- {name}: generated, begin -->", f"<!-- {name}: generated, end -->"


def _bounds(text: str, name: str) -> tuple[int, int]:
    begin, end = markers(name)
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        raise ValueError(f"the page needs one {begin!r} line, then one {end!r} line")
    return text.index(begin) + len(begin) + 1, text.index(end)


def region(text: str, name: str) -> str:
    """The generated text of region ``name`` as it stands in a page's ``text``."""
    start, end = _bounds(text, name)
    return text[start:end]


def with_region(text: str, name: str, body: str) -> str:
    """A page's ``text`` with region ``name`` holding ``body`` (which ends with a newline)."""
    start, end = _bounds(text, name)
    return text[:start] + body + text[end:]
