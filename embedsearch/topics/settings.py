"""Topic fitting parameters, scaled to the corpus size where not given."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import InputError, check

MIN_DOCUMENTS = 8

SHORT_EPOCHS = 15  # each consensus run's UMAP epochs from 1,000 documents: 60 runs cost under 2x one full fit

SMALL_EPOCHS = 25  # below 1,000 the runs cost under a second, and 15 epochs left 57 abstracts under-converged


@dataclass(frozen=True)
class TopicSettings:
    """Clustering parameters; ``None`` means scaled to the corpus size (see ``resolve``). Corpora larger
    than ``sample`` are fitted on a seeded sample of that many documents and the rest are assigned to
    the fitted topics (``topics.sample``). Topics are the consensus of ``runs`` UMAP layouts of
    ``member_epochs`` epochs each, two topics kept apart unless a share ``agreement`` of the runs join
    them (``topics.consensus``); ``runs=1`` is a single full-length fit, which moves with the seed and CPU."""

    min_size: int | None = None
    min_samples: int | None = None
    neighbours: int | None = None
    components: int = 5
    seed: int = 42
    assign_outliers: bool = False
    sample: int = 50_000
    runs: int = 60
    member_epochs: int | None = None
    agreement: float = 0.8

    def __post_init__(self) -> None:
        check(self, runs=(1, 1000), member_epochs=(5, 2000), agreement=(0.5, 1), sample=(MIN_DOCUMENTS * 4, None),
              min_size=(2, None), min_samples=(1, None), neighbours=(2, None), components=(2, None))

    def max_levels(self, n: int) -> int:
        """An upper bound on the levels a fit of ``n`` documents can have (a topic holds at least ``min_size``
        papers and each level above halves the topics), so a ``--level`` past it fails before any fitting."""
        resolved = self.resolve(n)
        topics, levels = max(2, min(n, resolved.sample) // resolved.min_size), 1
        while topics > 3:
            topics, levels = max(2, topics // 2), levels + 1
        return levels

    def resolve(self, n: int) -> TopicSettings:
        """Concrete values for ``n`` documents (or the sample fitted on): small corpora get small topics,
        large ones larger."""
        if n < MIN_DOCUMENTS:
            raise InputError(f"topics need at least {MIN_DOCUMENTS} documents, this index has {n}; add more abstracts")
        n = min(n, self.sample)
        min_size = self.min_size or max(3, round(math.sqrt(n) / 2))
        if 2 * min_size > n:
            raise InputError(f"--min-size {min_size} leaves room for fewer than two topics among {n} documents; "
                             f"use --min-size {max(2, n // 4)} or less")
        return TopicSettings(min_size=min_size, min_samples=self.min_samples or max(1, min_size // 4),
                             neighbours=self.neighbours or max(5, min(15, n // 4, round(math.sqrt(n)))),
                             components=min(self.components, n - 2), seed=self.seed,
                             assign_outliers=self.assign_outliers, sample=self.sample, runs=self.runs,
                             member_epochs=self.member_epochs or (SHORT_EPOCHS if n >= 1000 else SMALL_EPOCHS),
                             agreement=self.agreement)

    @property
    def graph_neighbours(self) -> int:
        """Neighbours per document in the graph the fit reads: UMAP's, and enough for HDBSCAN's core
        distance over the consensus (``min_samples`` + 1). Only for resolved settings."""
        return max(self.neighbours, self.min_samples + 1)
