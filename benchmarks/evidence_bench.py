"""A hit's closest sentence before and after issue 62, on SciFact's test judgements (each claim against the
abstract judged relevant to it) and as many random pairs: the sentence today's evidence picks (blingfire's
splitter, word pieces kept with the segment) against the one the regex splitter of e37a1e9 picked, both
scored by the same word-piece vectors (and what a page's evidence costs on the bundled index). Where they
differ, why: the regex cut the abstract inside a
sentence ("Fig. 3", "et al.", "i.e."), so its pick was a fragment, or blingfire left two sentences together
(a sentence opening with math or a lower-case word). The words' shares are the same BM25 terms in both (one
pass instead of one per word), so they are compared in the tests, not here.

    python -m benchmarks.evidence_bench
"""

from __future__ import annotations

import json
import random
import re

import numpy as np

from benchmarks.common import SHARED, save, table

_OLD_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[$\\])")


def old_sentences(text: str) -> list[tuple[int, int]]:
    """The splitter of e37a1e9 (``retrieval.evidence.sentences``): a stop, space, then a capital or digit."""
    spans, start = [], len(text) - len(text.lstrip())
    for found in _OLD_BREAK.finditer(text):
        spans.append((start, found.start()))
        start = found.end()
    spans.append((start, len(text.rstrip())))
    return [(a, b) for a, b in spans if b > a] or [(0, len(text))]


def pick(static, text: str, spans: list[tuple[int, int]], query: str) -> tuple[int, int]:
    scores = static.embed([text[a:b] for a, b in spans]) @ static.embed([query])[0]
    return spans[int(np.argmax(scores))]


def main() -> None:
    from embedsearch.embedding.settings import DEFAULT_MODEL
    from embedsearch.embedding.piece_vectors import StaticVectors
    from embedsearch.store.sentences import split

    static = StaticVectors.of(DEFAULT_MODEL)
    folder = SHARED / "eval" / "scifact"
    corpus = {d["_id"]: d for d in map(json.loads, (folder / "corpus.jsonl").open())}
    queries = {q["_id"]: q["text"] for q in map(json.loads, (folder / "queries.jsonl").open())}
    judged = [line.split("\t")[:2] for line in (folder / "qrels" / "test.tsv").read_text().splitlines()[1:]]
    rng = random.Random(0)
    ids = sorted(corpus)
    pairs = {"judged (test qrels)": [(q, d) for q, d in judged if q in queries and d in corpus],
             "random claim and abstract": [(rng.choice(sorted(queries)), rng.choice(ids)) for _ in range(len(judged))]}
    rows, kinds = [], {}
    for name, chosen in pairs.items():
        same = same_text = 0
        for q, d in chosen:
            text = corpus[d]["text"]
            old, new = pick(static, text, old_sentences(text), queries[q]), pick(static, text, split(text), queries[q])
            same += old == new
            inside = any(a <= old[0] and old[1] <= b for a, b in split(text))
            same_text += inside and (new[0] <= old[0] and old[1] <= new[1])
            if old != new:
                why = ("the regex's pick was a fragment of the sentence now picked" if inside and new[0] <= old[0]
                       and old[1] <= new[1] else "another sentence is closer now that fragments are whole"
                       if inside else "blingfire kept two of the regex's sentences together")
                kinds[why] = kinds.get(why, 0) + 1
        rows.append([name, len(chosen), f"{same / len(chosen):.1%}", f"{same_text / len(chosen):.1%}"])
    print(table(["pairs", "n", "same span", "same span, or the old one inside the new sentence"], rows))
    print(table(["where they differ", "pairs"], [[k, v] for k, v in sorted(kinds.items(), key=lambda kv: -kv[1])]))
    spans_old = sum(len(old_sentences(d["text"])) for d in corpus.values())
    spans_new = sum(len(split(d["text"])) for d in corpus.values())
    print(f"sentences in the 5,183 abstracts: regex {spans_old:,}, blingfire {spans_new:,}")
    p50, p95 = page_cost([queries[q] for q, _ in pairs["judged (test qrels)"][:40]])
    print(f"evidence of a page of 10 on the bundled index (explain, warm, 40 claims x 5): p50 {p50:.2f} ms, "
          f"p95 {p95:.2f} ms")
    save("evidence_bench", {"rows": rows, "differences": kinds, "sentences": {"regex": spans_old,
                                                                               "blingfire": spans_new},
                            "bundled_page_ms": {"p50": p50, "p95": p95}})


def page_cost(claims: list[str]) -> tuple[float, float]:
    """p50 and p95 (ms) of ``explain`` on a page of 10 of the bundled index, each page explained 5 times."""
    import time

    from benchmarks.common import percentiles
    from embedsearch import Index
    from embedsearch.retrieval.evidence import explain

    index = Index.bundled()
    pages = [(index.search(c, 10), c) for c in claims]
    explain(index.snapshot, *pages[0])
    samples = []
    for _ in range(5):
        for page, claim in pages:
            start = time.perf_counter()
            explain(index.snapshot, page, claim)
            samples.append(time.perf_counter() - start)
    return percentiles(samples)


if __name__ == "__main__":
    main()
