"""Topic names a person reads: a short noun phrase ("vision-language-action models", "discrete diffusion")
beside the keyword label. Candidates are 1-3 word phrases scored by class-based TF-IDF, as ``labels.keywords``
scores words; a phrase may not start or end with a stop word or boilerplate ("of" may sit inside: "mixture of
experts"). Maximal marginal relevance by meaning (``labels.by_meaning``) then removes redundancy, and the
name is the first phrase of two or more words among its top picks, else its top word.

A coarse topic is named from all of its papers, not its largest child's: its name is a phrase that two of its
children share, never a child's own name (that would name the child); a coarse topic of one child has the
child's papers and so its name."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from .labels import BOILERPLATE, MARKUP, by_meaning

WORD = re.compile(r"(?u)\b[^\W\d_][\w-]*[^\W_]\b|[.;:!?()]")
INSIDE = frozenset(["of"])
CANDIDATES = 20
PICKS = 5
SHARED = 0.05
PHRASE_BONUS = 0.6  # a longer phrase says more: its score counts this much more for each extra word


def _stop() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS | BOILERPLATE)


def phrases(text: str, stop: frozenset[str]) -> list[str]:
    """The 1-3 word phrases of ``text`` that can name a topic: no punctuation inside, no stop word at either
    end, and inside only the connecting words in ``INSIDE``."""
    words = WORD.findall(MARKUP.sub(" . ", text).lower())
    out = []
    for i, first in enumerate(words):
        if first in stop or not first[0].isalpha():
            continue
        for n in (1, 2, 3):
            gram = words[i:i + n]
            if len(gram) < n or not gram[-1][0].isalpha():
                break
            if any(not w[0].isalpha() or (w in stop and w not in INSIDE) for w in gram):
                break
            if gram[-1] not in stop:
                out.append(" ".join(gram))
    return out


def candidates(texts: Sequence[str], labels: np.ndarray, topics: Sequence[int], top: int = CANDIDATES,
               children: np.ndarray | None = None) -> dict[int, list[str]]:
    """Each topic's ``top`` phrases by class-based TF-IDF over papers: ``share * log(share / corpus_share)``,
    with a phrase that holds a better-scored one's words (or is held by it) in as many papers dropped. With
    ``children`` (each paper's topic a level finer), a topic of several children keeps only phrases found in
    at least ``SHARED`` of the papers of each of two of them: what its children share, not what one of them is."""
    from sklearn.feature_extraction.text import CountVectorizer

    stop = _stop()
    vectorizer = CountVectorizer(analyzer=lambda text: phrases(text, stop), binary=True)
    matrix = vectorizer.fit_transform(texts).tocsr()
    vocab = vectorizer.get_feature_names_out()
    corpus_share = np.asarray(matrix.sum(axis=0)).ravel() / matrix.shape[0]
    words = np.array([len(v.split()) for v in vocab])
    out = {}
    for topic in topics:
        inside = labels == topic
        members = matrix[inside]
        count = np.asarray(members.sum(axis=0)).ravel()
        share = count / max(members.shape[0], 1)
        scores = share * np.log(np.maximum(share, 1e-12) / corpus_share) * (1 + PHRASE_BONUS * (words - 1))
        scores[count < min(2, members.shape[0])] = -np.inf
        kids = np.unique(children[inside]) if children is not None else ()
        if len(kids) > 1:
            held = [children[inside] == k for k in kids]
            per_kid = np.stack([np.asarray(members[h].sum(axis=0)).ravel() / h.sum() for h in held])
            scores[np.sort(per_kid, axis=0)[-2] < SHARED] = -np.inf
        ranked = [i for i in np.lexsort((-count, -scores)) if np.isfinite(scores[i]) and count[i] > 0][:top * 4]
        out[topic] = _distinct([vocab[i] for i in ranked], dict(zip(vocab[ranked], count[ranked])), top)
    return out


def _singular(phrase: str) -> str:
    """A phrase with each word's plural ``s`` dropped: forms of one phrase count once."""
    return " ".join(w.removesuffix("s") for w in phrase.split())


def _distinct(ranked: list[str], count: dict[str, int], top: int) -> list[str]:
    """Phrases with none nested in a kept one that occurs in about as many papers ("diffusion" after "discrete
    diffusion" in most of them), plurals counted once; a kept phrase gives way to a longer one that holds it
    in at least 70% of its papers."""
    kept: list[str] = []
    stem = _singular
    for phrase in ranked:
        s = stem(phrase)
        if any(stem(k) == s for k in kept):
            continue
        inside = [k for k in kept if f" {stem(k)} " in f" {s} "]
        holds = [k for k in kept if f" {s} " in f" {stem(k)} "]
        if holds and count[phrase] <= 1.5 * max(count[k] for k in holds):
            continue
        if inside and count[phrase] >= 0.7 * max(count[k] for k in inside):
            kept = [phrase if k == inside[0] else k for k in kept if k not in inside[1:]]
            continue
        kept.append(phrase)
        if len(kept) == top:
            break
    return kept


def choose(ranked: Sequence[str], picks: int = PICKS, avoid: frozenset[str] = frozenset()) -> str:
    """The name among a topic's MMR-ordered phrases: the first of two or more words in the top ``picks``,
    never one in ``avoid`` (a child's name, which would name the child, not its parent)."""
    avoid = {_singular(p) for p in avoid}
    ranked = [p for p in ranked if _singular(p) not in avoid]
    for phrase in ranked[:picks]:
        if " " in phrase:
            return phrase
    return ranked[0] if ranked else ""


def names(texts: Sequence[str], labels: np.ndarray, topics: Sequence[int], centres: np.ndarray,
          encode: Callable[[list[str]], np.ndarray], children: np.ndarray | None = None,
          avoid: dict[int, frozenset[str]] | None = None) -> dict[int, str]:
    """A name for each topic in ``topics``: phrases by class-based TF-IDF (shared by two ``children`` or more
    where given), reordered by meaning (MMR), none in the topic's ``avoid``."""
    ordered = by_meaning(candidates(texts, labels, topics, children=children), centres, encode)
    return {t: choose(ordered.get(t, []), avoid=(avoid or {}).get(t, frozenset())) for t in topics}
