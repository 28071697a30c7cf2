"""How the service runs and what it accepts: one frozen dataclass, validated on construction. The limits
are documented in docs/service.md's API table; a request past one gets a 4xx JSON error naming it."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from ..errors import InputError, check
from ..retrieval.answer import MAX_QUERY_CHARS

TOKEN_ENV = "EMBEDSEARCH_TOKEN"


@dataclass(frozen=True)
class ServeSettings:
    """``host``/``port``: where to listen (loopback unless told otherwise). ``workers``: uvicorn worker
    processes, each following the index's newest generation. ``writable``: whether the write endpoints
    exist (they also need the bearer token). ``follow_seconds``: how often a worker looks for a newer
    generation. ``topics``: fit topics in the background when none are saved (and carry them over after
    commits). ``topics_retry_seconds``: the first wait before a failed fit is tried again (doubling, at most an
hour). ``lock_wait_seconds``: how long a write waits for another writer before answering 503.
    ``threads``: requests a worker runs at once (anyio's 40 by default: on two cores 8 shortened the slowest
    searches when only searches ran, but in the mixed benchmark slow duplicate checks then held most threads
    and searches queued behind them, p50 531 ms against 69 ms; benchmarks/HISTORY.md). ``max_writes``: writes a worker
    lets wait for the writer lock at once; past it a write is answered 503 at once, so waiting writes can
    never take every request thread from the readers."""

    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1
    writable: bool = False
    follow_seconds: float = 0.25
    topics: bool = True
    topics_retry_seconds: float = 60.0
    lock_wait_seconds: float = 30.0
    threads: int = 40
    max_writes: int = 2
    reviewers: str = ""  # reviewers' archives or publications file: adds /reviewers/for (``serve --reviewers``)

    def __post_init__(self) -> None:
        try:
            ipaddress.ip_address(self.host)
        except ValueError:
            if self.host != "localhost":
                raise InputError(f"--host {self.host!r} is not an IP address; use 127.0.0.1 (this machine only) "
                                 "or 0.0.0.0 (every interface)") from None
        check(self, port=(0, 65535), workers=(1, None), topics_retry_seconds=(0.001, None), follow_seconds=(0.001, 10),
              threads=(2, None), max_writes=(1, self.threads - 1), lock_wait_seconds=(0, None))


@dataclass(frozen=True)
class Limits:
    """What one request may ask for (docs/service.md's API table lists them). Past a limit: 413 for a body,
    414 for a GET query, 422 for a field."""

    body_bytes: int = 4_000_000
    k: int = 100
    offset: int = 900  # the deepest page: results 901 to 1,000
    batch: int = 64
    add: int = 1_000
    filters: int = 16
    text_chars: int = MAX_QUERY_CHARS
    get_query_chars: int = 2_000
    id_chars: int = 1_000
    metadata_fields: int = 64


LIMITS = Limits()


@dataclass(frozen=True)
class ClusterSettings:
    """Replicas per shard and the CPUs Ray reserves for each (the ingress too; None: one each where the Ray
    cluster has them, else an equal share, ``serve.ray_fit``), how long the deployments may take to come up,
    how long the ingress waits for one shard's answer, how often a call that failed (a replica died under it)
    is sent again, whether the ingress takes writes (with a token) and how long a write waits for the
    cluster's lock."""

    replicas: int = 2
    cpus: float | None = None
    start_timeout_s: float = 300.0
    shard_timeout_s: float = 5.0
    retries: int = 2
    writable: bool = False
    lock_wait_s: float = 30.0

    def __post_init__(self) -> None:
        check(self, replicas=(1, None), cpus=(0, None), start_timeout_s=(0.1, None), shard_timeout_s=(0.001, None),
              retries=(0, None),
              lock_wait_s=(0, None))
