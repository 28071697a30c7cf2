"""Commands for a cluster of shards: ``embedsearch shard`` splits an index, ``cluster-search``,
``cluster-dedup`` and ``cluster-topics`` read the shards as one in this process, ``cluster-compact`` merges
each shard's segments as a new cut, ``serve-cluster`` serves them on Ray Serve."""

from __future__ import annotations

from pathlib import Path

import typer

from ..serve.settings import ClusterSettings
from .app import EngineOpt, ForceOpt, IndexOpt, JsonOpt, RayAddressOpt, app, friendly, open_index, ray_settings
from .explore import MinSizeOpt, RefitOpt, SampleOpt, SeedOpt, print_report
from .over_time import BinsOpt, ByOpt, CsvOpt, OverOpt, PlotOpt, PngOpt, StrictOpt

_DEFAULT = ClusterSettings()
ClusterOpt = typer.Option(..., "--cluster", "-c", help="Cluster folder (made by `embedsearch shard`).")


@app.command()
@friendly
def shard(index: str | None = IndexOpt, out: Path = typer.Option(..., "--out", help="New folder for the cluster."),
          shards: int = typer.Option(..., "--shards", min=1, help="How many shards (documents routed by id hash).")) -> None:
    """Split an index into shards, each an ordinary index, with its vectors (nothing is embedded again)."""
    from ..shards import Cluster

    cluster = Cluster.split(open_index(index), out, shards)
    sizes = ", ".join(f"{s.name}: {len(s.index):,}" for s in cluster.shards)
    typer.echo(f"split {len(cluster):,} documents into {shards} shard(s) at {out} ({sizes})")


@app.command("cluster-search")
@friendly
def cluster_search(query: str = typer.Argument(..., help="What to search for."), cluster: Path = ClusterOpt,
                   k: int = typer.Option(10, "-k", min=1), mode: str | None = typer.Option(None, "--mode"),
                   filters: list[str] = typer.Option([], "--filter"), as_json: bool = JsonOpt) -> None:
    """Search every shard of a cluster as one index (global BM25 statistics, one fused ranking)."""
    from ..shards import Cluster
    from .search import _print_hits

    _print_hits(Cluster.open(cluster).search(query, k, mode, filters).hits, as_json, None if as_json else query)


@app.command("cluster-dedup")
@friendly
def cluster_dedup(cluster: Path = ClusterOpt, as_json: bool = JsonOpt, engine: str = EngineOpt,
                  ray_address: str | None = RayAddressOpt) -> None:
    """Near-duplicate groups over every shard of a cluster (a pair split over two shards is found); with
    ``--engine ray`` the neighbour search runs as Ray tasks that read the shard folders."""
    from ..engine.distributed import job_map
    from ..shards import Cluster

    opened = Cluster.open(cluster)
    report = opened.duplicates(map_jobs=job_map(ray_settings(engine, ray_address)))
    print_report(report, as_json, f"no near-duplicates among {len(opened)} abstracts")


@app.command("cluster-topics")
@friendly
def cluster_topics(cluster: Path = ClusterOpt, as_json: bool = JsonOpt, min_size: int | None = MinSizeOpt,
                   seed: int = SeedOpt, sample: int = SampleOpt, refit: bool = RefitOpt, engine: str = EngineOpt,
                   ray_address: str | None = RayAddressOpt, over: str | None = OverOpt, by: str | None = ByOpt,
                   bins: int = BinsOpt, csv_file: Path | None = CsvOpt, plot: Path | None = PlotOpt,
                   png: bool = PngOpt, strict: bool = StrictOpt, force: bool = ForceOpt) -> None:
    """Topics over every shard: fitted on a sample drawn across the shards, the rest assigned shard by shard
    (as Ray tasks with ``--engine ray``); after writes, the last fit is carried over unless ``--refit``.
    ``--over-time FIELD`` / ``--by FIELD`` give the same table as ``topics`` does over one index."""
    import json

    from ..engine.distributed import job_map
    from ..shards import Cluster
    from ..topics import TopicSettings
    from .over_time import check_request, show

    check_request(over, by, csv_file, plot, png, strict, force)
    opened = Cluster.open(cluster)
    model = opened.topics(TopicSettings(min_size=min_size, seed=seed, sample=sample),
                          job_map(ray_settings(engine, ray_address)), refit)
    if over is not None or by is not None:
        held = {d.id: d for shard in opened.shards for d in shard.index.documents}
        show(cluster.name, model, [held[i] for i in model.ids], over or by, by is not None, bins, 0, as_json,
             csv_file, plot, png, strict, force)
        return
    if as_json:
        typer.echo(json.dumps(model.to_json(), ensure_ascii=False))
        return
    typer.echo(f"{len(model.topics())} topics over {len(opened):,} papers in {len(opened.shards)} shards; "
               f"{len(model.unassigned())} unassigned")
    for topic in model.topics():
        typer.echo(f"topic {topic.id}: {topic.label}  ({topic.size} papers)  keywords: {', '.join(topic.keywords[:6])}")


@app.command("cluster-compact")
@friendly
def cluster_compact(cluster: Path = ClusterOpt) -> None:
    """Merge every shard's segments and drop deleted rows, published as the cluster's next cut."""
    from ..shards import Cluster

    done = Cluster.open(cluster).compact()
    segments = ", ".join(f"{s.name}: {len(s.index.snapshot.segments)}" for s in done.shards)
    typer.echo(f"compacted {len(done):,} documents in {len(done.shards)} shard(s) (segments {segments}); "
               f"cut {done.cut.number}")


@app.command("serve-cluster")
@friendly
def serve_cluster(cluster: Path = ClusterOpt, port: int = typer.Option(8000, "--port"),
                  host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (loopback by default)."),
                  replicas: int = typer.Option(_DEFAULT.replicas, "--replicas", min=1, help="Replicas per shard."),
                  cpus: float = typer.Option(_DEFAULT.cpus, "--cpus", min=0, help="CPUs Ray reserves per replica."),
                  shard_timeout: float = typer.Option(_DEFAULT.shard_timeout_s, "--shard-timeout", min=0.1,
                                                      help="Seconds before a shard that does not answer is named "
                                                           "missing in a partial answer."),
                  address: str | None = typer.Option(None, "--ray-address", help="Ray cluster to join (default: start one)."),
                  writable: bool = typer.Option(False, "--writable", help="Allow POST/DELETE /documents (needs a token)."),
                  token_file: Path | None = typer.Option(None, "--token-file",
                                                         help="File holding the write token (or set EMBEDSEARCH_TOKEN).")
                  ) -> None:
    """Serve a cluster on Ray Serve: a deployment per shard with replicas, and the search API on the ingress."""
    from ..errors import InputError, require
    from ..serve.cluster import application
    from ..serve.run import TOKEN_ENV, read_token

    token = read_token(token_file)
    if writable and token is None:
        raise InputError(f"--writable needs a token: set {TOKEN_ENV} or pass --token-file FILE")
    ray = require("ray", "cluster")
    serve = require("ray.serve", "cluster")
    ray.init(address=address, include_dashboard=False)
    serve.start(http_options={"host": host, "port": port})
    settings = ClusterSettings(replicas=replicas, cpus=cpus, shard_timeout_s=shard_timeout, writable=writable)
    serve.run(application(cluster, settings, token), name="embedsearch",
              route_prefix="/", blocking=True)
