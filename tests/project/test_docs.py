"""The README and docs/ a newcomer reads (issue 65): the README stays short, its links lead somewhere, and
every `embedsearch` command line in it and in docs/ names a real command with real flags, parsed by the
CLI's own parser (typer's click) without running it: an unknown command or flag fails the test in the quick
tier. ``test_docs_run.py`` runs every one of those lines."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer
from typer.exceptions import TyperException

from embedsearch.cli import app

from docs_world import PAGES, REPO, command_lines, words

ALL = [(page, n, line) for page in PAGES for n, line in command_lines(page)]


def parse(args: list[str]) -> None:
    """Resolve ``args`` to a command as the CLI would and parse its options; raise on an unknown one (typer
    carries its own click: its commands and errors are typer's)."""
    command = typer.main.get_command(app)
    ctx = command.make_context("embedsearch", list(args))
    while hasattr(command, "resolve_command"):  # a group: on to the subcommand
        rest = [*ctx._protected_args, *ctx.args]
        if not rest:
            return
        name, command, rest = command.resolve_command(ctx, rest)
        try:
            ctx = command.make_context(name, rest, parent=ctx)
        except TyperException as exc:  # a file the example names need not exist here
            if type(exc).__name__ != "BadParameter" or "does not exist" not in str(exc):
                raise


def anchors(page: Path) -> set[str]:
    """The anchors GitHub makes of a page's headings: lower case, punctuation dropped, spaces as hyphens."""
    return {re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
            for line in page.read_text().splitlines() if line.startswith("#")}


def test_the_readme_is_short_and_its_links_lead_somewhere():
    readme = (REPO / "README.md").read_text()
    assert len(readme.encode()) <= 15_000, "README.md is over 15 KB: move detail to docs/"
    assert readme.startswith("# embedsearch\n\n```bash\nmake demo") and "make test" in readme.split("```")[1]
    for page in PAGES:
        for target, anchor in re.findall(r"\]\(([^)#\s]+)(?:#([^)]*))?\)", page.read_text()):
            if not target.startswith(("http:", "https:", "mailto:")):
                assert (page.parent / target).exists(), f"{page.name} links to {target}, which is not there"
                if anchor:
                    assert anchor in anchors(page.parent / target), f"{page.name} links to {target}#{anchor}: no such heading"
    assert len(ALL) >= 60  # the pages hold the examples: the test reads them all


@pytest.mark.parametrize("page, number, line", ALL, ids=[f"{p.name}:{n}" for p, n, _ in ALL])
def test_every_command_line_names_a_real_command_and_real_flags(page, number, line):
    try:
        parse(words(line))
    except TyperException as exc:
        pytest.fail(f"{page.name}, line {number}: {line}\n{exc}")


UNITS = r"ms|s|GB|MB|KB|GiB|MiB|%|x|bytes|minutes|min|hours|abstracts/s|searches/s"
FIGURE = re.compile(rf"(?<![\w.:/#-])(\d+(?:,\d{{3}})*(?:\.\d+)?)(?:\s?({UNITS}))?(?![\w-])")
NOT_MEASURED = {"2.93": "the largest affinity the harmonic sum of the top 10 can give",
                "4,000,000 bytes": "the service's body limit"}


def figures(page: Path) -> list[tuple[str, float, int, str]]:
    """The prose's figures (code blocks and `code` left out): a decimal, or a number with a unit, as
    (text, value, decimals, unit)."""
    text = re.sub(r"`[^`]*`", "", re.sub(r"```.*?```", "", page.read_text(), flags=re.S))
    out = []
    for match in FIGURE.finditer(text):
        number, unit = match.group(1), match.group(2) or ""
        if "." in number or unit:
            out.append((match.group(0).strip(), float(number.replace(",", "")),
                        len(number.partition(".")[2]), unit))
    return out


def test_every_figure_in_the_prose_is_held_by_a_result_file():
    """Issue 65: no figure in the README or docs/ that no file of benchmarks/results holds (at the figure's
    precision; a percentage may be held as a fraction, seconds as milliseconds and back, GB as MB), so a figure
    cannot drift from its measurement unseen. Settings that look like figures are named in NOT_MEASURED."""
    held = sorted({float(n.replace(",", "")) for f in (REPO / "benchmarks" / "results").glob("*.json")
                   for n in re.findall(r"\d+(?:,\d{3})*(?:\.\d+)?", f.read_text())})

    def holds(value: float, decimals: int) -> bool:
        half = 0.5 * 10 ** -decimals + 1e-9
        return any(value - half <= h <= value + half for h in held)

    missing = []
    for page in PAGES:
        for text, value, decimals, unit in figures(page):
            scaled = {"%": [(value / 100, decimals + 2)], "s": [(value * 1000, max(0, decimals - 3))],
                      "ms": [(value / 1000, decimals + 3)], "GB": [(value * 1000, max(0, decimals - 3))]}
            if text not in NOT_MEASURED and not any(holds(v, d) for v, d in [(value, decimals), *scaled.get(unit, [])]):
                missing.append(f"{page.name}: {text}")
    assert not missing, "figures no result file holds (measure them, or correct them from the result file):\n" + \
        "\n".join(missing)
