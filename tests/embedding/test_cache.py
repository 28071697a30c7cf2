"""The cache folder as a user manages it: what it holds, its size, and clearing it."""

import json

import numpy as np
from conftest import run_cli

from embedsearch.embedding.cache import EmbeddingCache, clear, usage


def _fill(root):
    store = EmbeddingCache(root, "abc123", 4)
    store.put_many([b"k1", b"k2", b"k3"], np.ones((3, 4), dtype=np.float32))
    (root / "onnx" / "abc123-v1").mkdir(parents=True)
    (root / "onnx" / "abc123-v1" / "model.onnx").write_bytes(b"x" * 5000)
    (root / "mine.txt").write_text("not ours")


def test_usage_lists_vectors_and_exports_and_clear_removes_only_them(tmp_path):
    _fill(tmp_path)
    parts = {p.path.name: p for p in usage(tmp_path)}
    assert parts["abc123.sqlite"].vectors == 3 and parts["abc123.sqlite"].bytes > 0
    assert parts["onnx"].bytes == 5000
    assert clear(tmp_path) >= 5000
    assert usage(tmp_path) == [] and (tmp_path / "mine.txt").read_text() == "not ours"


def test_cache_command_reports_and_clears(tmp_path, monkeypatch):
    _fill(tmp_path)
    monkeypatch.setenv("EMBEDSEARCH_CACHE_DIR", str(tmp_path))
    shown = run_cli("cache", check=True).stdout
    assert str(tmp_path) in shown and "3 vectors" in shown and "onnx" in shown
    report = json.loads(run_cli("cache", "--json", check=True).stdout)
    assert report["path"] == str(tmp_path) and report["bytes"] == sum(p["bytes"] for p in report["parts"])
    assert "freed" in run_cli("cache", "--clear", check=True).stdout
    assert "(empty)" in run_cli("cache", check=True).stdout
