"""A batch of submissions checked against an index, one row per submission in the batch's order (its closest
flagged match, another submission or an indexed paper, with its title; or "no duplicate"), as the page's batch
check and ``embedsearch dedup --index SUBMISSIONS.jsonl --against INDEX`` give it, in JSON or CSV."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TextIO

from ..corpus import Document
from ..corpus.readable import readable
from ..disk.csvout import Writer
from .report import DuplicateReport

COLUMNS = ("submission", "title", "verdict", "matched paper", "matched title", "cosine", "wording shared (%)")


def submissions(report: DuplicateReport, documents: Sequence[Document],
                indexed: Callable[[str], Document]) -> list[dict[str, Any]]:
    """One row per submission, in the batch's order: its flagged pair of highest cosine (with another
    submission or an indexed paper, ``indexed(id)``) and the match's title, or "no duplicate"."""
    new = {d.id: d for d in documents}
    best: dict[str, Any] = {}
    for pair in report.pairs:
        for own, other in ((pair.a, pair.b), (pair.b, pair.a)):
            if own in new and (own not in best or pair.cosine > best[own][0].cosine):
                best[own] = (pair, other)
    rows = []
    for doc in documents:
        row: dict[str, Any] = {"id": doc.id, "title": readable(doc.title) or doc.readable().first_sentence(),
                               "verdict": "no duplicate"}
        if doc.id in best:
            pair, other = best[doc.id]
            match = (new[other] if other in new else indexed(other)).readable()
            row.update(verdict=pair.verdict, match=other, match_title=match.title or match.first_sentence(),
                       cosine=round(pair.cosine, 4), overlap=round(pair.overlap, 4))
        rows.append(row)
    return rows


def write_csv(rows: list[dict[str, Any]], fh: TextIO) -> None:
    """The rows as CSV a spreadsheet opens: titles as text (guarded), numbers as numbers."""
    writer = Writer(fh)
    writer.row(COLUMNS)
    for r in rows:
        writer.row([r["id"], r["title"] or "", r["verdict"], r.get("match") or "", r.get("match_title") or "",
                    None if r.get("cosine") is None else round(r["cosine"], 3),
                    None if r.get("overlap") is None else round(100 * r["overlap"])])


def sentence(row: dict[str, Any], batch: set[str]) -> str:
    """A row as a chair reads it: "submission X matches paper Y (its title)", or has no duplicate."""
    if not row.get("match"):
        return f"submission {row['id']}: no duplicate ({row['title']})"
    kind = "submission" if row["match"] in batch else "paper"
    return (f"submission {row['id']} matches {kind} {row['match']} ({row['match_title']}): {row['verdict']}, "
            f"cosine {row['cosine']:.3f}, {100 * row['overlap']:.0f}% of its wording shared")
