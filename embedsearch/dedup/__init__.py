"""Near-duplicate detection: candidates from the vector index, lexical evidence, verdicts, groups."""

from ..ivf import ShardMap, local_map
from . import candidates
from .report import (
    Candidate,
    DedupSettings,
    DuplicateGroup,
    DuplicatePair,
    DuplicateReport,
)


def find_duplicates(index, settings: DedupSettings = DedupSettings(), map_jobs: ShardMap = local_map,
                    rows=None) -> DuplicateReport:
    """Groups of near-duplicate abstracts inside one index (only those involving ``rows``, when given);
    candidate-search jobs run through ``map_jobs``."""
    ids = index.documents.ids
    judged = ids if rows is None else [ids[r] for r in rows]
    return DuplicateReport.from_candidates(candidates.within(index, settings, map_jobs, rows), settings, judged)


def find_duplicates_against(new, reference, settings: DedupSettings = DedupSettings()) -> DuplicateReport:
    """Matches of each abstract in ``new`` within ``reference``; a group keeps the reference record."""
    return DuplicateReport.from_candidates(candidates.across(new, reference, settings), settings, new.documents.ids)


__all__ = ["Candidate", "DedupSettings", "DuplicateGroup", "DuplicatePair", "DuplicateReport", "find_duplicates",
           "find_duplicates_against"]
