"""Topic labels by class-based TF-IDF: words and bigrams frequent in one topic and rare in the others.

English stop words are removed before bigrams are formed, and tokens must start with a letter,
so labels never consist of stop words or numbers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

TOKENS = r"(?u)\b[^\W\d_][\w-]*[^\W_]\b"
BOILERPLATE = frozenset(["abstract", "paper", "papers", "propose", "proposed", "proposes", "introduce", "introduces", "introduced", "present", "presents", "approach", "approaches", "method", "methods", "result", "results", "show", "shows", "shown", "demonstrate", "demonstrates", "novel", "existing", "new", "based", "using", "use", "used", "uses", "work", "works", "study", "studies", "state", "art", "state-of-the-art", "framework", "performance", "achieve", "achieves", "achieving", "outperform", "outperforms", "significant", "significantly", "extensive", "experiments", "experiment", "key", "improve", "improves", "improved", "improvement", "enable", "enables", "provide", "provides", "address", "addresses", "recent", "challenge", "challenges", "furthermore", "moreover", "additionally", "finally", "specifically", "effective", "effectively", "admit", "admits", "lower", "upper", "true", "make", "makes", "lead", "leads", "overall", "incur", "incurs", "reference", "step", "steps", "yield", "yields", "remain", "remains", "given", "allow", "allows", "obtain", "obtains", "prior", "various", "different", "high", "low", "large", "small"])


def keywords(texts: Sequence[str], labels: np.ndarray, topics: Sequence[int], top: int = 10) -> dict[int, list[str]]:
    """The ``top`` keywords of each topic in ``topics``.

    A class-based TF-IDF that counts papers, not occurrences: ``share * log(share / corpus_share)``, where
    ``share`` is the fraction of the topic's papers using the term and ``corpus_share`` the fraction of all
    papers. Terms common in the topic and rarer elsewhere win; a word repeated in one abstract, or used by
    every abstract, does not label a topic. Raw frequency in the topic breaks ties.
    """
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer

    vectorizer = CountVectorizer(stop_words=sorted(ENGLISH_STOP_WORDS | BOILERPLATE), ngram_range=(1, 2),
                                 token_pattern=TOKENS, lowercase=True)
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


def label(words: Sequence[str], size: int = 3) -> str:
    return ", ".join(words[:size]) if words else "(no keywords)"
