"""BibTeX in and out (bibtexparser 2): a ``.bib`` file's entries as records, each named by the line it starts
on, a broken entry a ``Problem`` at its line while the rest are read; and records written as entries that
bibtexparser reads back the same."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from .document import Problem
from .references import (arxiv_doi, arxiv_id, citation_keys, from_latex, index_id, normal_doi, note_of, person,
                         record, to_latex, year_of)


def rows(path: Path) -> Iterator[tuple[str, dict[str, Any] | Problem]]:
    """Each entry as a record (``id`` its citation key); a block bibtexparser cannot parse is a problem."""
    import bibtexparser

    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        yield f"{path}:1", Problem(f"{path}", f"not valid UTF-8 (byte at offset {exc.start})")
        return
    logging.getLogger("bibtexparser").setLevel(logging.ERROR)  # its own word on a broken block; ours names the line
    library = bibtexparser.parse_string(text)
    found = [(b.start_line, b) for b in library.entries] + [(b.start_line, b) for b in library.failed_blocks]
    for line, block in sorted(found, key=lambda pair: pair[0]):
        where = f"{path}:{line + 1}"
        if block in library.failed_blocks:
            yield where, Problem(where, "broken BibTeX entry (check its braces, quotes and commas)")
            continue
        yield where, entry_record(block.key, {k.lower(): v for k, v in block.fields_dict.items()})


def entry_record(key: str, fields: dict[str, Any]) -> dict[str, Any]:
    """An entry as a record; its id is the citation key, or the index id an exported entry carries (so a file
    exported from one index builds another with the same ids)."""
    value = {k: getattr(f, "value", f) for k, f in fields.items()}
    key = index_id(from_latex(value.get("note"))) or key
    authors = [person(from_latex(a) or "") for a in str(value.get("author", "")).split(" and ") if a.strip()]
    eprint = value.get("eprint") if str(value.get("archiveprefix", "arxiv")).lower() == "arxiv" else None
    return record(id=key, title=from_latex(value.get("title")), abstract=from_latex(value.get("abstract")),
                  authors=authors, year=year_of(value.get("year")), doi=normal_doi(value.get("doi")),
                  eprint=arxiv_id(eprint or value.get("journal") or value.get("url") or ""),
                  venue=from_latex(value.get("journal") or value.get("booktitle")),
                  index_id=index_id(from_latex(value.get("note"))))


def write(items: Sequence[dict[str, Any]]) -> str:
    """Records as BibTeX, keys ``author year firstword``: a paper with an arXiv id as arXiv's own export makes
    it (``@misc`` with ``eprint``, ``archiveprefix``, ``primaryclass``, ``doi`` and ``url``), others as
    ``@article``. Text that is LaTeX already passes through as written; plain text is escaped (``to_latex``)."""
    import bibtexparser
    from bibtexparser.model import Entry, Field

    library = bibtexparser.Library()
    for key, item in zip(citation_keys(items), items):
        fields = [Field("title", "{" + to_latex(item["title"]) + "}")] if item.get("title") else []
        if item.get("authors"):
            fields.append(Field("author", " and ".join(to_latex(a) for a in item["authors"])))
        if item.get("year"):
            fields.append(Field("year", str(item["year"])))
        eprint = item.get("eprint")
        if eprint:
            fields += [Field("eprint", eprint), Field("archiveprefix", "arXiv")]
            fields += [Field("primaryclass", item["category"])] if item.get("category") else []
        if item.get("doi") or eprint:
            fields.append(Field("doi", item.get("doi") or arxiv_doi(eprint)))
        if eprint:
            fields.append(Field("url", f"https://arxiv.org/abs/{eprint}"))
        if item.get("venue"):
            fields.append(Field("journal", to_latex(str(item["venue"]))))
        if item.get("abstract"):
            fields.append(Field("abstract", to_latex(item["abstract"])))
        fields.append(Field("note", to_latex(note_of(item["id"]))))
        library.add(Entry("misc" if eprint and not item.get("venue") else "article", key, fields))
    return bibtexparser.write_string(library)
