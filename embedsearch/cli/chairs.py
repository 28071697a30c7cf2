"""``assign-sac``: senior area chairs for area chairs, after ``assign`` has given each submission its AC."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import typer

from ..disk.durable import durable_file
from ..errors import InputError
from .app import ForceOpt, app, friendly
from .reviewers import output_target


@app.command("assign-sac")
@friendly
def assign_sac(scores: Path = typer.Option(..., "--scores", help="SACs' scores on the submissions: CSV from "
                                                                 "`embedsearch affinity --all` with the SACs as "
                                                                 "reviewers."),
               papers: Path = typer.Option(..., "--papers", help="The ACs' assignment: CSV submission,reviewer from "
                                                                 "`embedsearch assign --per-paper 1`."),
               max_load: int = typer.Option(..., "--max-load", help="Most ACs per SAC."),
               min_load: int = typer.Option(0, "--min-load", help="Fewest ACs per SAC."),
               per_ac: int = typer.Option(1, "--per-ac", help="SACs per AC."),
               conflicts: Path | None = typer.Option(None, "--conflicts", help="CSV submission,reviewer of SAC "
                                                                               "conflicts with submissions."),
               ac_conflicts: Path | None = typer.Option(None, "--ac-conflicts", help="CSV ac,sac of direct "
                                                                                     "conflicts."),
               objective: str = typer.Option("total", "--objective", help="total or fair, as for `assign`."),
               out: Path | None = typer.Option(None, "--out", help="CSV to write: ac,sac,score."),
               as_json: bool = typer.Option(False, "--json", help="The summary and pairs as one object."),
               force: bool = ForceOpt) -> None:
    """Assign senior area chairs to area chairs by the ACs' papers; a SAC who conflicts with any of an AC's
    papers never oversees that AC."""
    from ..reviewers import AssignSettings, assign, chairs
    from ..reviewers.conflicts import read_pairs
    from ..reviewers.scores import read

    if objective not in ("total", "fair"):
        raise InputError(f"--objective {objective}: assign-sac takes total or fair")
    settings = AssignSettings(per_paper=per_ac, max_load=max_load, min_load=min_load, objective=objective)
    target = output_target(out, force, as_json, [scores, papers, conflicts, ac_conflicts])
    for flag, path in (("--scores", scores), ("--papers", papers), ("--conflicts", conflicts),
                       ("--ac-conflicts", ac_conflicts)):
        if path is not None and not path.is_file():
            raise InputError(f"{flag} {path}: no such file")
    table = read(scores)
    if conflicts is not None:
        table = table.with_conflicts(read_pairs(conflicts, table.submissions, table.reviewers))
    built = chairs.build(table, chairs.read_papers(papers),
                         chairs.read_direct(ac_conflicts) if ac_conflicts is not None else set())
    try:
        result = assign(built.table, settings)
    except InputError as exc:
        raise InputError(_in_chairs_words(str(exc))) from None
    if target is not None:
        with durable_file(Path(os.path.realpath(target)), newline="") as fh:
            fh.write("ac,sac,score\n")
            fh.writelines(f"{a},{s},{v:.6f}\n" for a, s, v in result.pairs)
    summary = {**result.summary, "paper_conflicts": built.paper_conflicts, "direct_conflicts": built.direct_conflicts,
               "unscored_pairs": built.unscored}
    if as_json:
        typer.echo(json.dumps({"summary": summary, "pairs": [{"ac": a, "sac": s, "score": round(v, 6)}
                                                             for a, s, v in result.pairs]}))
        return
    s = summary
    typer.echo(f"assigned {s['submissions']:,} ACs x {per_ac} SAC(s) from {s['reviewers']:,} SACs within loads "
               f"{min_load}-{max_load} ({objective}); mean affinity to an AC's papers {s['mean_affinity']:.3f}, "
               f"weakest {s['lowest_pair']:.3f}", err=True)
    typer.echo(f"excluded {s['paper_conflicts']:,} AC-SAC pair(s) for a conflict with one of the AC's papers and "
               f"{s['direct_conflicts']:,} listed in --ac-conflicts", err=True)
    if s["unscored_pairs"]:
        typer.echo(f"{s['unscored_pairs']:,} (paper, SAC) pair(s) have no score and count at the lowest; write every "
                   "pair with `affinity --all`", err=True)


WORDS = {"--per-paper": "--per-ac", "submissions": "ACs", "submission": "AC", "reviewers": "SACs", "reviewer": "SAC",
         "reviews": "AC places"}


def _in_chairs_words(message: str) -> str:
    """The assignment's refusal with ACs for its submissions and SACs for its reviewers."""
    return re.sub("|".join(re.escape(w) for w in WORDS), lambda m: WORDS[m.group(0)], message)
