"""Word forms in BM25 (``store.forms``) on BEIR SciFact: nDCG@10, Recall@100 and MRR@10 of BM25 alone and of
the default hybrid search, with the forms met (format 3) and without (format 2), train and test splits, in one
run on one index (the embeddings are shared; only the postings differ). Also the tokenizer's time.

    .venv/bin/python -m benchmarks.forms_bench      (first run embeds 5,183 abstracts: about 4 minutes here)
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from benchmarks.common import save, stamp, table
from benchmarks.retrieval_bench import SCIFACT, Runs, lexical_variant
from embedsearch import Index
from embedsearch.retrieval.beir import load_beir, score_run
from embedsearch.retrieval.settings import SearchSettings
from embedsearch.store.lexical import Tokenizer
from embedsearch.store.settings import LexicalSettings


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="forms-bench-"))
    test, train = load_beir(SCIFACT, "test"), load_beir(SCIFACT, "train")
    index = Index.build(test.documents, work / "idx", progress=True)
    runs = {"train": (Runs(index, train.queries), train), "test": (Runs(index, test.queries), test)}
    texts = [f"{d.title or ''} {d.text}" for d in test.documents]
    rows, log = [], {}
    for forms in (False, True):
        settings = LexicalSettings(forms=forms)
        lexical = lexical_variant(index, settings, work)
        start, tokenizer = time.perf_counter(), Tokenizer.of(settings)
        tokens = sum(len(tokenizer(t)) for t in texts)
        seconds = time.perf_counter() - start
        for split, (run, data) in runs.items():
            scores = run.bm25(lexical)
            for name, ranked in (("BM25", run.lexical_run(scores)),
                                 ("hybrid (default)", run.fused_run(scores, SearchSettings()))):
                got = score_run(ranked, data.qrels)
                log[f"{name}, forms={forms}, {split}"] = got
                rows.append([name, "met (format 3)" if forms else "apart (format 2)", split, f"{got['ndcg@10']:.4f}",
                             f"{got['recall@100']:.4f}", f"{got['mrr@10']:.4f}"])
        log[f"tokenize, forms={forms}"] = {"seconds": seconds, "tokens": tokens}
        print(f"forms={forms}: tokenized {tokens:,} tokens of {len(texts):,} abstracts in {seconds:.2f} s", flush=True)
    print(stamp())
    print(table(["search", "word forms", "split", "nDCG@10", "Recall@100", "MRR@10"], rows))
    save("forms_bench", log)


if __name__ == "__main__":
    main()
