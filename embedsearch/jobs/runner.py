"""Where parallel jobs run (IVF shards, topic assignment, duplicate candidates): a ``JobRunner`` maps one
function over argument tuples. ``local_map`` runs them in this process; ``distributed.RayMap`` on a cluster."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol


class JobRunner(Protocol):
    """``runner(fn, jobs)`` yields ``fn(*job)`` per job, in order. ``shares_memory``: jobs run in this
    process, so they may be handed live objects (an open snapshot) rather than what reopens them."""

    shares_memory: bool

    def __call__(self, fn: Callable[..., Any], jobs: Sequence[tuple]) -> Iterable[Any]: ...


class LocalJobs:
    """Jobs one after another in this process (FAISS itself uses every core), each result yielded as it is
    done, so a caller can write it away before the next one is computed."""

    shares_memory = True

    def __call__(self, fn: Callable[..., Any], jobs: Sequence[tuple]) -> Iterator[Any]:
        return (fn(*job) for job in jobs)


local_map = LocalJobs()
