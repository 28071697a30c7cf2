"""Why each hit matched, for a page of hits: the query words that matched it lexically with their share of
its BM25 score (with the whole corpus's statistics, as the ranking scored it), and the abstract's sentence
closest in meaning to the query, or to the seeds of a recommendation, by the model's own word-piece vectors
(``embedding.static``; by shared words for a model without them). A millisecond or two a page."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..embedding.static import StaticVectors
from ..store.snapshot import Snapshot
from .bm25 import of
from .search import Answer, Hit

_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[$\\])")


def sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text``: a break is a full stop, question or exclamation mark, then
    space, then a capital, digit, bracket or math (so ``e.g. the`` and ``1.5`` do not break)."""
    spans, start = [], len(text) - len(text.lstrip())
    for found in _BREAK.finditer(text):
        spans.append((start, found.start()))
        start = found.end()
    spans.append((start, len(text.rstrip())))
    return [(a, b) for a, b in spans if b > a] or [(0, len(text))]


def explain(snapshot: Snapshot, answer: Answer, query: str = "", seeds: Sequence[str] = ()) -> Answer:
    """``answer`` with each hit's ``evidence`` filled (kept beside what it already holds)."""
    if not answer.hits:
        return answer
    words = _word_shares(snapshot, answer.hits, query) if query else [[] for _ in answer.hits]
    picked = _sentences(snapshot, answer.hits, query, seeds)
    hits = tuple(replace(h, evidence={**(h.evidence or {}), "words": w, **s})
                 for h, w, s in zip(answer.hits, words, picked))
    return Answer(hits, answer.version, answer.missing)


def _word_shares(snapshot: Snapshot, hits: Sequence[Hit], query: str) -> list[list[dict[str, Any]]]:
    lexical = of(snapshot)
    weights, average = lexical.weights(query)
    spoken: dict[str, str] = {}
    for word in re.findall(r"\w+", query):
        for token in lexical.tokenizer(word):
            spoken.setdefault(token, word)
    row_of = snapshot.documents.row_of
    rows = np.array([row_of[h.id] for h in hits], dtype=np.int64)
    per = {t: lexical.score_rows(query, rows, weighted=([(t, idf)], average))
           for t, idf in dict.fromkeys(weights)}
    counts = {t: sum(1 for w, _ in weights if w == t) for t in per}
    out = []
    for n in range(len(hits)):
        scored = {t: float(s[n]) * counts[t] for t, s in per.items() if s[n] > 0}
        total = sum(scored.values())
        out.append([{"word": spoken.get(t, t), "share": round(v / total, 4)}
                    for t, v in sorted(scored.items(), key=lambda kv: -kv[1])])
    return out


def _sentences(snapshot: Snapshot, hits: Sequence[Hit], query: str, seeds: Sequence[str]) -> list[dict[str, Any]]:
    spans = [sentences(h.text) for h in hits]
    texts = [h.text[a:b] for h, found in zip(hits, spans) for a, b in found]
    static = StaticVectors.of(snapshot.manifest.model.settings.model)
    if static is not None:
        target = static.embed([query] if query else list(seeds)[:20]).mean(0)
        scores = static.embed(texts) @ target
        how = "meaning"
    else:
        wanted = set(of(snapshot).tokenizer(" ".join([query, *seeds])))
        tokenize = of(snapshot).tokenizer
        scores = np.array([len(wanted & set(tokenize(t))) for t in texts], dtype=np.float32)
        how = "words"
    out, at = [], 0
    for found in spans:
        best = int(np.argmax(scores[at:at + len(found)]))
        out.append({"sentence": list(found[best]), "sentence_by": how})
        at += len(found)
    return out
