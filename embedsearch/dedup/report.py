"""Verdicts, groups and the report: dataclasses that carry their evidence, re-cut without recomputing."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TextIO

from ..corpus.fold import plain
from ..errors import InputError
from ..disk.csvout import Writer
from .groups import connected
from .settings import DedupSettings

SAME_TITLE = 0.8


@dataclass(frozen=True)
class Candidate:
    """A scored pair from the vector index: ``a`` and ``b`` are ids, ``a_order``/``b_order`` their corpus order."""

    a: str
    b: str
    cosine: float
    overlap: float
    exact: bool
    passages: tuple[str, ...]
    a_order: tuple[int, int]
    b_order: tuple[int, int]


@dataclass(frozen=True)
class DuplicatePair:
    a: str
    b: str
    cosine: float
    overlap: float
    verdict: str
    passages: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "cosine": round(self.cosine, 4), "overlap": round(self.overlap, 4),
                "verdict": self.verdict, "passages": list(self.passages)}


@dataclass(frozen=True)
class DuplicateGroup:
    """Records that are one submission; ``kept`` is the first of them in corpus order. Checked against an
    existing corpus, ``existing`` lists the group's records from that corpus (``kept`` is one of them)
    and ``absorbed`` the new ones, so an id both corpora use stays unambiguous."""

    kept: str
    members: tuple[str, ...]
    pairs: tuple[DuplicatePair, ...]
    absorbed: tuple[str, ...] = ()
    existing: tuple[str, ...] = ()
    also_kept: tuple[str, ...] = ()  # members that duplicate no kept one (a series: A ~ B ~ C keeps A and C)

    def to_json(self) -> dict[str, Any]:
        out = {"kept": self.kept, "members": list(self.members), "absorbed": list(self.absorbed)}
        if self.also_kept:
            out["also_kept"] = list(self.also_kept)
        if self.existing:
            out["existing"] = list(self.existing)
        return {**out, "pairs": [p.to_json() for p in self.pairs]}


@dataclass(frozen=True)
class DuplicateReport:
    """Duplicate groups with their evidence; ``recut`` applies other thresholds to the same candidates.
    ``ids`` are the records judged (the index's, or the new ones checked against an existing corpus), in
    order, so ``selected`` (the deduplicated set) and ``duplicate_ratio`` can be given."""

    settings: DedupSettings
    candidates: tuple[Candidate, ...] = field(repr=False)
    groups: tuple[DuplicateGroup, ...] = ()
    ids: tuple[str, ...] = field(default=(), repr=False)

    @classmethod
    def from_candidates(cls, candidates: Sequence[Candidate], settings: DedupSettings,
                        ids: Sequence[str] = ()) -> DuplicateReport:
        edges = []
        for c in candidates:
            verdict = settings.verdict(c.cosine, c.overlap, c.exact)
            if verdict is not None:
                edges.append((c.a_order, c.b_order, DuplicatePair(c.a, c.b, c.cosine, c.overlap, verdict, c.passages)))
        return cls(settings, tuple(candidates), _groups(edges), tuple(ids))

    def recut(self, **changes: Any) -> DuplicateReport:
        """The same candidates judged with other settings (``threshold``, ``min_overlap``...), nothing recomputed."""
        settings = replace(self.settings, **changes)
        if settings.floor < self.settings.floor or settings.neighbours != self.settings.neighbours:
            raise InputError("floor and neighbours decide which candidates exist; run dedup again to change them")
        return DuplicateReport.from_candidates(self.candidates, settings, self.ids)

    @property
    def selected(self) -> tuple[str, ...]:
        """The ids to keep, in order: every record judged that no group absorbed (singletons included)."""
        absorbed = {i for g in self.groups for i in g.absorbed}
        return tuple(i for i in self.ids if i not in absorbed)

    @property
    def duplicate_ratio(self) -> float:
        """The share of the records judged that duplicate another (0 when none were judged)."""
        return 1 - len(self.selected) / len(self.ids) if self.ids else 0.0

    @property
    def pairs(self) -> list[DuplicatePair]:
        return [p for g in self.groups for p in g.pairs]

    def distinct_titles(self, title_of: Callable[[str], str | None], same: float = SAME_TITLE) -> tuple[str, ...]:
        """Absorbed records whose title shares less than ``same`` of its words (Jaccard, folded) with the title
        of every kept record that absorbed it (a kept duplicate before it in corpus order): the distinct papers
        of an author's series, which reuse an abstract under new titles. A chair still sees the pair; a
        deduplicated corpus (``--write-kept``) keeps them."""
        out = []
        for group in self.groups:
            kept, order = {group.kept, *group.also_kept}, {m: n for n, m in enumerate(group.members)}
            for doc_id in group.absorbed:
                mine = _words(title_of(doc_id))
                peers = {k for k in {p.a if p.b == doc_id else p.b for p in group.pairs if doc_id in (p.a, p.b)}
                         if k in kept and order[k] < order[doc_id]}
                if mine and peers and all(_similar(mine, _words(title_of(k))) < same for k in peers):
                    out.append(doc_id)
        return tuple(out)

    def kept_map(self) -> dict[str, tuple[str, ...]]:
        """Each kept id and the ids it absorbs."""
        return {g.kept: g.absorbed for g in self.groups}

    def to_json(self) -> dict[str, Any]:
        return {"groups": [g.to_json() for g in self.groups], "judged": len(self.ids), "kept": len(self.selected),
                "duplicate_ratio": round(self.duplicate_ratio, 6)}

    def write_csv(self, fh: TextIO, titles: Callable[[str, str], str] | None = None) -> None:
        """Every flagged pair, one CSV row each (``dedup --csv``): its group's kept record, and the group's other
        kept ones (``also kept``: a series A ~ B ~ C keeps A and C); with ``titles`` (``titles(side, id)``, side
        ``a`` or ``b``: with an ``--against`` corpus, ``a`` is new and ``b`` existing) each id's title beside it."""
        writer = Writer(fh)
        named = ["a title", "b title"] if titles else []
        writer.row(["group", "kept", "also kept", "a", "b", "verdict", "cosine", "overlap", "passages", *named])
        for number, group in enumerate(self.groups, start=1):
            for p in group.pairs:
                writer.row([number, group.kept, " | ".join(group.also_kept), p.a, p.b, p.verdict, round(p.cosine, 4), round(p.overlap, 4),
                            " | ".join(p.passages), *([titles("a", p.a), titles("b", p.b)] if titles else [])])


def _words(title: str | None) -> set[str]:
    return set(plain(title).split()) if title else set()


def _similar(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 1.0  # a side without a title: nothing to tell them apart


def _groups(edges: list[tuple[tuple[int, int], tuple[int, int], DuplicatePair]]) -> tuple[DuplicateGroup, ...]:
    """Group records by union-find over their (side, row) keys: side 0 is the index checked (or the
    existing corpus), side 1 the new abstracts checked against it; ids may repeat across the sides. Within an
    index, a record is absorbed only by a kept record it duplicates itself: in a chain of an author's series
    (A ~ B ~ C, A and C distinct) A and C are both kept."""
    id_of = {}
    for key_a, key_b, pair in edges:
        id_of[key_a], id_of[key_b] = pair.a, pair.b
    components = connected((a, b) for a, b, _ in edges)
    member_of = {key: i for i, comp in enumerate(components) for key in comp}
    grouped: list[list[DuplicatePair]] = [[] for _ in components]
    for key_a, _, pair in edges:
        grouped[member_of[key_a]].append(pair)
    near: dict[tuple[int, int], set[tuple[int, int]]] = {}
    for key_a, key_b, _ in edges:
        near.setdefault(key_a, set()).add(key_b)
        near.setdefault(key_b, set()).add(key_a)
    out = []
    for comp, ps in zip(components, grouped):
        new = [id_of[k] for k in comp if k[0] == 1]
        kept, absorbed = [comp[0]], []
        for key in comp[1:]:  # in corpus order: absorbed only by a direct duplicate that is kept
            (absorbed if near[key].intersection(kept) else kept).append(key)
        out.append(DuplicateGroup(id_of[comp[0]], tuple(id_of[k] for k in comp),
                                  tuple(sorted(ps, key=lambda p: (-p.cosine, p.a, p.b))),
                                  tuple(new) if new else tuple(id_of[k] for k in absorbed),
                                  tuple(id_of[k] for k in comp if k[0] == 0) if new else (),
                                  () if new else tuple(id_of[k] for k in kept[1:])))
    return tuple(out)
