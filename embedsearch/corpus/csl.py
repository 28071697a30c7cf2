"""CSL-JSON in and out (the citation format Zotero, Mendeley and pandoc share), and Zotero's CSV export in."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from .document import Problem
from .references import arxiv_doi, arxiv_id, index_id, normal_doi, note_of, person, plain_text, record, year_of


def rows(path: Path) -> Iterator[tuple[str, dict[str, Any] | Problem]]:
    """Each item of a CSL-JSON array, named ``file:item N``; an item that is not an object is a problem."""
    try:
        items = json.loads(path.read_text(encoding="utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        yield f"{path}:1", Problem(f"{path}:{getattr(exc, 'lineno', 1)}", f"not CSL-JSON ({exc})"[:200])
        return
    if not isinstance(items, list):
        yield f"{path}:1", Problem(f"{path}:1", "CSL-JSON is a list of items; this file holds one object")
        return
    for number, item in enumerate(items, start=1):
        where = f"{path}:item {number}"
        if not isinstance(item, dict):
            yield where, Problem(where, "expected a CSL-JSON item (an object)")
            continue
        yield where, item_record(item, f"{path.stem}:{number}")


def item_record(item: dict[str, Any], default_id: str) -> dict[str, Any]:
    authors = [" ".join(str(a.get(k, "")) for k in ("given", "family") if a.get(k)) or str(a.get("literal", ""))
               for a in item.get("author") or [] if isinstance(a, dict)]
    issued = item.get("issued") if isinstance(item.get("issued"), dict) else {}
    parts = issued.get("date-parts")
    year = parts[0][0] if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0] else \
        issued.get("raw")
    return record(id=str(item.get("id") or default_id), title=item.get("title"), abstract=item.get("abstract"),
                  authors=[a for a in authors if a], year=year_of(year),
                  doi=normal_doi(item.get("DOI")), eprint=arxiv_id(item.get("URL") or item.get("number") or ""),
                  venue=item.get("container-title"), index_id=index_id(item.get("note")))


def zotero_rows(path: Path) -> Iterator[tuple[str, dict[str, Any] | Problem]]:
    """Zotero's CSV export (``Key``, ``Title``, ``Author`` as ``Last, First; ...``, ``Abstract Note``, ...)."""
    with path.open(newline="", encoding="utf-8-sig") as fh:
        for number, row in enumerate(csv.DictReader(fh), start=2):
            authors = [person(a) for a in (row.get("Author") or "").split(";") if a.strip()]
            yield f"{path}:{number}", record(
                id=row.get("Key") or f"{path.stem}:{number}", title=row.get("Title"), abstract=row.get("Abstract Note"),
                authors=authors, year=year_of(row.get("Publication Year") or row.get("Date")),
                doi=normal_doi(row.get("DOI")), eprint=arxiv_id(row.get("Url") or row.get("Extra") or ""),
                venue=row.get("Publication Title"), index_id=index_id(row.get("Notes") or row.get("Extra")))


def write(items: Sequence[dict[str, Any]]) -> str:
    """Records as CSL-JSON, plain text (LaTeX decoded to Unicode, math kept as ``$...$``); a paper with an arXiv
    id an ``article`` (CSL's type for a preprint) with arXiv's DOI, address and id as ``number``."""
    out = []
    for item in items:
        eprint = item.get("eprint")
        entry: dict[str, Any] = {"id": item["id"], "type": "article" if eprint and not item.get("venue")
                                 else "article-journal"}
        entry.update({k: plain_text(item[k]) for k in ("title", "abstract") if item.get(k)})
        if item.get("authors"):
            entry["author"] = [_name(plain_text(a) or a) for a in item["authors"]]
        if item.get("year"):
            entry["issued"] = {"date-parts": [[int(item["year"])]]}
        if item.get("doi") or eprint:
            entry["DOI"] = item.get("doi") or arxiv_doi(eprint)
        if eprint:
            entry.update(URL=f"https://arxiv.org/abs/{eprint}", number=f"arXiv:{eprint}", publisher="arXiv")
        if item.get("venue"):
            entry["container-title"] = plain_text(item["venue"])
        entry["note"] = note_of(item["id"])
        out.append(entry)
    return json.dumps(out, ensure_ascii=False, indent=1)


def _name(full: str) -> dict[str, str]:
    given, _, family = full.rpartition(" ")
    return {"family": family, "given": given} if given else {"literal": family}
