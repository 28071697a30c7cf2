import math

import pytest

from embedsearch.errors import InputError
from embedsearch.retrieval.beir import load_beir, mrr_at, ndcg_at, recall_at, score_run


def test_metrics_on_a_hand_computed_example():
    judged = {"d1": 1, "d3": 2}
    ranked = ["d3", "x", "d1"]
    ideal = 2 / math.log2(2) + 1 / math.log2(3)
    assert ndcg_at(ranked, judged) == pytest.approx((2 / 1 + 1 / 2) / ideal)
    assert recall_at(["x", "d1"], judged) == 0.5
    assert mrr_at(["x", "y", "d1"], judged) == pytest.approx(1 / 3)
    assert mrr_at(["x"], judged) == 0.0
    assert score_run({"q1": ranked, "q2": []}, {"q1": judged, "q2": {"d1": 1}})["recall@100"] == 0.5


def make_beir(root, qrels="query-id\tcorpus-id\tscore\nq1\td1\t1\n"):
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text('{"_id": "d1", "title": "T", "text": "one"}\n{"_id": "d2", "text": "two"}\n')
    (root / "queries.jsonl").write_text('{"_id": "q1", "text": "first"}\n{"_id": "q2", "text": "second"}\n')
    (root / "qrels" / "test.tsv").write_text(qrels)
    return root


def test_load_beir_keeps_only_judged_queries(tmp_path):
    data = load_beir(make_beir(tmp_path))
    assert [d.id for d in data.documents] == ["d1", "d2"] and data.queries == {"q1": "first"}
    assert data.qrels == {"q1": {"d1": 1}}


@pytest.mark.parametrize("qrels, message", [
    ("query-id\tcorpus-id\tscore\nq1\tzzz\t1\n", r"test.tsv:2: corpus id 'zzz' is not in corpus.jsonl"),
    ("query-id\tcorpus-id\tscore\nq9\td1\t1\n", r"test.tsv:2: query id 'q9' is not in queries.jsonl"),
    ("query-id\tcorpus-id\tscore\nq1\td1\n", r"test.tsv:2: expected query-id"),
])
def test_bad_qrels(tmp_path, qrels, message):
    with pytest.raises(InputError, match=message):
        load_beir(make_beir(tmp_path, qrels))


def test_missing_files(tmp_path):
    with pytest.raises(InputError, match=r"corpus.jsonl: missing"):
        load_beir(tmp_path)
    make_beir(tmp_path / "b")
    with pytest.raises(InputError, match=r"qrels/train.tsv: missing"):
        load_beir(tmp_path / "b", split="train")


def test_eval_command_on_a_tiny_beir_folder(tmp_path):
    import json

    from conftest import run_cli

    root = tmp_path / "tiny"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text(
        '{"_id": "d1", "title": "Spikes", "text": "Spiking neural networks with first-spike timing."}\n'
        '{"_id": "d2", "title": "Robots", "text": "Vision-language-action policies for robot arms."}\n'
        '{"_id": "d3", "title": "Diffusion", "text": "Discrete diffusion language models."}\n')
    (root / "queries.jsonl").write_text('{"_id": "q1", "text": "robot arm policy"}\n'
                                        '{"_id": "q2", "text": "spiking neurons"}\n')
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td2\t1\nq2\td1\t1\n")
    result = json.loads(run_cli("eval", "--beir", str(root), "--json", check=True).stdout)
    assert result == {"dataset": "tiny", "split": "test", "mode": "hybrid", "queries": 2,
                      "ndcg@10": 1.0, "recall@100": 1.0, "mrr@10": 1.0}
    bad = run_cli("eval", "--beir", str(root), "--split", "dev")
    assert bad.returncode == 2 and "qrels/dev.tsv: missing" in bad.stderr
