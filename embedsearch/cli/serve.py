"""The command that starts the service: ``embedsearch serve``."""

from __future__ import annotations

from pathlib import Path

import typer

from ..serve.settings import ClusterSettings, ServeSettings
from .app import IndexOpt, RayAddressOpt, app, friendly, ray_settings

_DEFAULT = ServeSettings()
_RAY = ClusterSettings()


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
          topics_retry: float = typer.Option(_DEFAULT.topics_retry_seconds, "--topics-retry", min=0.1,
                                             help="Seconds before a failed topic fit is tried again (doubling)."),
          reviewers: Path | None = typer.Option(None, "--reviewers",
                                                help="Reviewers' archives or publications: adds /reviewers/for and "
                                                     "who could review each paper on its page."),
          engine: str = typer.Option("local", "--engine",
                                     help="local, or ray: Ray Serve (pip install 'embedsearch[cluster]')."),
          ray_address: str | None = RayAddressOpt,
          replicas: int = typer.Option(_RAY.replicas, "--replicas", min=1, help="With --engine ray: replicas per shard."),
          cpus: float | None = typer.Option(None, "--cpus", min=0,
                                            help="With --engine ray: CPUs Ray reserves per replica (default: 1, or "
                                                 "an equal share when the Ray cluster has fewer; said at start)."),
          start_timeout: float = typer.Option(_RAY.start_timeout_s, "--start-timeout", min=0.1,
                                              help="With --engine ray: seconds the deployments may take to come "
                                                   "up before the service ends, naming the ones not running."),
          shard_timeout: float = typer.Option(_RAY.shard_timeout_s, "--shard-timeout", min=0.1,
                                              help="With --engine ray: seconds before a shard that does not answer "
                                                   "is named missing in a partial answer.")) -> None:
    """Serve an index or a cluster over HTTP: JSON API (docs at /docs), a search page at / and the topic map at
    /map. A cluster is served in this process by default, and on Ray Serve with `--engine ray` (a
    deployment per shard with replicas). Needs pip install 'embedsearch[serve]'."""
    from ..errors import require

    require("fastapi", "serve")
    require("uvicorn", "serve")
    from ..serve.run import read_token
    from ..serve.run import serve as run
    from .app import open_index

    from ..errors import InputError
    from ..store.cluster import is_cluster

    ray_settings(engine, ray_address)
    token = read_token(token_file)
    path = Path(index) if index is not None else open_index(None).path
    if engine == "ray":
        if not is_cluster(path):
            raise InputError(f"--engine ray serves a cluster of shards on Ray Serve, and {path} is one index: split "
                             f"it first (`embedsearch shard --index {path} --out CLUSTER --shards N`)")
        if reviewers or workers != _DEFAULT.workers:
            raise InputError("--reviewers and --workers are options of the in-process server; with --engine ray "
                             "use --replicas")
        from ..serve.cluster import run_on_ray

        cluster = ClusterSettings(replicas=replicas, cpus=cpus, start_timeout_s=start_timeout,
                                  shard_timeout_s=shard_timeout, writable=writable)
        run_on_ray(path, cluster, token, host, port, ray_address)
        return
    settings = ServeSettings(host=host, port=port, workers=workers, writable=writable, topics=topics, topics_retry_seconds=topics_retry,
                             reviewers=str(reviewers.resolve()) if reviewers else "")
    run(path, settings, token)
