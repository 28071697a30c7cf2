"""Fielded query terms over a whole index at N papers (issues 54, 62): what the word postings (with body
positions since issue 62) and the evidence's sentences add on disk and cost to make, latency of an author
listing, a phrase, a phrase with free words and a phrase of common words (each word in over 10% of papers),
each with every hit's evidence as ``find`` answers, the evidence of a page of 10 alone, and recall against a
brute-force scan of every paper.

Texts are six SciFact sentences each, authors drawn from 50,000 made-up names with a Zipf skew (some write
hundreds of papers), years 1990-2025 with one paper in ten undated; vectors are clustered synthetic 384-d
ones (as ``scale_index``: embedding a million abstracts is not what this measures).

    python -m benchmarks.fielded_bench --n 1000000
"""

from __future__ import annotations

import argparse
import random
import re
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.common import clustered_vectors, peak_rss_mb, percentiles, save, sentence_pool, table

FIRST = ["Yann", "Ana", "Wei", "Priya", "Lars", "Fatima", "José", "Mei", "Olu", "Sven", "Aiko", "Chloé"]
LAST = [f"{a}{b}" for a in ("Ber", "Cas", "Dor", "Fen", "Gal", "Hol", "Ish", "Kar", "Lom", "Mor", "Nak", "Ors",
                             "Pel", "Qui", "Ros", "Sar", "Tan", "Vel", "Wen", "Zor")
        for b in ("ger", "tillo", "ova", "wick", "ardi", "mann", "ida", "sson", "ek", "ani", "berg", "ou", "ez",
                  "ski", "ton", "ier", "uchi", "and", "ell", "ado")]


def corpus(n: int, seed: int = 0):
    from embedsearch import Document

    rng, pool = random.Random(seed), sentence_pool()
    names = [f"{rng.choice(FIRST)} {rng.choice(LAST)}{i % 125}" for i in range(50_000)]
    weights = 1 / np.arange(1, len(names) + 1) ** 1.1
    picks = np.random.default_rng(seed).choice(len(names), size=(n, 3), p=weights / weights.sum())
    docs = []
    for i in range(n):
        sentences = rng.sample(pool, 6)
        meta = {"authors": [names[j] for j in picks[i][: 1 + i % 3]], **({"year": 1990 + i % 36} if i % 10 else {})}
        docs.append(Document(f"s{i}", " ".join(sentences[1:]), sentences[0][:120], meta))
    return docs, names


def phrases(docs, rng: random.Random, count: int) -> list[str]:
    """Adjacent word pairs and triples from random papers: rare and common alike."""
    out = []
    while len(out) < count:
        words = re.findall(r"[A-Za-z]{4,}", rng.choice(docs).text)
        if len(words) > 4:
            start = rng.randrange(len(words) - 3)
            out.append(" ".join(words[start:start + 2 + len(out) % 2]))
    return out


def common_phrases(index, docs, rng: random.Random, count: int) -> list[str]:
    """Phrases of two or three words as written in random papers, each word in over 10% of the papers."""
    from embedsearch.corpus.fold import plain

    words = index.snapshot.segments[0].words
    share = len(index.snapshot.segments[0].documents)
    common = {w for w in {k[2:] for k in words.vocab if k.startswith("b:")}
              if len(words.rows_of("body", w)) > share / 10}
    out: list[str] = []
    while len(out) < count:
        found = plain(rng.choice(docs).text).split()
        size = 2 + len(out) % 2
        runs = [found[i:i + size] for i in range(len(found) - size) if all(w in common for w in found[i:i + size])]
        if runs:
            out.append(" ".join(rng.choice(runs)))
    return out


def timed(call, queries: list[str]) -> tuple[float, float]:
    """p50 and p95 of each query asked once, its sets not yet kept (a repeat would read them from memory)."""
    from embedsearch.retrieval.fielded import _MASKS

    call(queries[0])
    samples = []
    for q in queries:
        _MASKS.clear()
        start = time.perf_counter()
        call(q)
        samples.append(time.perf_counter() - start)
    return percentiles(samples)


