"""What a cluster on Ray Serve reserves before it deploys, and the wait for it to come up: the replicas
(shards x replicas, plus the ingress) times the CPUs each reserves, against the CPUs the Ray cluster has. On a
small machine the defaults (two replicas a shard, one CPU each) do not fit, and Ray would wait forever for
CPUs that never come; so the reservation is fitted (an equal share each, said in one line) or refused with
the numbers, and a deployment that is still not running after ``start_timeout_s`` ends the service, naming it."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from ..errors import ServiceError

SMALLEST = 0.01  # the least CPU share a replica is given


@dataclass(frozen=True)
class Reservation:
    """The CPUs each replica reserves, how many replicas there are, and the line said when it was fitted."""

    cpus: float
    replicas: int
    note: str = ""


def reserve(shards: int, replicas: int, cpus: float | None, available: float) -> Reservation:
    """``cpus`` per replica when given (refused when the total exceeds ``available``); when None, one each if
    that fits, else an equal share of ``available``."""
    count = shards * replicas + 1
    layout = f"{shards} shard(s) x {replicas} replica(s) + the ingress = {count} replicas"
    fewer = "fewer --replicas, or a larger Ray cluster (--ray-address)"
    if cpus is not None:
        if count * cpus > available + 1e-9:
            most = math.floor(available / count * 100) / 100
            raise ServiceError(f"{layout} at --cpus {cpus:g} need {count * cpus:g} CPUs and the Ray cluster has "
                               f"{available:g}: pass --cpus {most:g} or less, {fewer}")
        return Reservation(cpus, count)
    if count <= available:
        return Reservation(1.0, count)
    share = math.floor(available / count * 100) / 100
    if share < SMALLEST:
        raise ServiceError(f"{layout} cannot share the Ray cluster's {available:g} CPUs (each would get under "
                           f"{SMALLEST} CPU): {fewer}")
    return Reservation(share, count, f"Ray has {available:g} CPUs and {layout} at 1 CPU would need {count}: each "
                                     f"reserves {share:g} CPU (--cpus to choose, --replicas to run fewer)")


def wait_until_running(serve: Any, app: str, timeout_s: float, poll_s: float = 1.0) -> None:
    """Return once Ray Serve says the application runs; a failed deployment, or one still not running after
    ``timeout_s``, is a ``ServiceError`` naming each deployment that is not running and Ray's reason."""
    deadline = time.monotonic() + timeout_s
    while True:
        status = serve.status().applications.get(app)
        state = str(getattr(status, "status", "NOT_STARTED")).split(".")[-1]
        if state == "RUNNING":
            return
        if state in ("DEPLOY_FAILED", "UNHEALTHY") or time.monotonic() >= deadline:
            stuck = [f"{name}: {str(d.status).split('.')[-1]}{f' ({d.message.strip()[:300]})' if d.message else ''}"
                     for name, d in (status.deployments.items() if status is not None else ())
                     if str(d.status).split(".")[-1] != "HEALTHY"]
            why = f"not running after {timeout_s:g} s" if time.monotonic() >= deadline else "failed"
            raise ServiceError(f"the cluster's deployments {why}: {'; '.join(stuck) or state}; see Ray's log "
                               "(--start-timeout waits longer)")
        time.sleep(poll_s)
