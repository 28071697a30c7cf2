"""A record a reader could not use, named by where it is (``file:line``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """A record that was skipped, and why."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"
