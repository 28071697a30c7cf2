"""Metadata filter cost at 1,000,000 rows: the mask computed row by row (each value converted to Python
and compared), once per distinct value (the shipped path), and a repeated filter (kept per metadata
file).

    python benchmarks/filters_bench.py   (about 1 minute)
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import save, table  # noqa: E402

from embedsearch.corpus import Document  # noqa: E402
from embedsearch.retrieval import filters as flt

ROWS = 1_000_000


def main() -> None:
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    years, venues = rng.integers(1990, 2027, ROWS), rng.choice(["NeurIPS", "ICML", "ICLR", "ACL", "CVPR"], ROWS)
    names = [f"author{i}" for i in range(50_000)]
    docs = [Document(str(i), "x", None, {"year": int(years[i]), "venue": str(venues[i]),
                                         "authors": [names[j] for j in rng.integers(0, len(names), 3)]})
            for i in range(ROWS)]
    folder = Path(tempfile.mkdtemp())
    flt.write(folder, docs)
    rows = []
    for expressions in (["year>=2020"], ["venue=NeurIPS"], ["authors=author7"], ["year>=2020", "venue!=ICML"]):
        filters = tuple(flt.Filter.parse(e) for e in expressions)
        start = time.perf_counter()
        table_ = pq.read_table(folder / flt.FILE, columns=sorted({f.field for f in filters}))
        slow = np.ones(ROWS, dtype=bool)
        for f in filters:
            slow &= f.mask(table_.column(f.field).to_pylist())
        row_by_row = time.perf_counter() - start
        start = time.perf_counter()
        mask = flt.allowed_rows(folder, filters)
        first = time.perf_counter() - start
        start = time.perf_counter()
        flt.allowed_rows(folder, filters)
        again = time.perf_counter() - start
        assert np.array_equal(mask, slow)
        rows.append([" and ".join(expressions), f"{int(mask.sum()):,}", f"{row_by_row * 1000:.0f} ms",
                     f"{first * 1000:.0f} ms", f"{again * 1000:.2f} ms", f"{row_by_row / first:.0f}x"])
        print(rows[-1], flush=True)
    print(table(["filter", "rows passing", "row by row", "shipped, first", "shipped, repeated",
                 "first vs row by row"], rows))
    save("filters_bench", {"rows": rows})


if __name__ == "__main__":
    main()