def main() -> None:
    from embedsearch import Index
    from embedsearch.corpus.fold import author_names, plain
    from embedsearch.retrieval.query import parse
    from embedsearch.store.files import size_on_disk
    from embedsearch.embedding.piece_vectors import StaticVectors
    from embedsearch.retrieval.evidence import explain
    from embedsearch.store.sentences import build as build_sentences
    from embedsearch.store.words import build as build_words

    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--index", type=Path, help="an index this recipe built at --n before: time its queries only")
    args = parser.parse_args()
    docs, names = corpus(args.n)
    work = Path(tempfile.mkdtemp(prefix="fielded-bench-"))
    start = time.perf_counter()
    index = Index.load(args.index) if args.index else \
        Index.from_embeddings(docs, clustered_vectors(args.n, seed=11), work / "idx", Index.bundled().manifest.model)
    build_s = time.perf_counter() - start
    rng = random.Random(1)
    authors = [f'author:"{names[i]}"' for i in sorted(rng.sample(range(2_000), args.queries))]
    alone = [f'"{p}"' for p in phrases(docs, rng, args.queries)]
    mixed = [f'{rng.choice(["vitamin", "cancer", "protein", "infection", "brain"])} "{p}"'
             for p in phrases(docs, rng, args.queries)]
    common = [f'"{p}"' for p in common_phrases(index, docs, rng, args.queries)]
    del docs
    index = Index.load(index.path)
    start = time.perf_counter()
    first = index.find(authors[0], 10)
    first_s = time.perf_counter() - start
    words_s = 0.0
    for segment in [] if args.index else index.snapshot.segments:  # the postings' cost, apart from the build
        start = time.perf_counter()
        build_words(segment.documents, Path(tempfile.mkdtemp(prefix="words-", dir=work)))
        words_s += time.perf_counter() - start
    sentences_s = 0.0
    static = StaticVectors.of(index.manifest.model.settings.model)
    for segment in [] if args.index else index.snapshot.segments:  # the evidence's sentences, likewise
        start = time.perf_counter()
        build_sentences(segment.documents, Path(tempfile.mkdtemp(prefix="sentences-", dir=work)), static)
        sentences_s += time.perf_counter() - start
    words_bytes = sum(f.stat().st_size for f in index.path.rglob("words/*") if f.is_file())
    positions_bytes = sum(f.stat().st_size for n in ("counts", "posptr", "positions")
                          for f in index.path.rglob(f"words/{n}.npy"))
    sentence_bytes = sum(f.stat().st_size for f in index.path.rglob("sentences/*") if f.is_file())
    rows = [["papers", f"{args.n:,}"], ["index build, word postings included", f"{build_s:.0f} s"],
            ["of which the word postings (made again apart, every segment)", f"{words_s:.0f} s"],
            ["first fielded query of a fresh open (the most prolific author's listing)", f"{first_s:.2f} s"],
            ["word postings on disk", f"{words_bytes / 1e6:,.0f} MB ({words_bytes / size_on_disk(index.path):.0%}"
                                      f" of the index, {words_bytes / args.n:,.0f} B a paper)"],
            ["of which body positions (counts, posptr, positions)", f"{positions_bytes / 1e6:,.0f} MB"],
            ["evidence sentences (spans, word pieces, norms), made apart", f"{sentences_s:.0f} s"],
            ["evidence sentences on disk", f"{sentence_bytes / 1e6:,.0f} MB ({sentence_bytes / args.n:,.0f} B a "
                                           "paper)"]]
    for label, queries in (("author listing", authors), ("phrase alone", alone), ("phrase + free words", mixed),
                           ("common-word phrase (each word in >10% of papers)", common)):
        p50, p95 = timed(lambda q: index.find(q, 10), queries)
        rows.append([f"warm {label} (`find`, k=10) p50 / p95", f"{p50:.1f} / {p95:.1f} ms"])
        print(rows[-1], flush=True)
    pages = [index.search(q.strip('"'), 10) for q in alone + mixed]
    explain(index.snapshot, pages[0], alone[0].strip('"'))
    samples = []
    for q, page in zip(alone + mixed, pages):
        start = time.perf_counter()
        explain(index.snapshot, page, q.strip('"'))
        samples.append(time.perf_counter() - start)
    p50, p95 = percentiles(samples)
    rows.append(["evidence of a page of 10 (`retrieval.evidence.explain`, warm) p50 / p95", f"{p50:.2f} / {p95:.2f} ms"])
    sample = authors[:10] + alone[:10] + mixed[:10] + common[:10]
    tests = [parse(q) for q in sample]
    found = [set() for _ in sample]
    for doc in index.documents:  # each paper folded once, then the grammar's own test for every query
        folded = (plain(f"{doc.title or ''} {doc.text}"), plain(doc.title), author_names(doc.metadata))
        for n, test in enumerate(tests):
            if test.holds(*folded):
                found[n].add(doc.id)
    from embedsearch.retrieval.fielded import Fielded, allowed

    ids = index.snapshot.ids
    exact = sum({ids[r] for r in np.flatnonzero(allowed(index.snapshot, [Fielded.of(t)]))} == expected
                for t, expected in zip(tests, found))
    counts, hits, wanted, totals = [], 0, 0, True
    for q, expected in zip(sample, found):
        answer = index.find(q, min(max(1, len(expected)), 1000))
        got = {h.id for h in answer}
        hits += len(got & expected) - len(got - expected)  # a paper that fails the scan counts against
        wanted += min(len(expected), 1000)
        totals &= not answer.listing or answer.total == len(expected)
        counts.append(len(expected))
    recall = hits / max(1, wanted)
    rows += [["fielded sets (the rows a search ranks within) equal to a scan of every paper", f"{exact} of {len(tests)}"],
             ["recall of `find` against the scan (40 queries, their first 1,000 matches; less any paper the scan "
              "refuses)", f"{recall:.4f}"], ["every listing's total equals the scan's", str(totals)],
             ["matches per sampled query (min / median / max)",
              f"{min(counts):,} / {int(np.median(counts)):,} / {max(counts):,}"],
             ["first listing's total", f"{first.total:,}"], ["peak RSS", f"{peak_rss_mb():,.0f} MB"]]
    print(table(["measure", "value"], rows))
    save("fielded_bench", {"rows": rows})


if __name__ == "__main__":
    main()
