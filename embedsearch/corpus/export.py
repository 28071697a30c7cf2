"""Papers out to a reference manager: BibTeX, RIS or CSL-JSON, each written by the library that reads it back
(``corpus.bibtex``, ``corpus.ris``, ``corpus.csl``), from a paper's id, title, abstract and metadata
(``authors``, ``year`` or ``date``, ``doi``, ``eprint``, ``venue`` or ``journal``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from .references import arxiv_id, arxiv_year, normal_doi, record, year_of

Kind = Literal["bibtex", "ris", "csl-json"]
KINDS: tuple[str, ...] = ("bibtex", "ris", "csl-json")
MEDIA = {"bibtex": "application/x-bibtex", "ris": "application/x-research-info-systems",
         "csl-json": "application/vnd.citationstyles.csl+json"}


def paper_record(doc_id: str, title: str | None, text: str, metadata: dict[str, Any]) -> dict[str, Any]:
    """A paper as the shared record: its arXiv id from an ``eprint`` (or ``arxiv``) field, else its own id when
    that is one; its year from ``year`` or ``date``, else from a new-style arXiv id; its arXiv category from a
    ``categories`` (or ``category``, ``primary_class``) field, the first listed."""
    authors = metadata.get("authors") or metadata.get("author") or []
    if isinstance(authors, str):
        authors = [a.strip() for a in authors.replace(" and ", ";").split(";") if a.strip()]
    eprint = arxiv_id(metadata.get("eprint") or metadata.get("arxiv") or metadata.get("arxiv_id") or "") or \
        (arxiv_id(doc_id) if _ARXIV_ID.fullmatch(doc_id) else "")
    category = next((str(metadata[f]).split()[0] for f in ("primary_class", "primaryclass", "categories", "category")
                     if metadata.get(f) and str(metadata[f]).split()), None)
    return record(id=doc_id, title=title, abstract=text, authors=[str(a) for a in authors],
                  year=year_of(metadata.get("year") or metadata.get("date")) or arxiv_year(eprint),
                  doi=normal_doi(metadata.get("doi")), eprint=eprint, category=category,
                  venue=metadata.get("venue") or metadata.get("journal"))


_ARXIV_ID = re.compile(r"\d{4}\.\d{4,5}(?:v\d+)?|[a-z\-]+(?:\.[A-Z]{2})?/\d{7}(?:v\d+)?")


def render(kind: Kind, records: Sequence[dict[str, Any]]) -> str:
    if kind == "bibtex":
        from .bibtex import write
    elif kind == "ris":
        from .ris import write
    else:
        from .csl import write
    return write(list(records))
