"""Where and how wide jobs run on Ray."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import check


@dataclass(frozen=True)
class RaySettings:
    """Where and how wide to run. ``address``: None starts a local Ray, ``"auto"`` joins the cluster this
    machine belongs to, ``"ray://host:10001"`` a remote one. ``workers``: actors in the pool (default:
    one per GPU, else one per CPU in the cluster). ``chunk``: texts per Ray job (bounds driver memory)."""

    address: str | None = None
    workers: int | None = None
    batch_size: int = 256
    chunk: int = 50_000

    def __post_init__(self) -> None:
        check(self, workers=(1, None), batch_size=(1, None), chunk=(1, None))
