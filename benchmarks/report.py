"""Renders ``benchmarks/README.md`` from the committed result files (``benchmarks/results/*.json``): the
targets table, then one table per area, each row a benchmark's headline with its date, commit and links to
its result file and its dated write-up (``HISTORY.md``). ``tests/project/test_benchmark_report.py`` fails when the
committed README differs from what this renders.

    python -m benchmarks.report            # writes benchmarks/README.md
    python -m benchmarks.report --check    # exit 1 if it would change
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
README = HERE / "README.md"
STATUS_CHARS = 130

INTRO = """# Benchmarks

Every figure here was measured on this project's machine (2 cores, 24 GiB, no GPU) unless marked *published*,
and lives in a result file under [`results/`](results/). A result file holds the command, the date, the commit,
the machine and the figures. This page is rendered from those files by `python -m benchmarks.report`, and a
test fails when the two differ. Dated write-ups (what was tried, what bounds a missed target) are in
[HISTORY.md](HISTORY.md). Speed and memory targets live here, never in timed unit tests.

## How to run

```bash
make bench                                      # the quick set, a few minutes
make .venv/.bench-installed                     # the comparison libraries some benchmarks use (txtai, SemHash)
.venv/bin/python -m benchmarks.NAME [options]   # any one, from the repository root: writes results/NAME.json
.venv/bin/python -m benchmarks.report           # this page, from the result files
```

Benchmarks that take `--before REV` (`segments_bench`, `merge_memory_bench`, `cold_bench`, `serve_ab_bench`) run
that commit's library from a git worktree, alternating with this checkout's. Data comes from `../shared/eval/`
and is never copied in.
"""


def short(text: str, limit: int) -> str:
    """``text`` on one line, cut at ``limit`` characters (a bold run it cuts is closed)."""
    text = " ".join(str(text).replace("|", "\\|").split())
    if len(text) <= limit:
        return text
    cut = text[:limit - 1].rstrip()
    return cut + ("**" if cut.count("**") % 2 else "") + "…"


def render() -> str:
    """The page, from ``results/``."""
    targets = json.loads((RESULTS / "targets.json").read_text())
    results = sorted((json.loads(p.read_text()) for p in RESULTS.glob("*.json") if p.name != "targets.json"),
                     key=lambda r: (r.get("order", 10_000), r["name"]))
    out = [INTRO, "## Targets at a glance\n", "| target | status | where |", "|---|---|---|"]
    for target, status, where in targets["rows"]:
        out.append(f"| {short(target, 90)} | {short(status, STATUS_CHARS)} | {short(where, 40)} |")
    out.append("\nThe full status of each target: [`results/targets.json`](results/targets.json).\n")
    areas: dict[str, list[dict]] = {}
    for result in results:
        areas.setdefault(result["area"], []).append(result)
    for area, members in areas.items():
        out += [f"## {area}\n", "| benchmark | headline | measured | data |", "|---|---|---|---|"]
        for r in members:
            when = " ".join(x for x in (r.get("date") or "", f"`{r['commit']}`" if r.get("commit") else "") if x)
            links = f"[{r['name']}.json](results/{r['name']}.json)"
            title = short(r["title"], 70)
            title = f"[{title}]({r['write_up'].removeprefix('../')})" if r.get("write_up") else title
            out.append(f"| {title} | {short(r.get('headline', ''), 100)} | {when or '-'} | {links} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if README.md differs from the render")
    args = parser.parse_args()
    page = render()
    if args.check:
        sys.exit(0 if README.exists() and README.read_text() == page else 1)
    README.write_text(page)
    print(f"wrote {README} ({len(page.encode()):,} bytes) from {len(list(RESULTS.glob('*.json')))} result files")


if __name__ == "__main__":
    main()
