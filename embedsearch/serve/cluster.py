"""A cluster served on Ray Serve (``serve --index CLUSTER --engine ray``): one deployment per shard, each with
replicas, and an ingress that serves the very app ``create_app`` builds for any index, with its searches
answered by the shards (``retrieval.parts.Fanout`` over ``RayParts``, Ray Serve's model composition). So the
routes, bounds, response models and errors are one index's; only where a search's candidates come from
differs. A call that fails on a dead replica is sent again (Ray Serve routes it to a live one); a shard that
still does not answer within ``ClusterSettings.shard_timeout_s`` is named in ``missing`` and the answer says
``"partial": true``. Everything else (documents, topics, duplicates, writes) is the cluster read in the
ingress's process, as ``serve --index CLUSTER`` serves it without Ray."""

from __future__ import annotations

import logging
import os
import signal
import sys
import time
from contextlib import suppress
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import InputError, require
from ..index import Index
from ..retrieval import parts
from ..store import cluster
from ..store.snapshot import Snapshot
from .ray_fit import reserve, wait_until_running
from .settings import ClusterSettings, ServeSettings

APP = "embedsearch"

log = logging.getLogger("embedsearch.serve")


class ShardServer:
    """A replica of one shard's deployment: the shard read at the generation each call names."""

    def __init__(self, path: str):
        self.path = path
        self._open: dict[int, Snapshot] = {}

    def _at(self, generation: int) -> Snapshot:
        if generation not in self._open:
            self._open = {g: s for g, s in self._open.items() if g > generation - 2}
            self._open[generation] = Index.load(self.path, generation=generation).snapshot
        return self._open[generation]

    def stats(self, generation: int, *args: Any):
        return parts.stats(self._at(generation), *args)

    def candidates(self, generation: int, *args: Any):
        return parts.candidates(self._at(generation), *args)

    def matching(self, generation: int, *args: Any):
        return parts.matching(self._at(generation), *args)

    def pid(self) -> int:
        return os.getpid()


class RayParts:
    """The shards of one cut as Ray Serve handles: a round sends every call before it waits for any."""

    def __init__(self, handles: list[Any], snapshot: Snapshot, settings: ClusterSettings):
        self.handles, self.settings = handles, settings
        self.names = list(snapshot.parts)
        self.sizes = [len(p) for p in snapshot.parts.values()]
        self.generations = [p.number for p in snapshot.parts.values()]

    def _send(self, part: int, method: str, args: tuple) -> Any:
        return getattr(self.handles[part], method).remote(self.generations[part], *args)

    def round(self, method: str, args: dict[int, tuple]) -> dict[int, Any]:
        """Every part's answer within one ``shard_timeout_s`` of the round's start (a resend after a dead
        replica gets a fresh one): parts that do not answer cost one timeout, not one each."""
        sent = {p: self._send(p, method, a) for p, a in args.items()}
        deadline = time.monotonic() + self.settings.shard_timeout_s
        out: dict[int, Any] = {}
        for p, a in args.items():
            response = sent[p]
            for attempt in range(self.settings.retries + 1):
                try:
                    out[p] = response.result(timeout_s=max(0.0, deadline - time.monotonic()))
                    break
                except TimeoutError:
                    response.cancel()
                    break
                except Exception as exc:  # noqa: BLE001  (a dead or unreachable replica: Ray raises several kinds)
                    if isinstance(exc, InputError):
                        raise
                    log.warning("shard %s: %s on attempt %d", self.names[p], type(exc).__name__, attempt + 1)
                    time.sleep(0.2 * (attempt + 1))
                    response = self._send(p, method, a)
                    deadline = max(deadline, time.monotonic() + self.settings.shard_timeout_s)
        return out


def application(root: str | Path, settings: ClusterSettings = ClusterSettings(), token: str | None = None):
    """The Ray Serve application of the cluster at ``root``: ``serve.run(application(root))`` serves it
    (writes only with ``settings.writable`` and the bearer ``token``; ``settings.cpus`` None reserves 1 CPU a
    replica: ``run_on_ray`` fits it to the Ray cluster first)."""
    serve = require("ray.serve", "cluster")
    cpus = 1.0 if settings.cpus is None else settings.cpus
    root = Path(root).resolve()
    served = ServeSettings(writable=settings.writable, lock_wait_seconds=settings.lock_wait_s)

    @serve.deployment(name="ingress", ray_actor_options={"num_cpus": cpus})
    @serve.ingress()
    class Front:
        def __init__(self, *handles: Any):
            self.handles = list(handles)

        def __serve_build_asgi_app__(self):
            from .app import create_app

            return create_app(root, served, token, lambda snapshot: RayParts(self.handles, snapshot, settings))

    shard = serve.deployment(ShardServer)
    handles = [shard.options(name=name, num_replicas=settings.replicas, ray_actor_options={"num_cpus": cpus})
               .bind(str(root / cluster.SHARDS / name)) for name in cluster.shard_names(root)]
    return Front.bind(*handles)


def run_on_ray(root: Path, settings: ClusterSettings, token: str | None, host: str, port: int,
               address: str | None) -> None:
    """``serve --index CLUSTER --engine ray``: join (or start) a Ray cluster and serve until stopped."""
    from .run import TOKEN_ENV

    if settings.writable and token is None:
        raise InputError(f"--writable needs a token: set {TOKEN_ENV} or pass --token-file FILE")
    ray = require("ray", "cluster")
    serve = require("ray.serve", "cluster")
    ray.init(address=address, include_dashboard=False)
    _own_signals()
    fitted = reserve(len(cluster.shard_names(root)), settings.replicas, settings.cpus,
                     float(ray.cluster_resources().get("CPU", 0)))
    if fitted.note:
        log.warning(fitted.note)
    serve.start(http_options={"host": host, "port": port})
    try:
        serve._run(application(root, replace(settings, cpus=fitted.cpus), token), name=APP, route_prefix="/",
                   _blocking=False)  # serve.run would wait, unbounded, for replicas Ray cannot place
        wait_until_running(serve, APP, settings.start_timeout_s)
        log.warning("serving %s on http://%s:%d (%d replicas at %g CPU each)", root, host, port, fitted.replicas,
                    fitted.cpus)
        while True:
            time.sleep(10)
    finally:
        _leave(serve)


def _own_signals() -> None:
    """SIGTERM and Ctrl-C end the service through ``_leave``: the handler Ray's core worker installs on joining
    ends the process at once (SIGABRT), leaving the application to a race with the detached Serve controller
    (seen still holding the cluster's CPUs a minute later)."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _leave(serve: Any) -> None:
    """Take this application off the cluster before the process ends, so its replicas give their CPUs back;
    Serve itself ends when no other application is left."""
    with suppress(Exception):
        serve.delete(APP)
        if not serve.status().applications:
            serve.shutdown()
