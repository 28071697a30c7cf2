"""Commands for program chairs: ``affinity`` scores every submission against every reviewer's own
publications, ``assign`` turns scores into an assignment within loads and conflicts."""

from __future__ import annotations

import json
import os
from pathlib import Path

import typer

from ..errors import InputError
from ..disk.durable import durable_file
from .app import ForceOpt, app, friendly

OutOpt = typer.Option(None, "--out", help="CSV to write: submission,reviewer,score.")


def _target(out: Path | None, force: bool, as_json: bool, inputs: list[Path | None]) -> Path | None:
    """Where ``--out`` may write: never over one of the command's own inputs, ``--force`` or not."""
    from .output import check_output

    if out is None and not as_json:
        raise InputError("give --out FILE.csv, --json, or both")
    if out is not None and any(p is not None and p.exists() and os.path.realpath(p) == os.path.realpath(out)
                               for p in inputs):
        raise InputError(f"--out {out} is one of this command's inputs; name another file")
    return None if out is None else check_output(out, "--out", (), force)


@app.command()
@friendly
def affinity(reviewers: Path = typer.Option(..., "--reviewers", help="Archives folder (~ID.jsonl per reviewer) or a "
                                                                      "file of publications with a 'reviewer' field."),
             submissions: list[Path] = typer.Option(..., "--submissions", help="Index or cluster folder, "
                                                                              "submissions.json, or corpus files."),
             every: bool = typer.Option(False, "--all", help="Every pair, not only each submission's best."),
             top: int = typer.Option(50, "--top", help="Reviewers kept per submission (without --all)."),
             out: Path | None = OutOpt, as_json: bool = typer.Option(False, "--json", help="One object per pair, "
                                                                                          "with its evidence."),
             conflicts: Path | None = typer.Option(None, "--conflicts", help="CSV of submission,reviewer conflicts."),
             coauthor_years: int = typer.Option(3, "--coauthor-years", help="Co-authors of this many recent years "
                                                                            "conflict."),
             model: str | None = typer.Option(None, "--model", help="For corpus files (an index brings its own)."),
             profiles: Path | None = typer.Option(None, "--profiles", help="Folder of the publications' index."),
             skip_invalid: bool = typer.Option(False, "--skip-invalid"), force: bool = ForceOpt) -> None:
    """Affinity of each submission to each reviewer, from the reviewers' own publications."""
    from ..embedding.settings import DEFAULT_MODEL
    from ..reviewers import AffinitySettings, ConflictSettings, Matcher, Submissions
    from ..reviewers.conflicts import read_pairs
    from ..reviewers.scores import write

    settings = AffinitySettings(keep=top)
    rule = ConflictSettings(years=coauthor_years)
    target = _target(out, force, as_json, [reviewers, conflicts, *submissions])
    if conflicts is not None and not conflicts.is_file():
        raise InputError(f"--conflicts {conflicts}: no such file")
    subs = Submissions.read(submissions, model or DEFAULT_MODEL, skip_invalid)
    if model is not None and subs.model != model:
        raise InputError(f"--model {model}: the submissions index was built with {subs.model!r}; leave --model out")
    matcher = Matcher.open(reviewers, subs.model, profiles, settings, rule, progress=True)
    listed = read_pairs(conflicts, subs.ids, matcher.reviewers.ids) if conflicts else {}
    table = matcher.table(subs, listed)
    keep = None if every else top
    if target is not None:
        with durable_file(target, newline="") as fh:
            written = write(fh, table.pairs(keep, evidence=0))
        typer.echo(f"wrote {written:,} pairs to {out}", err=True)
    if as_json:
        for pair in table.pairs(keep):
            typer.echo(json.dumps(pair.to_json(), ensure_ascii=False))
    typer.echo(f"scored {len(subs.documents):,} submissions against {len(matcher.reviewers):,} reviewers "
               f"({len(matcher.reviewers.publications):,} publications); {len(table.conflicts):,} conflicted pairs",
               err=True)


@app.command()
@friendly
def assign(scores: Path = typer.Option(..., "--scores", help="CSV from `embedsearch affinity`."),
           per_paper: int = typer.Option(3, "--per-paper", help="Reviewers per submission."),
           max_load: int = typer.Option(..., "--max-load", help="Most submissions per reviewer."),
           min_load: int = typer.Option(0, "--min-load", help="Fewest submissions per reviewer."),
           conflicts: Path | None = typer.Option(None, "--conflicts", help="CSV of submission,reviewer conflicts."),
           objective: str = typer.Option("total", "--objective", help="total (most affinity) or fair (the weakest "
                                                                      "pair as strong as possible, then the total)."),
           alternates: int = typer.Option(0, "--alternates", help="Best unassigned reviewers listed per submission."),
           out: Path | None = OutOpt, as_json: bool = typer.Option(False, "--json", help="The summary, pairs and "
                                                                                       "alternates as one object."),
           force: bool = ForceOpt) -> None:
    """Assign reviewers to submissions within loads and conflicts (min-cost flow, OR-Tools)."""
    from ..reviewers import AssignSettings
    from ..reviewers import assign as solve
    from ..reviewers.conflicts import read_pairs
    from ..reviewers.scores import read

    settings = AssignSettings(per_paper, max_load, min_load, objective, alternates)
    target = _target(out, force, as_json, [scores, conflicts])
    if not scores.is_file():
        raise InputError(f"--scores {scores}: no such file")
    table = read(scores)
    if conflicts is not None:
        if not conflicts.is_file():
            raise InputError(f"--conflicts {conflicts}: no such file")
        table = table.with_conflicts(read_pairs(conflicts, table.submissions, table.reviewers))
    result = solve(table, settings)
    if target is not None:
        with durable_file(Path(os.path.realpath(target)), newline="") as fh:
            fh.write("submission,reviewer,score\n")
            fh.writelines(f"{s},{r},{v:.6f}\n" for s, r, v in result.pairs)
    if as_json:
        typer.echo(json.dumps(result.to_json(), ensure_ascii=False))
        return
    s = result.summary
    typer.echo(f"assigned {len(result.pairs):,} reviews: {s['submissions']:,} submissions x {s['per_paper']}, "
               f"{s['reviewers']:,} reviewers within loads {s['min_load']}-{s['max_load']} ({s['objective']})", err=True)
    typer.echo(f"affinity: mean per submission {s['mean_affinity']:.3f}, lowest submission mean "
               f"{s['lowest_submission_mean']:.3f}, weakest pair {s['lowest_pair']:.3f}; "
               f"{s['got_their_best_reviewer']:,} submissions got their best reviewer", err=True)
    typer.echo(f"loads: {', '.join(f'{n} reviewer(s) with {k}' for k, n in s['load_histogram'].items())}", err=True)
