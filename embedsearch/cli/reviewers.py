"""Commands for program chairs: ``affinity`` scores every submission against every reviewer's own
publications, ``assign`` turns scores into an assignment within loads and conflicts."""

from __future__ import annotations

import json
import os
from pathlib import Path

import typer

from ..errors import InputError
from ..disk.durable import durable_file
from ..disk.csvout import Writer
from .app import ForceOpt, app, friendly, one_line

OutOpt = typer.Option(None, "--out", help="CSV to write: submission,reviewer,score.")


def output_target(out: Path | None, force: bool, as_json: bool, inputs: list[Path | None]) -> Path | None:
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
    from ..reviewers.scores import reviewer_name, write

    settings = AffinitySettings(keep=top)
    rule = ConflictSettings(years=coauthor_years)
    target = output_target(out, force, as_json, [reviewers, conflicts, *submissions])
    if conflicts is not None and not conflicts.is_file():
        raise InputError(f"--conflicts {conflicts}: no such file")
    subs = Submissions.read(submissions, model or DEFAULT_MODEL, skip_invalid)
    if model is not None and subs.model != model:
        raise InputError(f"--model {model}: the submissions index was built with {subs.model!r}; leave --model out")
    matcher = Matcher.open(reviewers, subs.model, profiles, settings, rule, progress=True, precision=subs.precision)
    listed = read_pairs(conflicts, subs.ids, matcher.reviewers.ids) if conflicts else {}
    table = matcher.table(subs, listed)
    keep = None if every else top
    if target is not None:
        titles = {d.id: (d.readable().title or d.readable().first_sentence()) for d in subs.documents}
        names = {r: reviewer_name(r) for r in matcher.reviewers.ids}
        with durable_file(target, newline="") as fh:
            written = write(fh, table.pairs(keep, evidence=0), titles, names)
        typer.echo(f"wrote {written:,} pairs to {out}", err=True)
    if as_json:
        for pair in table.pairs(keep):
            typer.echo(json.dumps(pair.to_json(), ensure_ascii=False))
    typer.echo(f"scored {len(subs.documents):,} submissions against {len(matcher.reviewers):,} reviewers "
               f"({len(matcher.reviewers.publications):,} publications); {len(table.conflicts):,} conflicted pairs; "
               f"{settings.scale()}", err=True)


