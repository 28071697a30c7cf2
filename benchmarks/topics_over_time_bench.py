"""Topics over time on the 3,070 dated papers of the reviewer-expertise data set (``papers.jsonl``: title,
abstract, year 1955-2022, authors): the five topics whose share changed most between 2010-2014 and
2018-2022, with their keywords in both periods (the topic labeller within each period's papers).

Run: .venv/bin/python -m benchmarks.topics_over_time_bench   (about 5 minutes the first time: embedding,
then one topic fit; both are cached in the index under benchmarks/out)
"""

from __future__ import annotations

from benchmarks.common import OUT, SHARED, save, table
from embedsearch import Document, Index
from embedsearch.topics.over_time import over_time

ERAS = {"2010-2014": range(2010, 2015), "2018-2022": range(2018, 2023)}


def main() -> None:
    folder = OUT / "papers-3070"
    try:
        index = Index.load(folder)
    except Exception:  # noqa: BLE001  (not built yet, or by another version)
        index = Index.from_sources([SHARED / "eval" / "reviewer_match" / "papers.jsonl"], folder, progress=True)
    model = index.topics()
    docs = index.documents.get([index.documents.row_of[i] for i in model.ids])
    by_year = over_time(model, docs, "year", bins=10)
    era = [Document(d.id, d.text, d.title, {"era": next((e for e, years in ERAS.items()
                                                          if d.metadata.get("year") in years), None)}) for d in docs]
    result = over_time(model, era, "era", by_class=True)
    rows = {}
    for r in result.rows:
        if r.topic >= 0:
            rows.setdefault(r.topic, {})[r.period] = r
    change = sorted(rows, key=lambda t: -abs(rows[t]["2018-2022"].share - rows[t]["2010-2014"].share))[:5]
    lines = [[t, rows[t]["2010-2014"].label, f"{rows[t]['2010-2014'].share:.1%} ({rows[t]['2010-2014'].count})",
              f"{rows[t]['2018-2022'].share:.1%} ({rows[t]['2018-2022'].count})",
              ", ".join(rows[t]["2010-2014"].keywords), ", ".join(rows[t]["2018-2022"].keywords)] for t in change]
    print(f"{len(index):,} papers, {len(model.topics())} topics, {len(model.unassigned())} unassigned; per year: "
          f"{len(by_year.periods)} periods ({', '.join(by_year.periods)}), {by_year.left_out} without a year")
    print(table(["topic", "label", "share 2010-2014", "share 2018-2022", "keywords 2010-2014", "keywords 2018-2022"],
                lines))
    save("topics_over_time", {"rows": lines, "periods": list(by_year.periods)})


if __name__ == "__main__":
    main()
