"""The command that starts the service: ``embedsearch serve``."""

from __future__ import annotations

from pathlib import Path

import typer

from ..serve.settings import ServeSettings
from .app import IndexOpt, app, friendly

_DEFAULT = ServeSettings()


@app.command()
@friendly
def serve(index: str | None = IndexOpt,
          host: str = typer.Option(_DEFAULT.host, "--host", help="Address to listen on (loopback by default)."),
          port: int = typer.Option(_DEFAULT.port, "--port"),
          workers: int = typer.Option(_DEFAULT.workers, "--workers", help="Worker processes."),
          writable: bool = typer.Option(False, "--writable",
                                        help="Allow POST/DELETE /documents and POST /compact (needs a token)."),
          token_file: Path | None = typer.Option(None, "--token-file",
                                                    help="File holding the write token (or set EMBEDSEARCH_TOKEN)."),
          topics: bool = typer.Option(_DEFAULT.topics, "--topics/--no-topics",
                                      help="Fit topics in the background when none are saved."),
          reviewers: Path | None = typer.Option(None, "--reviewers",
                                                help="Reviewers' archives or publications: adds /reviewers/for and "
                                                     "who could review each paper on its page.")) -> None:
    """Serve an index over HTTP: JSON API (docs at /docs), a search page at / and the topic map at /map."""
    from ..errors import require

    require("fastapi", "serve")
    require("uvicorn", "serve")
    from ..serve.run import read_token
    from ..serve.run import serve as run
    from .app import open_index

    settings = ServeSettings(host=host, port=port, workers=workers, writable=writable, topics=topics,
                             reviewers=str(reviewers.resolve()) if reviewers else "")
    token = read_token(token_file)
    path = Path(index) if index is not None else open_index(None).path
    run(path, settings, token)
