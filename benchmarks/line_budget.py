"""Issue #32's line budget: the lines of ``embedsearch/**/*.py`` per package, and who wrote them.

The issue counts apart the features of the issues open beside it. Reviewers, topics over time and the record
edge's field kinds are in their own modules (``APART``). The lines that the record edge (#36, the field
contract) and the page's second round (#35) wrote into shared modules, where those changes to existing
behaviour belong, are found by ``git blame``. Every other line counts against the budget: the code before the
issue was filed and all of the one-engine work. Blame credits a line to the last commit that changed it
(``-w -M -C``: not for whitespace or a move), so a feature line the engine work later touched counts against
the budget.

    python -m benchmarks.line_budget [--rev HEAD]
"""

from __future__ import annotations

import argparse
import subprocess
from collections import Counter

BUDGET = 10_900
FILED_AT = "7a74a3d"  # embedsearch/ at 11,668 lines, as the issue measured it
APART = ("embedsearch/reviewers/", "embedsearch/cli/reviewers.py", "embedsearch/serve/reviewers.py",
         "embedsearch/topics/over_time.py", "embedsearch/topics/periods.py", "embedsearch/topics/time_chart.py",
         "embedsearch/cli/over_time.py", "embedsearch/corpus/kinds.py")
# Commits of other open issues whose lines in shared modules count apart (each one commit of that issue alone).
OTHER_ISSUES = {
    "2cc6a37": "#36, the record edge (a field contract per index)",
    "cd67a02": "#33, reviewers", "981789e": "#33, reviewers",
    "8373f69": "#34, topics over time", "2b6dad5": "#34, topics over time",
    **{c: "#35, the page round two" for c in ("afa3b6b", "36e0cc2", "32c1551", "070ac55", "e2c0e99", "affab35",
                                                "a6f93cb", "7075cf7")},
    "66ad093": "#35, the page round two",  # paging and the schema's rules; its retrieval/ lines are #32's
}
ENGINE_PARTS_OF = {"66ad093": "embedsearch/retrieval/"}


def git(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout


def files(rev: str) -> list[str]:
    return sorted(f for f in git("ls-tree", "-r", "--name-only", rev, "embedsearch").splitlines() if f.endswith(".py"))


def authors(rev: str, path: str) -> Counter[str]:
    """Lines of ``path`` at ``rev`` per commit (abbreviated to 7 characters) that last changed them."""
    out = Counter()
    for line in git("blame", "-w", "-M", "-C", "--porcelain", rev, "--", path).splitlines():
        head = line.split(" ")
        if len(head[0]) == 40 and len(head) >= 3 and head[2].isdigit():
            out[head[0][:7]] += 1
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default="HEAD")
    rev = parser.parse_args().rev
    per_package, apart, other = Counter(), Counter(), Counter()
    for path in files(rev):
        lines = git("show", f"{rev}:{path}").count("\n")
        package = path.split("/")[1] if path.count("/") > 1 else "(top level)"
        if path.startswith(APART):
            apart[path] = lines
            continue
        per_package[package] += lines
        for commit, count in authors(rev, path).items():
            issue = OTHER_ISSUES.get(commit)
            if issue and not path.startswith(ENGINE_PARTS_OF.get(commit, "\0")):
                other[issue] += count
    counted = sum(per_package.values())
    filed = sum(git("show", f"{FILED_AT}:{p}").count("\n") for p in files(FILED_AT))
    print(f"embedsearch/ when the issue was filed ({FILED_AT}): {filed:,} lines")
    print(f"embedsearch/ at {git('rev-parse', '--short', rev).strip()}: {counted + sum(apart.values()):,} lines")
    print("\n| package | lines |\n|---|---:|")
    for package, lines in per_package.most_common():
        print(f"| {package} | {lines:,} |")
    print(f"| **counted** | **{counted:,}** |")
    print("\n| apart: in their own modules | lines |\n|---|---:|")
    for path, lines in sorted(apart.items()):
        print(f"| {path} | {lines:,} |")
    print("\n| apart: other issues' lines in shared modules (git blame) | lines |\n|---|---:|")
    for issue, lines in other.most_common():
        print(f"| {issue} | {lines:,} |")
    engine = counted - sum(other.values())
    print(f"\nagainst the budget: {counted:,} - {sum(other.values()):,} = {engine:,} "
          f"({'within' if engine <= BUDGET else 'over'} {BUDGET:,} by {abs(BUDGET - engine):,})")


if __name__ == "__main__":
    main()
