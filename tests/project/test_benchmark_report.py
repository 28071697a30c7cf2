"""Benchmark results as data (issue 65): benchmarks/README.md is what `python -m benchmarks.report` renders
from the committed result files, at most 20 KB, every row linking to a result file that holds its command,
date, commit and machine; a benchmark's `save` writes such a file."""

import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from benchmarks import common, report  # noqa: E402


def test_the_committed_page_is_what_the_result_files_render_and_stays_short():
    page = (REPO / "benchmarks" / "README.md").read_text()
    assert page == report.render(), "benchmarks/README.md is stale: run `python -m benchmarks.report`"
    assert len(page.encode()) <= 20_000
    history = (REPO / "benchmarks" / "HISTORY.md").read_text()
    anchors = {re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
               for line in history.splitlines() if line.startswith("#")}
    for target in re.findall(r"\]\(([^)]+)\)", page):
        file, _, anchor = target.partition("#")
        assert (REPO / "benchmarks" / file).exists(), target
        if file == "HISTORY.md" and anchor:
            assert anchor in anchors, target


def test_every_result_file_says_how_when_where_and_on_what_code_it_was_measured():
    files = sorted((REPO / "benchmarks" / "results").glob("*.json"))
    assert len(files) >= 39  # 38 benchmarks and the targets
    for file in files:
        result = json.loads(file.read_text())
        if file.name == "targets.json":
            assert all(len(row) == 3 for row in result["rows"])
            continue
        assert result["name"] == file.stem and result["command"] and result["machine"], file.name
        assert re.fullmatch(r"2026-\d\d-\d\d", result["date"] or "") and result["commit"], file.name
        assert result.get("tables") or result.get("figures"), file.name


def test_a_benchmark_run_writes_its_result_file_and_the_page_shows_it(tmp_path, monkeypatch):
    monkeypatch.setattr(common, "RESULTS", tmp_path)
    monkeypatch.setattr(report, "RESULTS", tmp_path)
    (tmp_path / "targets.json").write_text(json.dumps({"rows": [["a target", "met", "here"]]}))
    common.save("demo_bench", {"p50_ms": 1.5}, headline="p50 1.5 ms")
    saved = json.loads((tmp_path / "demo_bench.json").read_text())
    assert saved["figures"] == {"p50_ms": 1.5} and saved["commit"] and saved["date"] and saved["command"]
    assert "| p50 1.5 ms |" in report.render() and "(results/demo_bench.json)" in report.render()
