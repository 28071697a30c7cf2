"""The Ray engine: the batch functions the local path uses, run on a Ray cluster.

Embedding (``Embedder.encode_pieces``) runs as a Ray Data ``map_batches`` job over an actor pool, so each
actor loads the model once (on a GPU when the cluster has them); other jobs (filling the shards of an
IVF index, assigning documents to topics, finding duplicate candidates per IVF list) run as Ray tasks
through ``RayMap``. Nothing here is imported unless ``--engine ray`` is asked for; Ray is an optional extra.
"""

from __future__ import annotations

import os
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from ..embedding.settings import EmbedSettings
from ..errors import EmbedsearchError, InputError, require
from .runner import JobRunner, local_map
from .settings import RaySettings


def connect(settings: RaySettings):
    """Start or join Ray once per process; a cluster that cannot be reached is a one-line error. Ray Data's
    progress bars would replace ``builtins.print`` in this process for good, and numba (topic fits after
    a Ray build) cannot compile code that calls a Python-level print: they are told not to."""
    os.environ.setdefault("RAY_TQDM_PATCH_PRINT", "0")
    ray = require("ray", "ray")
    require("ray.data", "ray")
    if ray.is_initialized():
        return ray
    _probe(settings.address)
    try:
        ray.init(address=settings.address, ignore_reinit_error=True, include_dashboard=False, log_to_driver=False,
                 logging_level="ERROR")
    except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise EmbedsearchError(f"cannot reach a Ray cluster at {settings.address!r} ({first}); start one with "
                               "`ray start --head` or pass the right --ray-address") from exc
    return ray


def _probe(address: str | None, timeout: float = 5.0) -> None:
    """Fail fast on an address nobody answers at: ``ray.init`` itself retries for minutes."""
    import socket

    if address in (None, "auto", "local"):
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise InputError(f"--ray-address {address!r}: expected auto, HOST:PORT or ray://HOST:PORT")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        raise EmbedsearchError(f"cannot reach a Ray cluster at {address!r} ({exc.strerror or exc}); start one with "
                               "`ray start --head` or pass the right --ray-address") from None


class EncodeActor:
    """One model per actor; each call embeds a batch of window strings with the local batch function."""

    def __init__(self, settings: dict, threads: int):
        import os

        from ..embedding.embed import Embedder
        from ..embedding.onnx_encoder import THREADS_ENV
        from ..embedding.precision import FP16

        self.settings = EmbedSettings(**settings)
        os.environ[THREADS_ENV] = str(max(1, threads))
        if self.settings.precision == FP16:
            import torch

            torch.set_num_threads(max(1, threads))
        self.embedder = Embedder(self.settings)
        self.fingerprint, self.dimension = self.embedder.fingerprint, self.embedder.dimension

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """The ``Encoder`` protocol: window strings to vectors with the same backend as the local path."""
        return self.embedder.encode_pieces(list(texts))

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"row": batch["row"], "vector": self.encode(list(batch["text"]))}


def ray_encoder(settings: EmbedSettings, ray_settings: RaySettings = RaySettings()
                ) -> Callable[[list[str]], np.ndarray]:
    """A drop-in for ``Embedder.embed(..., encode=...)`` that encodes on the Ray cluster."""
    ray = connect(ray_settings)

    def encode(pieces: list[str]) -> np.ndarray:
        resources = ray.cluster_resources()
        gpus, cpus = int(resources.get("GPU", 0)), max(1, int(resources.get("CPU", 1)))
        workers = ray_settings.workers or (gpus or cpus)
        per_actor = 1 if gpus else max(1, cpus // workers)
        blocks = max(workers, -(-len(pieces) // ray_settings.batch_size))
        dataset = ray.data.from_items([{"row": i, "text": p} for i, p in enumerate(pieces)],
                                      override_num_blocks=min(blocks, max(1, len(pieces))))
        vectors = dataset.map_batches(
            EncodeActor, fn_constructor_kwargs={"settings": asdict(settings), "threads": per_actor},
            batch_size=ray_settings.batch_size, compute=ray.data.ActorPoolStrategy(size=workers),
            num_gpus=1 if gpus else 0,
            num_cpus=0 if gpus else per_actor, batch_format="numpy")
        rows, parts = [], []
        for batch in vectors.iter_batches(batch_format="numpy", batch_size=None):
            rows.append(batch["row"])
            parts.append(batch["vector"])
        order = np.argsort(np.concatenate(rows), kind="stable")
        return np.concatenate(parts)[order].astype(np.float32)

    return encode


def job_map(settings: RaySettings | JobRunner | None):
    """Where parallel jobs (IVF shards, topic assignment, duplicate candidates) run: in this process
    (``settings`` None), or as Ray tasks. Ray is imported only in the second case."""
    if settings is None:
        return local_map
    return settings if callable(settings) else RayMap(settings)  # a runner already made (a ``RayMap``)


def _run_task(fn: Callable[..., Any], *args: Any) -> tuple[str, Any]:
    import faiss
    import ray

    faiss.omp_set_num_threads(1)
    return ray.get_runtime_context().get_node_id(), fn(*args)


class RayMap:
    """``map(fn, jobs)`` as one Ray task per job, spread over the cluster's nodes, yielding results in
    job order with at most two tasks per cluster CPU in flight (so the object store holds a bounded
    number of shards). Ray retries a task whose worker dies; a job that still fails raises here,
    before anything is written. ``nodes`` counts the jobs each node ran."""

    shares_memory = False

    def __init__(self, settings: RaySettings = RaySettings()):
        self.settings = settings
        self.nodes: Counter[str] = Counter()

    def __call__(self, fn: Callable[..., Any], jobs: Sequence[tuple]) -> Iterator[Any]:
        ray = connect(self.settings)
        task = ray.remote(num_cpus=1, max_retries=3, scheduling_strategy="SPREAD")(_run_task)
        shared = _shared_values(ray, jobs)
        window = max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
        waiting = iter(jobs)
        pending: deque = deque()

        def submit() -> None:
            job = next(waiting, None)
            if job is not None:
                pending.append(task.remote(fn, *(shared.get(id(value), value) for value in job)))

        for _ in range(window):
            submit()
        while pending:
            try:
                node, result = ray.get(pending.popleft())
            except ray.exceptions.RayError as exc:
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[-1][:200]
                raise EmbedsearchError(f"a Ray task failed after retries ({first}); nothing was written, "
                                       "run the job again") from exc
            self.nodes[node] += 1
            submit()
            yield result


def _shared_values(ray, jobs: Sequence[tuple]) -> dict[int, Any]:
    """Values every job passes (the trained index, the fitted topic models) go to the object store
    once; the per-job data travels with its own task."""
    if len(jobs) < 2:
        return {}
    common = {id(value) for value in jobs[0] if not isinstance(value, int | float | str | bool | None)}
    for job in jobs[1:]:
        common &= {id(value) for value in job}
    return {id(value): ray.put(value) for value in jobs[0] if id(value) in common}
