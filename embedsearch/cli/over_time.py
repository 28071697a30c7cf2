"""``embedsearch topics --over-time FIELD`` (or ``--by FIELD``): the topic table per period or per class,
as text, JSON lines, CSV, and a chart."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ..errors import InputError
from ..disk.durable import durable_file
from ..disk.csvout import Writer
from .output import check_output

OverOpt = typer.Option(None, "--over-time", help="Each topic per period of this field (a year or ISO date).")
ByOpt = typer.Option(None, "--by", help="Each topic per value of this field (venue, category).")
BinsOpt = typer.Option(10, "--bins", help="Periods when a field has more than 40 distinct years.")
CsvOpt = typer.Option(None, "--csv", help="With --over-time/--by: the table as CSV.")
PlotOpt = typer.Option(None, "--plot", help="With --over-time/--by: a chart page (HTML).")
PngOpt = typer.Option(False, "--png", help="With --plot: a PNG beside it.")
StrictOpt = typer.Option(False, "--strict", help="A paper without a usable value is an error.")


def check_request(over: str | None, by: str | None, csv_file: Path | None, plot: Path | None, png: bool,
                  strict: bool, force: bool) -> None:
    """The over-time options checked together, and their outputs, before any work."""
    if over is not None and by is not None:
        raise InputError("give --over-time FIELD or --by FIELD, not both")
    if (csv_file or plot or png or strict) and over is None and by is None:
        raise InputError("--csv, --plot, --png and --strict go with --over-time FIELD or --by FIELD")
    check_outputs(csv_file, plot, png, force)


def check_outputs(csv_file: Path | None, plot: Path | None, png: bool, force: bool, sources=()) -> None:
    """Every output checked before any work (a PNG is written beside the page)."""
    if png and plot is None:
        raise InputError("--png draws the chart beside --plot FILE.html; give --plot")
    for option, value in (("--csv", csv_file), ("--plot", plot), ("--png", plot.with_suffix(".png") if png and plot
                                                                   else None)):
        if value is not None:
            check_output(value, option, sources, force)


def show(name: str, model, documents, field: str, by_class: bool, bins: int, level: int, as_json: bool,
         csv_file: Path | None, plot: Path | None, png: bool, strict: bool, force: bool, sources=()) -> None:
    """The table for ``model`` over ``documents`` (in the model's row order: an index's or a cluster's)."""
    from ..topics.over_time import over_time
    from ..topics.time_chart import write_html, write_png

    result = over_time(model, documents, field, bins, level, by_class, strict)
    if result.left_out:
        typer.echo(f"warning: {result.left_out:,} papers left out: no {'value' if by_class else 'year or date'} in "
                   f"{field!r} (first: {result.first_left_out!r}); --strict makes this an error", err=True)
    if csv_file is not None:
        with durable_file(csv_file.resolve(), newline="") as fh:
            out = Writer(fh)
            out.row(["topic", "name", "label", "period", "count", "share", "topic_share", "keywords"])
            out.rows([r.topic, r.name, r.label, r.period, r.count, round(r.share, 6), round(r.topic_share, 6),
                      "; ".join(r.keywords)] for r in result.rows)
    title = f"{name}: topics {'by' if by_class else 'over'} {field}"
    if plot is not None:
        write_html(result, plot, title)
        if png:
            write_png(result, plot.with_suffix(".png"), title)
    if as_json:
        for row in result.rows:
            typer.echo(json.dumps(row.to_json(), ensure_ascii=False))
        return
    typer.echo(f"{len(result.periods)} {'classes' if by_class else 'periods'} of {field!r}: "
               f"{', '.join(result.periods[:12])}{' ...' if len(result.periods) > 12 else ''}")
    for topic in sorted({r.topic for r in result.rows}, key=lambda t: (t < 0, t)):
        rows = [r for r in result.of(topic) if r.count]
        if not rows:
            continue
        typer.echo(f"\ntopic {topic}: {rows[0].name}")
        for r in rows:
            words = f"  {', '.join(r.keywords)}" if r.keywords else ""
            typer.echo(f"  {r.period:>12}  {r.count:>5}  {r.share:6.1%} of the period  {r.topic_share:6.1%} of the "
                       f"topic{words}")
