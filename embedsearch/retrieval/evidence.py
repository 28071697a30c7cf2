"""Why each hit matched, for the page of hits a response returns: the query words that matched it lexically
with their share of its BM25 score (with the whole corpus's statistics, as the ranking scored it), and the
abstract's sentence closest in meaning to the query, or to the seeds of a recommendation, by the model's own
word-piece vectors (``embedding.static``; by shared words for a model without them). The sentences and their
word pieces are written with each segment (``store.sentences``), so a page costs a gather and a few dot
products, with no tokenizer pass over its abstracts (figures: benchmarks/HISTORY.md, "The everyday path")."""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..embedding.piece_vectors import StaticVectors
from ..store.snapshot import Snapshot
from .bm25 import of
from .answer import Answer, Hit


def explain(snapshot: Snapshot, answer: Answer, query: str = "", seeds: Sequence[str] = (),
            offset: int = 0) -> Answer:
    """``answer`` with the ``evidence`` of each hit from ``offset`` on filled (kept beside what it already holds);
    the hits before ``offset`` (pages a response does not return) are left as they are."""
    page = answer.hits[offset:]
    if not page:
        return answer
    words = _word_shares(snapshot, page, query) if query else [[] for _ in page]
    picked = _sentences(snapshot, page, query, seeds)
    hits = tuple(_with(h, {**(h.evidence or {}), "words": w, **s}) for h, w, s in zip(page, words, picked))
    return replace(answer, hits=answer.hits[:offset] + hits)


def _with(hit: Hit, evidence: dict[str, Any]) -> Hit:
    """``replace(hit, evidence=evidence)`` without re-running the dataclass's checks (a tenth of a page's cost)."""
    out = copy.copy(hit)
    object.__setattr__(out, "evidence", evidence)
    return out


def _word_shares(snapshot: Snapshot, hits: Sequence[Hit], query: str) -> list[list[dict[str, Any]]]:
    lexical = of(snapshot)
    weights, average = lexical.weights(query)
    spoken: dict[str, str] = {}
    for word in re.findall(r"\w+", query):
        for token in lexical.tokenizer(word):
            spoken.setdefault(token, word)
    row_of = snapshot.documents.row_of
    rows = np.array([row_of[h.id] for h in hits], dtype=np.int64)
    per: dict[str, np.ndarray] = {}
    for (token, _), scored in zip(weights, lexical.term_scores(rows, (weights, average))):
        per[token] = per[token] + scored if token in per else scored  # a repeated word scores again
    out = []
    for n in range(len(hits)):
        scored = {t: float(s[n]) for t, s in per.items() if s[n] > 0}
        total = sum(scored.values())
        out.append([{"word": spoken.get(t, t), "share": round(v / total, 4)}
                    for t, v in sorted(scored.items(), key=lambda kv: -kv[1])])
    return out


def _sentences(snapshot: Snapshot, hits: Sequence[Hit], query: str, seeds: Sequence[str]) -> list[dict[str, Any]]:
    static = StaticVectors.of(snapshot.manifest.model.settings.model)
    row_of = snapshot.documents.row_of
    rows = np.array([row_of[h.id] for h in hits], dtype=np.int64)
    picked: list[tuple[int, int]] = [(0, 0)] * len(hits)
    if static is not None:
        target = static.embed([query] if query else list(seeds)[:20]).mean(0)
        for s, positions, local in snapshot.locate(rows):
            found = snapshot.segments[s].sentences(static).closest(local.tolist(), target, static.matrix)
            for position, span in zip(positions.tolist(), found):
                picked[position] = span
        return [{"sentence": list(span), "sentence_by": "meaning"} for span in picked]
    tokenize = of(snapshot).tokenizer
    wanted = set(tokenize(" ".join([query, *seeds])))
    for s, positions, local in snapshot.locate(rows):
        kept = snapshot.segments[s].sentences()
        for position, row in zip(positions.tolist(), local.tolist()):
            text = hits[position].text
            spans = kept.of(row).tolist()
            scores = [len(wanted & set(tokenize(text[a:b]))) for a, b in spans]
            picked[position] = tuple(spans[int(np.argmax(scores))])
    return [{"sentence": list(span), "sentence_by": "words"} for span in picked]
