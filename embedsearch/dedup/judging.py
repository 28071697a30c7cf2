"""Near-duplicate judgements over an index, between two, or of new abstracts before they are added: the
candidates (``candidates``) judged with their evidence into a ``DuplicateReport``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, get_args

import numpy as np

from ..corpus import Document
from ..jobs.runner import JobRunner, local_map
from ..errors import DuplicateError, InputError, ModelMismatchError, UnknownIdError, check_choice
from ..store.snapshot import Rows, Snapshot
from . import candidates
from .pending import Pending
from .report import DuplicateReport
from .settings import DedupSettings

if TYPE_CHECKING:
    from ..store.folders import ClusterFolder, IndexFolder


def find_duplicates(snapshot: Snapshot, settings: DedupSettings = DedupSettings(), map_jobs: JobRunner = local_map,
                    rows: np.ndarray | None = None) -> DuplicateReport:
    """Groups of near-duplicate abstracts inside one index (only those involving ``rows``, when given);
    candidate-search jobs run through ``map_jobs``."""
    ids = snapshot.documents.ids
    judged = ids if rows is None else [ids[r] for r in rows]
    return DuplicateReport.from_candidates(candidates.within(snapshot, settings, map_jobs, rows), settings, judged)


def find_duplicates_against(new: Rows, reference: Snapshot, settings: DedupSettings = DedupSettings()) -> DuplicateReport:
    """Matches of each abstract in ``new`` within ``reference``; a group keeps the reference record."""
    return DuplicateReport.from_candidates(candidates.across(new, reference, settings), settings, new.documents.ids)


OnDuplicate = Literal["refuse", "skip", "add"]
ON_DUPLICATE: tuple[OnDuplicate, ...] = get_args(OnDuplicate)


def screen(documents: Sequence[Document], embeddings: np.ndarray, reference: Snapshot, settings: DedupSettings,
           on_duplicate: str) -> tuple[DuplicateReport, np.ndarray]:
    """Judge new abstracts (not in any index) against an index, as ``find_duplicates_against`` does: the report
    and a mask of those to add. ``refuse``: a flagged one is a ``DuplicateError`` and nothing is added; ``skip``:
    only the unflagged are added; ``add``: all are, the report still says which duplicate what."""
    check_choice("on_duplicate", on_duplicate, ON_DUPLICATE)
    new = Pending(documents, embeddings)
    ids = new.documents.ids
    report = (find_duplicates_against(new, reference, settings) if len(reference)
              else DuplicateReport(settings, (), (), tuple(ids)))
    return report, decide(report, ids, on_duplicate)


def append_checked(folder: IndexFolder | ClusterFolder, documents: Sequence[Document], embeddings: np.ndarray,
                   settings: DedupSettings, on_duplicate: OnDuplicate, wait: bool | float) -> DuplicateReport:
    """Append to ``folder`` (an index's or a cluster's) what ``screen`` lets in, judged under the writer lock
    against the very version the documents join, so two checked adds never both let one duplicate in."""
    reports: list[DuplicateReport] = []

    def judged(current: Snapshot, new: Sequence[Document], vectors: np.ndarray) -> np.ndarray:
        report, keep = screen(new, vectors, current, settings, on_duplicate)
        reports.append(report)
        return keep

    folder.append(documents, embeddings, wait, judged)
    return reports[0]


def decide(report: DuplicateReport, ids: Sequence[str], on_duplicate: str) -> np.ndarray:
    """Which of the new abstracts ``ids`` that ``report`` judged to add, by ``on_duplicate`` (see ``screen``)."""
    flagged = {p.a for p in report.pairs}
    if flagged and on_duplicate == "refuse":
        first = report.pairs[0]
        raise DuplicateError(f"{len(flagged)} of the {len(ids)} new abstracts duplicate indexed ones ({first.a!r} is "
                             f"{first.verdict} to {first.b!r}, cosine {first.cosine:.3f}); nothing was added: skip "
                             "the duplicates or add them anyway", report)  # each front end names its own option
    return np.array([on_duplicate == "add" or i not in flagged for i in ids], dtype=bool)


def judge(snapshot: Snapshot, settings: DedupSettings, map_jobs: JobRunner = local_map,
          against: Snapshot | None = None,
          of: Sequence[str] | None = None) -> DuplicateReport:
    """``Index.duplicates``: groups inside ``snapshot`` (only those involving the ids ``of``), or each of its
    abstracts' matches in the snapshot ``against``, whose model must be the same."""
    if len(snapshot) == 0:
        raise InputError(f"{snapshot.path} is empty; add documents before looking for duplicates")
    if against is None:
        row_of = snapshot.documents.row_of
        missing = [i for i in of or () if i not in row_of]
        if missing:
            raise UnknownIdError(f"no document with id {missing[0]!r} in {snapshot.path}")
        rows = None if of is None else np.asarray([row_of[i] for i in of], dtype=np.int64)
        return find_duplicates(snapshot, settings, map_jobs, rows)
    mine, theirs = snapshot.manifest.model, against.manifest.model
    if mine.fingerprint != theirs.fingerprint:
        raise ModelMismatchError(f"{against.path} was built with model {theirs.name!r} at "
                                 f"{theirs.settings.precision} and {snapshot.path} with {mine.name!r} at "
                                 f"{mine.settings.precision}; rebuild one of them with the other's --model and --precision")
    return find_duplicates_against(snapshot, against, settings)