@app.command()
@friendly
def assign(scores: Path = typer.Option(..., "--scores", help="CSV from `embedsearch affinity`."),
           per_paper: int = typer.Option(3, "--per-paper", help="Reviewers per submission."),
           max_load: int = typer.Option(..., "--max-load", help="Most submissions per reviewer."),
           min_load: int = typer.Option(0, "--min-load", help="Fewest submissions per reviewer."),
           conflicts: Path | None = typer.Option(None, "--conflicts", help="CSV of submission,reviewer conflicts."),
           objective: str = typer.Option("total", "--objective", help="total (most affinity), fair (the weakest "
                                                                      "pair as strong as possible, then the total) or "
                                                                      "randomized (a draw within probability caps)."),
           max_probability: float = typer.Option(0.5, "--max-probability", help="randomized: no pair more likely."),
           perturbation: float = typer.Option(0.0, "--perturbation", help="randomized: maximise score*(x - B*x^2) "
                                                                          "to spread probability (NeurIPS 2024: 0.1)."),
           seed: int = typer.Option(0, "--seed", help="randomized: which draw (the same seed, the same draw)."),
           pair_limits: Path | None = typer.Option(None, "--pair-limits", help="randomized: CSV submission,reviewer,"
                                                                               "max_probability (rounded down to the "
                                                                               "probability unit)."),
           marginals: Path | None = typer.Option(None, "--marginals", help="randomized: CSV to write each pair's "
                                                                           "probability."),
           bids: Path | None = typer.Option(None, "--bids", help="CSV submission,reviewer,bid (Very High ... Very Low "
                                                                 "or -1..1)."),
           weights: str = typer.Option("affinity=1,bid=1", "--weights", help="The score: a weighted sum of affinity "
                                                                             "and bid."),
           min_score: float | None = typer.Option(None, "--min-score", help="No pair below this score unless a "
                                                                             "submission cannot be covered otherwise."),
           reviewers_info: Path | None = typer.Option(None, "--reviewers-info", help="CSV reviewer,seniority,"
                                                                                     "institution,... for the rules."),
           at_least: list[str] = typer.Option([], "--at-least", help="Per submission, e.g. seniority:senior=1 (at "
                                                                     "least one senior reviewer); repeatable."),
           at_most: list[str] = typer.Option([], "--at-most", help="Per submission, e.g. institution=1 (no two "
                                                                   "reviewers of one institution); repeatable."),
           time_limit: float = typer.Option(60.0, "--time-limit", help="Seconds CP-SAT may take for the rules."),
           alternates: int = typer.Option(0, "--alternates", help="Best unassigned reviewers listed per submission."),
           out: Path | None = OutOpt, as_json: bool = typer.Option(False, "--json", help="The summary, pairs and "
                                                                                       "alternates as one object."),
           force: bool = ForceOpt) -> None:
    """Assign reviewers to submissions within loads and conflicts (min-cost flow, OR-Tools)."""
    from ..reviewers import AssignSettings
    from ..reviewers import assign as solve
    from ..reviewers import bids as extra
    from ..reviewers.conflicts import read_pairs
    from ..reviewers.scores import read
    from .output import check_output

    settings = AssignSettings(per_paper, max_load, min_load, objective, alternates, max_probability, perturbation,
                              seed, min_score)
    if objective != "randomized" and (pair_limits or marginals):
        raise InputError("--pair-limits and --marginals belong to --objective randomized")
    from ..reviewers import attributes

    rules = [attributes.parse(t, True) for t in at_least] + [attributes.parse(t, False) for t in at_most]
    if rules and reviewers_info is None:
        raise InputError("--at-least/--at-most need --reviewers-info FILE.csv (reviewer and the fields they name)")
    inputs = [scores, conflicts, bids, pair_limits, reviewers_info]
    target = output_target(out, force, as_json, inputs)
    written_marginals = None if marginals is None else _side_output(marginals, force, inputs + [out], check_output)
    for flag, path in (("--scores", scores), ("--conflicts", conflicts), ("--bids", bids),
                       ("--pair-limits", pair_limits), ("--reviewers-info", reviewers_info)):
        if path is not None and not path.is_file():
            raise InputError(f"{flag} {path}: no such file")
    weight = extra.weights(weights)
    table = read(scores)
    if conflicts is not None:
        table = table.with_conflicts(read_pairs(conflicts, table.submissions, table.reviewers))
    notes = []
    if bids is not None:
        values, outside = extra.read_pair_values(bids, table, "bid", extra.bid_value, "--bids")
        table = extra.aggregate(table, values, weight)
        notes.append(f"score = {extra.formula(weight)}" + (f"; {outside:,} bid(s) on pairs not in --scores ignored "
                                                            "(write every pair with `affinity --all`)" if outside else ""))
    caps = None
    if pair_limits is not None:
        import numpy as np

        limits, outside = extra.read_pair_values(pair_limits, table, "max_probability", extra.probability,
                                                 "--pair-limits")
        caps = np.where(np.isnan(limits), max_probability, limits)
    if len(table.score) > 200_000:
        typer.echo(f"solving over {len(table.score):,} candidate pairs ({objective})...", err=True)
    constraints = None
    if rules:
        info = attributes.read_info(reviewers_info, {r.field for r in rules})
        constraints = attributes.Constraints(tuple(rules), info, time_limit)
    result = solve(table, settings, caps, progress=True, constraints=constraints)
    if bids is not None:
        result.summary["score"] = extra.formula(weight)
    if target is not None:
        with durable_file(Path(os.path.realpath(target)), newline="") as fh:  # titles and names as --scores gave them
            Writer(fh).rows([("submission", "reviewer", "score", "submission title", "reviewer name"),
                             *((s, r, round(v, 6), table.titles.get(s, ""), table.names.get(r, ""))
                               for s, r, v in result.pairs)])
    if written_marginals is not None:
        with durable_file(Path(os.path.realpath(written_marginals)), newline="") as fh:
            Writer(fh).rows([("submission", "reviewer", "probability"),
                             *((s, r, round(p, 6)) for s, r, p in result.marginals)])
    if as_json:
        typer.echo(json.dumps(result.to_json(), ensure_ascii=False))
        return
    _report(result.summary, notes)
    if result.alternates:
        typer.echo("alternates: each submission's best unassigned reviewers, by score (the scale of --scores), for "
                   "when one declines")
        for submission, alternates in result.alternates.items():
            title = table.titles.get(submission)
            typer.echo(f"  {one_line(submission)}{f' ({one_line(title[:60])})' if title else ''}: " +
                       (", ".join(f"{one_line(r)}{f' [{table.names[r]}]' if table.names.get(r) else ''} ({v:.3f})"
                                  for r, v in alternates) or "none left within the loads"))


def _side_output(path: Path, force: bool, inputs: list[Path | None], check_output) -> Path:
    """A second file a command writes: never one of its inputs or its --out."""
    if any(p is not None and p.exists() and os.path.realpath(p) == os.path.realpath(path) for p in inputs):
        raise InputError(f"--marginals {path} is one of this command's inputs or --out; name another file")
    return check_output(path, "--marginals", (), force)


def _report(s: dict, notes: list[str]) -> None:
    typer.echo(f"assigned {s['submissions'] * s['per_paper']:,} reviews: {s['submissions']:,} submissions x "
               f"{s['per_paper']}, {s['reviewers']:,} reviewers within loads {s['min_load']}-{s['max_load']} "
               f"({s['objective']})", err=True)
    for note in notes:
        typer.echo(note, err=True)
    typer.echo(f"affinity: mean per submission {s['mean_affinity']:.3f}, lowest submission mean "
               f"{s['lowest_submission_mean']:.3f}, weakest pair {s['lowest_pair']:.3f}; "
               f"{s['got_their_best_reviewer']:,} submissions got their best reviewer", err=True)
    if s["objective"] == "randomized":
        typer.echo(f"randomized (seed {s['seed']}): expected total {s['expected_total']:.3f} = "
                   f"{s['expected_of_optimum']:.1%} of the deterministic optimum {s['deterministic_optimum']:.3f}; "
                   f"this draw {s['sampled_of_optimum']:.1%}; largest pair probability "
                   f"{s['largest_pair_probability']:.3f}; {s['support_pairs']:,} pairs could be drawn", err=True)
    if s.get("rules"):
        typer.echo(f"rules {', '.join(s['rules'])} hold on every submission ({s['solver']}, "
                   f"{'optimal' if s['optimal'] else 'optimality gap at most ' + format(s['optimality_gap'], '.2%')})",
                   err=True)
    if s.get("below_min_score"):
        low = s["below_min_score"]
        typer.echo(f"{len(low):,} submission(s) needed a pair below --min-score: {', '.join(low[:5])}"
                   f"{' ...' if len(low) > 5 else ''}", err=True)
    typer.echo(f"loads: {', '.join(f'{n} reviewer(s) with {k}' for k, n in s['load_histogram'].items())}", err=True)
