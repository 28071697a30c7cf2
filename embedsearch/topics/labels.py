"""Topic labels: candidate key phrases by class-based TF-IDF (words and bigrams frequent in one topic and rare
in the others), then the label's three chosen by meaning and for diversity, as KeyBERT's maximal marginal
relevance does: each the candidate nearest the topic's centre (and not the other topics'), less its
similarity to those already chosen.

English stop words are removed before bigrams are formed, tokens must start with a letter, and LaTeX
commands and inline math are dropped, so labels never consist of stop words, numbers or markup.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

MARKUP = re.compile(r"\\[A-Za-z]+|\$[^$]*\$")
CANDIDATES = 15
DIVERSITY = 0.3

TOKENS = r"(?u)\b[^\W\d_][\w-]*[^\W_]\b"
BOILERPLATE = frozenset(["abstract", "paper", "papers", "propose", "proposed", "proposes", "introduce", "introduces", "introduced", "present", "presents", "approach", "approaches", "method", "methods", "result", "results", "show", "shows", "shown", "demonstrate", "demonstrates", "novel", "existing", "new", "based", "using", "use", "used", "uses", "work", "works", "study", "studies", "state", "art", "state-of-the-art", "framework", "performance", "achieve", "achieves", "achieving", "outperform", "outperforms", "significant", "significantly", "extensive", "experiments", "experiment", "key", "improve", "improves", "improved", "improvement", "enable", "enables", "provide", "provides", "address", "addresses", "recent", "challenge", "challenges", "furthermore", "moreover", "additionally", "finally", "specifically", "effective", "effectively", "admit", "admits", "lower", "upper", "true", "make", "makes", "lead", "leads", "overall", "incur", "incurs", "reference", "step", "steps", "yield", "yields", "remain", "remains", "given", "allow", "allows", "obtain", "obtains", "prior", "various", "different", "high", "low", "large", "small"])


def keywords(texts: Sequence[str], labels: np.ndarray, topics: Sequence[int], top: int = 10,
             markup: bool = False) -> dict[int, list[str]]:
    """The ``top`` keywords of each topic in ``topics`` (LaTeX commands and math dropped unless ``markup``).

    A class-based TF-IDF that counts papers, not occurrences: ``share * log(share / corpus_share)``, where
    ``share`` is the fraction of the topic's papers using the term and ``corpus_share`` the fraction of all
    papers. Terms common in the topic and rarer elsewhere win; a word repeated in one abstract, or used by
    every abstract, does not label a topic. Raw frequency in the topic breaks ties.
    """
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer

    vectorizer = CountVectorizer(stop_words=sorted(ENGLISH_STOP_WORDS | BOILERPLATE), ngram_range=(1, 2),
                                 token_pattern=TOKENS, lowercase=True,
                                 preprocessor=None if markup else (lambda text: MARKUP.sub(" ", text).lower()))
    matrix = vectorizer.fit_transform(texts).tocsr()
    vocab = vectorizer.get_feature_names_out()
    corpus_share = np.asarray((matrix > 0).sum(axis=0)).ravel() / matrix.shape[0]
    out = {}
    for topic in topics:
        members = matrix[labels == topic]
        counts = np.asarray(members.sum(axis=0)).ravel().astype(np.float64)
        share = np.asarray((members > 0).sum(axis=0)).ravel() / max(members.shape[0], 1)
        scores = share * np.log(np.maximum(share, 1e-12) / corpus_share)
        scores[share * members.shape[0] < min(2, members.shape[0])] = -np.inf
        order = np.lexsort((-counts, -scores))
        ranked = [i for i in order if counts[i] > 0 and np.isfinite(scores[i])]
        out[topic] = _dedupe([vocab[i] for i in ranked], dict(zip(vocab[ranked], share[ranked])), top)
    return out


def _dedupe(words: list[str], share: dict[str, float], top: int) -> list[str]:
    """The first ``top`` distinct keywords. Plurals count as the same term ("black hole", "black holes");
    a word is skipped when a kept phrase contains it, and a kept word gives way to a later phrase that
    holds it in most of the same papers ("black" -> "black holes"); a phrase whose words are all kept
    words replaces them ("language", "models" -> "language models"), and one whose words are all kept
    in some form adds nothing ("models llms" after "language models", "llms")."""
    kept: list[str] = []

    def stem(term: str) -> tuple[str, ...]:
        return tuple(p.removesuffix("s") for p in term.split())

    for word in words:
        parts = stem(word)
        stems = [stem(k) for k in kept]
        if parts in stems or (len(parts) == 1 and any(parts[0] in k for k in stems if len(k) > 1)):
            continue
        if len(parts) > 1:
            inside = [i for i, k in enumerate(stems) if len(k) == 1 and k[0] in parts]
            whole = {stems[i][0] for i in inside} == set(parts)
            mostly = [i for i in inside if share[word] >= 0.7 * share[kept[i]]]
            absorbed = inside if whole else mostly
            if absorbed:
                kept[absorbed[0]] = word
                kept = [k for i, k in enumerate(kept) if i not in absorbed[1:]]
                continue
            if all(any(p in k for k in stems) for p in parts):
                continue
        kept.append(word)
        if len(kept) == top:
            break
    return kept


def by_meaning(candidates: dict[int, list[str]], centres: np.ndarray, encode: Callable[[list[str]], np.ndarray],
               size: int = 3, diversity: float = DIVERSITY, contrast: float = 1.0) -> dict[int, list[str]]:
    """Each topic's candidates reordered so that the first ``size`` are those maximal marginal relevance picks
    (unit vectors from ``encode``, the index's encoder): relevance is the cosine to the topic's centre less
    ``contrast`` times the mean cosine to the other topics' centres; the rest follow in their order."""
    phrases = sorted({p for words in candidates.values() for p in words})
    if not phrases:
        return candidates
    vector = dict(zip(phrases, np.asarray(encode(phrases), dtype=np.float32)))
    unit = centres / np.maximum(np.linalg.norm(centres, axis=1, keepdims=True), 1e-12)
    out = {}
    for topic, words in candidates.items():
        if len(words) <= 1:
            out[topic] = list(words)
            continue
        vectors = np.stack([vector[w] for w in words])
        similarity = vectors @ unit.T
        others = np.delete(similarity, topic, axis=1)
        relevance = similarity[:, topic] - (contrast * others.mean(axis=1) if others.shape[1] else 0)
        chosen = [int(np.argmax(relevance))]
        while len(chosen) < min(size, len(words)):
            redundancy = (vectors @ vectors[chosen].T).max(axis=1)
            score = (1 - diversity) * relevance - diversity * redundancy
            score[chosen] = -np.inf
            chosen.append(int(np.argmax(score)))
        out[topic] = [words[i] for i in chosen] + [w for i, w in enumerate(words) if i not in chosen]
    return out


def label(words: Sequence[str], size: int = 3) -> str:
    return ", ".join(words[:size]) if words else "(no keywords)"
