"""A page with headings, indexed as sections (one document per section).

A long page (terms of service, a privacy policy, a handbook) answers most questions with one
of its sections, and a page's embedding reads only its start. :func:`split_sections` cuts a
markdown or plain-text page at its headings into documents shaped as the ranking expects of a
page in sections: each text starts with the page's title as its own first sentence, then the
heading, then the body (``"Acme Terms. Refunds. Refunds are issued ..."``), and every section
carries the page's date. One title and one date for all of them is how the ranking recognises
the sections of one page (:func:`chronorank.ranking.sectioned`): the title then says which page,
not which section, and the fused similarity decides which section is about the question.

A later recording of the page is split the same way with its own date; a section keeps its key
``section`` (the page id and the heading's slug) from one recording to the next, so
``group_key="section"`` (:class:`chronorank.index.TemporalIndex`) makes the recordings of one
section a version chain. Pure Python, no dependency.
"""

from __future__ import annotations

import re
from typing import Any

from chronorank.errors import InvalidInput

__all__ = ["split_sections"]

_ATX = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_BOLD = re.compile(r"^\s*(?:\*\*|__)(.+?)(?:\*\*|__)\s*:?\s*$")
_SLUG = re.compile(r"[^\w]+")


def split_sections(text: str, *, id: str, title: str, date: Any = None, **fields: Any) -> list[dict[str, Any]]:
    """The sections of one page as documents for ``TemporalIndex.add`` (or a corpus file).

    Headings are ATX lines (``# Refunds``), setext lines (a line underlined with ``===`` or
    ``---``) and lines that are only bold text (``**Refunds**``). Text before the first heading
    is the section ``preamble`` (its text has no heading part); a section with no body is
    dropped. Each document: ``id`` ``"<id>#<slug>@<date>"`` (``"<id>#<slug>"`` without a date;
    a repeated slug gets ``-2``, ``-3``), ``text`` ``"<title>. <heading>. <body>"``, the page's
    ``date``, ``page`` (``id``), ``section`` (``"<id>#<slug>"``, the same in every recording of
    the page: a version-chain key) and ``heading``, plus ``fields`` (any other metadata, the
    same on every section).
    """
    if not isinstance(text, str):
        raise InvalidInput(f"split_sections: text is {type(text).__name__}, not str; pass the page's text.")
    if not isinstance(id, str) or not id.strip():
        raise InvalidInput(f"split_sections: id={id!r}; give the page a non-empty string id.")
    if not isinstance(title, str) or not title.strip():
        raise InvalidInput(f"split_sections: title={title!r}; give the page's title (the first sentence of "
                           "every section's text).")
    head = title.strip().rstrip(".")
    parts: list[tuple[str | None, list[str]]] = [(None, [])]
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        m = _ATX.match(line) or _BOLD.match(line)
        if m:
            parts.append((m.group(1).strip(), []))
        elif line.strip() and _SETEXT.match(nxt) and not _SETEXT.match(line):
            parts.append((line.strip(), []))
            i += 1  # the underline
        else:
            parts[-1][1].append(line)
        i += 1
    out: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for heading, body_lines in parts:
        body = " ".join(" ".join(body_lines).split())
        if not body:
            continue
        slug = "preamble" if heading is None else (_SLUG.sub("-", heading.lower()).strip("-") or "section")
        seen[slug] = seen.get(slug, 0) + 1
        if seen[slug] > 1:
            slug = f"{slug}-{seen[slug]}"
        name = "" if heading is None else heading.rstrip(".:") + ". "
        key = f"{id}#{slug}"
        doc: dict[str, Any] = {**fields, "id": key if date is None else f"{key}@{date}",
                               "text": f"{head}. {name}{body}", "page": id, "section": key, "heading": heading or ""}
        if date is not None:
            doc["date"] = date
        out.append(doc)
    return out
