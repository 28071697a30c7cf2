"""Who could review what: ``Matcher`` holds the reviewers and their publications, kept as an index of their
own (embedded once; a second run reuses it and embeds nothing), and answers with an ``AffinityTable`` for a
set of submissions, or the best reviewers for one abstract."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from ..corpus import Document
from ..embedding.precision import DEFAULT_PRECISION
from ..embedding.settings import DEFAULT_MODEL, EmbedSettings
from ..errors import IndexStoreError, InputError
from ..index import Index
from ..store.files import default_home
from . import affinity as aff
from .conflicts import from_authors
from .profiles import Reviewers
from .scores import ScoreTable
from .settings import AffinitySettings, ConflictSettings
from .submissions import Submissions


@dataclass(frozen=True, eq=False)
class AffinityTable:
    """Every submission's affinity to every reviewer (``matrix``), the conflicted pairs and their reasons."""

    submissions: Submissions
    reviewers: Reviewers
    matrix: np.ndarray
    conflicts: dict[tuple[int, int], str]
    publications: np.ndarray = field(repr=False)
    settings: AffinitySettings = AffinitySettings()

    def pairs(self, keep: int | None = None, evidence: int | None = None) -> Iterator[Affinity]:
        """Each submission's reviewers best first (all, or the ``keep`` best), with their evidence."""
        for row, positions in aff.ranked(self.matrix, keep):
            for position in positions.tolist():
                yield self.pair(row, position, evidence)

    def pair(self, row: int, position: int, evidence: int | None = None) -> aff.Affinity:
        count = self.settings.evidence if evidence is None else evidence
        mine = np.flatnonzero(self.reviewers.owner == position)
        shown = aff.evidence(self.submissions.vectors[row], self.publications, self.reviewers.publications, mine,
                             count) if count else ()
        return aff.Affinity(self.submissions.documents[row].id, self.reviewers.ids[position],
                            float(self.matrix[row, position]), self.conflicts.get((row, position)), shown)

    def scores(self, keep: int | None = None) -> ScoreTable:
        """The candidate pairs ``assign`` reads, as the CSV would hold them."""
        rows, cols = zip(*((row, int(p)) for row, ps in aff.ranked(self.matrix, keep) for p in ps)) \
            if len(self.matrix) else ((), ())
        rows, cols = np.asarray(rows, np.int64), np.asarray(cols, np.int64)
        conflict = np.fromiter(((r, c) in self.conflicts for r, c in zip(rows.tolist(), cols.tolist())), bool,
                               count=len(rows))
        return ScoreTable(tuple(self.submissions.ids), self.reviewers.ids, rows, cols,
                          self.matrix[rows, cols].astype(np.float64), conflict)


Affinity = aff.Affinity


@dataclass(frozen=True, eq=False)
class Matcher:
    """Reviewers, the index of their publications, and how affinity and conflicts are computed."""

    reviewers: Reviewers
    publications: Index
    settings: AffinitySettings = AffinitySettings()
    conflict_rule: ConflictSettings = ConflictSettings()

    @classmethod
    def open(cls, path: str | Path, model: str = DEFAULT_MODEL, folder: str | Path | None = None,
             settings: AffinitySettings = AffinitySettings(), conflict_rule: ConflictSettings = ConflictSettings(),
             progress: bool = False, precision: str = DEFAULT_PRECISION) -> Matcher:
        """Read the reviewers at ``path`` and open the index of their publications in ``folder`` (by default
        under the embedsearch home, named after ``path``), building it when missing, out of date or at
        another ``precision`` than the submissions'."""
        reviewers = Reviewers.read(path)
        folder = Path(folder) if folder else default_home() / "reviewers" / _folder_name(Path(path), model)
        wanted = [Document(f"{d.metadata['reviewer']}/{d.id}", d.text, d.title, d.metadata)
                  for d in reviewers.publications]
        index = _reuse(folder, wanted, model, precision)
        if index is None:
            index = Index.build(wanted, folder, embed=EmbedSettings(model=model, precision=precision),
                                progress=progress, name=f"publications of {path}")
        return cls(reviewers, index, settings, conflict_rule)

    @cached_property
    def vectors(self) -> np.ndarray:
        """The publications' vectors, read once (a served request for one paper must not copy them again)."""
        return np.asarray(self.publications.embeddings, dtype=np.float32)

    def table(self, submissions: Submissions, conflicts: dict[tuple[int, int], str] | None = None) -> AffinityTable:
        """The affinity of every submission to every reviewer, with author conflicts (by ``conflict_rule``)
        and the given ``conflicts`` (position pairs) marked."""
        if submissions.fingerprint != self.publications.manifest.model.fingerprint:
            built = self.publications.manifest.model.settings.precision
            raise InputError(f"the submissions were embedded with {submissions.model!r} at {submissions.precision}, "
                             f"the publications with {self.publications.model_name!r} at {built}; use one model "
                             "and precision for both (--model)")
        vectors = self.vectors
        matrix = aff.scores(submissions.vectors, vectors, self.reviewers.owner, len(self.reviewers), self.settings)
        found = {**from_authors(submissions.documents, self.reviewers, self.conflict_rule), **(conflicts or {})}
        return AffinityTable(submissions, self.reviewers, matrix, found, vectors, self.settings)

    def for_text(self, text: str, title: str | None = None, k: int = 10) -> list[Affinity]:
        """The ``k`` best reviewers for an abstract not in any index, with their evidence."""
        doc = Document("abstract", text, title)
        vectors = self.publications.encode([doc.embed_text])
        fingerprint = self.publications.manifest.model.fingerprint
        precision = self.publications.manifest.model.settings.precision
        table = self.table(Submissions((doc,), vectors, self.publications.model_name, fingerprint, precision))
        return list(table.pairs(keep=k))


def _folder_name(path: Path, model: str) -> str:
    key = f"{path.resolve()}\n{model}".encode()
    return f"{path.resolve().name}-{hashlib.sha256(key).hexdigest()[:12]}"


def _reuse(folder: Path, wanted: list[Document], model: str, precision: str) -> Index | None:
    """The publications index at ``folder`` if it holds exactly ``wanted`` (ids and texts) with ``model``
    at ``precision``."""
    try:
        index = Index.load(folder)
    except (IndexStoreError, InputError):
        return None
    if index.model_name != model or index.manifest.model.settings.precision != precision \
            or index.documents.ids != [d.id for d in wanted]:
        return None
    same = all(a.embed_text == b.embed_text for a, b in zip(index.documents, wanted))
    return index if same else None
