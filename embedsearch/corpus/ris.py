"""RIS in and out (rispy): each record from its ``TY`` line to its ``ER`` line, named by the line it starts
on; a record rispy cannot read, or one never closed, is a ``Problem`` at that line and the rest are read."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from .document import Problem
from .references import arxiv_doi, arxiv_id, index_id, normal_doi, note_of, person, plain_text, record, year_of


def rows(path: Path) -> Iterator[tuple[str, dict[str, Any] | Problem]]:
    import rispy

    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except UnicodeDecodeError as exc:
        yield f"{path}:1", Problem(f"{path}", f"not valid UTF-8 (byte at offset {exc.start})")
        return
    start, chunk = None, []
    for number, line in enumerate(lines, start=1):
        tag = line[:2]
        if tag == "TY" and line[2:6].startswith("  -"):
            if start is not None:
                yield f"{path}:{start}", Problem(f"{path}:{start}", "RIS record without its ER line")
            start, chunk = number, []
        if start is None:
            continue
        chunk.append(line)
        if tag == "ER" and line[2:6].startswith("  -"):
            where = f"{path}:{start}"
            try:
                parsed = rispy.loads("\n".join(chunk) + "\n")
            except Exception as exc:  # noqa: BLE001  (rispy raises plain errors of several kinds)
                yield where, Problem(where, f"unreadable RIS record ({exc})"[:200])
            else:
                yield where, entry_record(parsed[0], f"{path.stem}:{start}") if parsed else Problem(
                    where, "empty RIS record")
            start, chunk = None, []
    if start is not None:
        yield f"{path}:{start}", Problem(f"{path}:{start}", "RIS record without its ER line")


def entry_record(entry: dict[str, Any], default_id: str) -> dict[str, Any]:
    authors = [person(a) for a in entry.get("authors") or entry.get("first_authors") or []]
    notes = entry.get("notes") or []
    urls = entry.get("urls") or []
    return record(id=entry.get("id") or default_id, title=entry.get("title") or entry.get("primary_title"),
                  abstract=entry.get("abstract"), authors=authors,
                  year=year_of(entry.get("year") or entry.get("publication_year") or entry.get("date")),
                  doi=normal_doi(entry.get("doi")), eprint=next((arxiv_id(u) for u in urls if arxiv_id(u)), ""),
                  venue=entry.get("journal_name") or entry.get("secondary_title"),
                  index_id=next((index_id(n) for n in notes if index_id(n)), ""))


def write(items: Sequence[dict[str, Any]]) -> str:
    """Records as RIS, plain text (LaTeX decoded to Unicode, math kept as ``$...$``); a paper with an arXiv id
    a preprint (``UNPB``) with arXiv's DOI and address, as in CSL-JSON."""
    import rispy

    def flat(value: Any) -> str:
        return " ".join(str(plain_text(str(value))).split())

    entries = []
    for item in items:
        eprint = item.get("eprint")
        entry: dict[str, Any] = {"type_of_reference": "UNPB" if eprint and not item.get("venue") else "JOUR",
                                 "id": " ".join(str(item["id"]).split())}
        entry.update({k: flat(item[k]) for k in ("title", "abstract", "year") if item.get(k)})
        if item.get("doi") or eprint:
            entry["doi"] = item.get("doi") or arxiv_doi(eprint)
        if item.get("authors"):
            entry["authors"] = [flat(a) for a in item["authors"]]
        if item.get("venue"):
            entry["journal_name"] = flat(item["venue"])
        if eprint:
            entry["urls"] = [f"https://arxiv.org/abs/{eprint}"]
        entry["notes"] = [" ".join(note_of(item["id"]).split())]
        entries.append(entry)
    return rispy.dumps(entries)
