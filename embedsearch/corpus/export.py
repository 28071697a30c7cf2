"""Papers out to a reference manager: BibTeX, RIS or CSL-JSON, each written by the library that reads it back
(``corpus.bibtex``, ``corpus.ris``, ``corpus.csl``), from a paper's id, title, abstract and metadata
(``authors``, ``year`` or ``date``, ``doi``, ``eprint``, ``venue`` or ``journal``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from .references import arxiv_id, normal_doi, record, year_of

Kind = Literal["bibtex", "ris", "csl-json"]
KINDS: tuple[str, ...] = ("bibtex", "ris", "csl-json")
MEDIA = {"bibtex": "application/x-bibtex", "ris": "application/x-research-info-systems",
         "csl-json": "application/vnd.citationstyles.csl+json"}


def paper_record(doc_id: str, title: str | None, text: str, metadata: dict[str, Any]) -> dict[str, Any]:
    authors = metadata.get("authors") or metadata.get("author") or []
    if isinstance(authors, str):
        authors = [a.strip() for a in authors.replace(" and ", ";").split(";") if a.strip()]
    return record(id=doc_id, title=title, abstract=text, authors=[str(a) for a in authors],
                  year=year_of(metadata.get("year") or metadata.get("date")), doi=normal_doi(metadata.get("doi")),
                  eprint=arxiv_id(metadata.get("eprint") or metadata.get("arxiv") or metadata.get("arxiv_id") or ""),
                  venue=metadata.get("venue") or metadata.get("journal"))


def render(kind: Kind, records: Sequence[dict[str, Any]]) -> str:
    if kind == "bibtex":
        from .bibtex import write
    elif kind == "ris":
        from .ris import write
    else:
        from .csl import write
    return write(list(records))
