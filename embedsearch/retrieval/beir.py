"""BEIR-format evaluation: load a dataset, score rankings with nDCG@10, Recall@100 and MRR@10.

Metric definitions follow BEIR (pytrec_eval): graded gains, ``log2(rank + 1)`` discount, ideal
ranking from the judgements; queries without judgements in the split are not scored.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..corpus import Document
from ..errors import InputError

Qrels = dict[str, dict[str, int]]


@dataclass(frozen=True)
class BeirDataset:
    name: str
    documents: list[Document]
    queries: dict[str, str]
    qrels: Qrels


def load_beir(folder: str | Path, split: str = "test") -> BeirDataset:
    """Read ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/SPLIT.tsv``, checking they agree."""
    folder = Path(folder)
    files = {"corpus": folder / "corpus.jsonl", "queries": folder / "queries.jsonl",
             "qrels": folder / "qrels" / f"{split}.tsv"}
    for path in files.values():
        if not path.is_file():
            raise InputError(f"{path}: missing; a BEIR folder holds corpus.jsonl, queries.jsonl and qrels/{split}.tsv")
    documents = [Document(str(r["_id"]), r.get("text") or "", (r.get("title") or "").strip() or None)
                 for r in _jsonl(files["corpus"], ("_id", "text"))]
    documents = [d for d in documents if d.text.strip() or d.title]
    queries = {str(r["_id"]): r["text"] for r in _jsonl(files["queries"], ("_id", "text"))}
    qrels: Qrels = {}
    known = {d.id for d in documents}
    with files["qrels"].open(encoding="utf-8", newline="") as fh:
        rows = csv.reader(fh, delimiter="\t")
        header = next(rows, None)
        if header is None or [h.strip() for h in header[:2]] != ["query-id", "corpus-id"]:
            raise InputError(f"{files['qrels']}:1: expected the header query-id, corpus-id, score")
        for number, row in enumerate(rows, start=2):
            if len(row) < 3 or not row[2].strip().lstrip("-").isdigit():
                raise InputError(f"{files['qrels']}:{number}: expected query-id, corpus-id and an integer score")
            qid, did, score = row[0], row[1], int(row[2])
            if qid not in queries:
                raise InputError(f"{files['qrels']}:{number}: query id {qid!r} is not in queries.jsonl")
            if did not in known:
                raise InputError(f"{files['qrels']}:{number}: corpus id {did!r} is not in corpus.jsonl")
            qrels.setdefault(qid, {})[did] = score
    return BeirDataset(folder.name, documents, {q: queries[q] for q in qrels}, qrels)


def _jsonl(path: Path, required: Sequence[str]) -> list[dict]:
    out = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{number}: invalid JSON ({exc.msg})") from None
            missing = [f for f in required if f not in row]
            if missing:
                raise InputError(f"{path}:{number}: missing field {missing[0]!r}")
            out.append(row)
    return out


def ndcg_at(ranked: Sequence[str], judged: Mapping[str, int], k: int = 10) -> float:
    dcg = sum(judged.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: Sequence[str], judged: Mapping[str, int], k: int = 100) -> float:
    relevant = {d for d, g in judged.items() if g > 0}
    return len(relevant & set(ranked[:k])) / len(relevant) if relevant else 0.0


def mrr_at(ranked: Sequence[str], judged: Mapping[str, int], k: int = 10) -> float:
    return next((1 / (i + 1) for i, d in enumerate(ranked[:k]) if judged.get(d, 0) > 0), 0.0)


def score_run(run: Mapping[str, Sequence[str]], qrels: Qrels) -> dict[str, float]:
    """Mean metrics over the judged queries; ``run`` maps query id to ranked document ids."""
    metrics = {"ndcg@10": ndcg_at, "recall@100": recall_at, "mrr@10": mrr_at}
    return {name: sum(fn(run.get(q, []), qrels[q]) for q in qrels) / len(qrels) for name, fn in metrics.items()}


def rank_queries(index, queries: Mapping[str, str], mode: str | None = None, k: int = 100,
                 progress: bool = False, batch: int = 32) -> dict[str, list[str]]:
    """Ranked document ids per query id, from ``index.search_many``."""
    ids = list(queries)
    run: dict[str, list[str]] = {}
    bar = None
    if progress:
        import sys

        from tqdm import tqdm

        bar = tqdm(total=len(ids), desc="queries", unit="q", file=sys.stderr)
    for start in range(0, len(ids), batch):
        part = ids[start:start + batch]
        for qid, hits in zip(part, index.search_many([queries[q] for q in part], k, mode=mode)):
            run[qid] = [h.id for h in hits]
        if bar:
            bar.update(len(part))
    if bar:
        bar.close()
    return run
