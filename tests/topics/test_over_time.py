"""Topics over time (``topics.periods``, ``topics.over_time``, ``topics --over-time``): periods in order,
counts that add up to the topic sizes, shares of a period that add up to 1, per-period keywords, the chart,
and bad input named."""

from __future__ import annotations

import csv
import json
from datetime import date

import numpy as np
import pytest
from conftest import run_cli

from embedsearch import Document, Index
from embedsearch.errors import InputError
from embedsearch.topics.periods import periods


def test_years_one_per_year_then_equal_bins_labelled_by_range():
    found = periods([2012, 2010, "2011", None, 2012])
    assert found.names == ("2010", "2011", "2012") and found.of_row[2] == ("2011",) and found.left_out == 1
    many = periods(list(range(1955, 2023)), bins=4)
    assert many.names == ("1955-1971", "1972-1988", "1989-2005", "2006-2022") and many.of_row[-1] == ("2006-2022",)


def test_dates_by_month_or_by_year_and_classes_by_size():
    months = periods(["2021-03-04", "2021-01-30", date(2021, 3, 1), "2021-02"])
    assert months.names == ("2021-01", "2021-02", "2021-03") and months.of_row[2] == ("2021-03",)
    years = periods([f"{y}-{m:02d}-01" for y in range(2000, 2010) for m in range(1, 13)])
    assert years.names == tuple(str(y) for y in range(2000, 2010))
    classes = periods(["ICML", "NeurIPS", ["NeurIPS", "ICLR"], None, ""], by_class=True)
    assert classes.names == ("NeurIPS", "ICLR", "ICML") and classes.of_row[2] == ("NeurIPS", "ICLR")
    assert classes.left_out == 2 and classes.first_left_out == 3


def test_values_that_are_not_years_or_dates_are_counted_and_the_first_named():
    found = periods([2020, "soon", "2021-13-01", 2021])
    assert found.left_out == 2 and found.first_left_out == 1 and found.names == ("2020", "2021")
    with pytest.raises(InputError, match="--bins"):
        periods([2020], bins=0)


WORDS = [["graph", "neural", "message", "passing", "node"], ["bandit", "regret", "arm", "reward", "exploration"],
         ["protein", "folding", "structure", "residue", "docking"]]


@pytest.fixture(scope="module")
def rising(tmp_path_factory, bundled_index):
    """Three planted topics over 2010-2019; the protein topic rises, the bandit topic falls."""
    rng = np.random.default_rng(0)
    centres = np.linalg.qr(rng.normal(size=(384, 3)))[0].T
    docs, vectors = [], []
    for i in range(180):
        topic, year = i % 3, 2010 + (i // 3) % 10
        if topic == 2 and year < 2014 and (i // 30) % 2:
            topic = 1
        text = " ".join(rng.choice(WORDS[topic], 12)) + f" study {i}"
        docs.append(Document(f"p{i}", text, f"{WORDS[topic][0]} paper {i}",
                             {"year": year if i != 7 else None, "venue": ["ICML", "NeurIPS"][i % 2]}))
        vectors.append(centres[topic] + 0.05 * rng.normal(size=384))
    vectors = np.asarray(vectors, dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = Index.from_embeddings(docs, vectors, tmp_path_factory.mktemp("over-time") / "idx",
                                  bundled_index.manifest.model)
    run_cli("topics", "--index", str(index.path), "--json", check=True)  # the saved fit every test reads
    return index


def rows_of(result):
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_counts_add_up_to_topic_sizes_and_shares_of_a_period_to_one(rising):
    result = run_cli("topics", "--index", str(rising.path), "--over-time", "year", "--json", check=True)
    rows = rows_of(result)
    assert {"topic", "name", "label", "period", "count", "share", "topic_share", "keywords"} <= set(rows[0])
    names = {t["id"]: t["name"] for t in json.loads(run_cli("topics", "--index", str(rising.path), "--json",
                                                            check=True).stdout)["topics"]}
    assert all(r["name"] == names[r["topic"]] for r in rows if r["topic"] >= 0)  # one name, as everywhere
    assert [r["period"] for r in rows if r["topic"] == rows[0]["topic"]] == [str(y) for y in range(2010, 2020)]
    topics = json.loads(run_cli("topics", "--index", str(rising.path), "--json", check=True).stdout)
    for topic in topics["topics"]:
        held = sum(r["count"] for r in rows if r["topic"] == topic["id"])
        assert held == topic["size"] - ("p7" in topic["members"])
        assert sum(r["topic_share"] for r in rows if r["topic"] == topic["id"]) == pytest.approx(1, abs=1e-4)
    for period in {r["period"] for r in rows}:
        assert sum(r["share"] for r in rows if r["period"] == period) == pytest.approx(1, abs=1e-4)
    assert "1 papers left out" in result.stderr and "'p7'" in result.stderr
    protein = next(t["id"] for t in topics["topics"] if any("protein" in k for k in t["keywords"]))
    share = {r["period"]: r["share"] for r in rows if r["topic"] == protein}
    assert share["2019"] > share["2010"] and rows[0]["keywords"]
    early = next(r for r in rows if r["topic"] == protein and r["period"] == "2018")
    assert any(w in k for k in early["keywords"] for w in WORDS[2])


def test_the_table_by_class_csv_and_chart(rising, tmp_path):
    plot = tmp_path / "trend.html"
    result = run_cli("topics", "--index", str(rising.path), "--by", "venue", "--csv", str(tmp_path / "t.csv"),
                     "--plot", str(plot), "--png", check=True)
    assert "2 classes of 'venue': ICML, NeurIPS" in result.stdout and "of the period" in result.stdout
    with (tmp_path / "t.csv").open() as fh:
        table = list(csv.DictReader(fh))
    assert list(table[0]) == ["topic", "name", "label", "period", "count", "share", "topic_share", "keywords"]
    assert sum(int(r["count"]) for r in table) == 180
    page = plot.read_text()
    assert "plotly" in page and "<script src=" not in page  # plotly inlined: nothing to fetch
    assert (tmp_path / "trend.png").stat().st_size > 10_000


@pytest.mark.parametrize("args, phrases", [
    (["--over-time", "yaer"], ["no field 'yaer'", "its fields: venue, year"]),
    (["--over-time", "year", "--strict"], ["1 papers have no year or date", "'p7'", "missing"]),
    (["--over-time", "year", "--by", "venue"], ["not both"]),
    (["--csv", "x.csv"], ["go with --over-time"]),
    (["--over-time", "year", "--png"], ["--png draws the chart beside --plot"]),
])
def test_bad_requests_are_one_line(rising, args, phrases):
    result = run_cli("topics", "--index", str(rising.path), *args)
    lines = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert result.returncode == 2 and len(lines) == 1 and all(p in lines[0] for p in phrases), result.stderr


def test_a_cluster_gives_the_table_one_index_gives(rising, tmp_path):

    rising.split(tmp_path / "cluster", 2)
    result = run_cli("topics", "--index", str(tmp_path / "cluster"), "--over-time", "year", "--json",
                     check=True)
    rows = rows_of(result)
    topics = json.loads(run_cli("topics", "--index", str(tmp_path / "cluster"), "--json", check=True).stdout)
    for topic in topics["topics"]:
        held = sum(r["count"] for r in rows if r["topic"] == topic["id"])
        assert held == topic["size"] - ("p7" in topic["members"])  # p7 has no year
    assert sum(r["count"] for r in rows) == 179 and "'p7'" in result.stderr
    assert [r["period"] for r in rows if r["topic"] == rows[0]["topic"]] == [str(y) for y in range(2010, 2020)]
