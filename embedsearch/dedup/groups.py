"""Union-find over duplicate edges, and the rule that picks which record of a group is kept."""

from __future__ import annotations

from collections.abc import Iterable


class UnionFind:
    """Disjoint sets over hashable items, with path halving and union by size."""

    def __init__(self) -> None:
        self._parent: dict = {}
        self._size: dict = {}

    def find(self, item):
        self._parent.setdefault(item, item)
        self._size.setdefault(item, 1)
        while self._parent[item] != item:
            self._parent[item] = self._parent[self._parent[item]]
            item = self._parent[item]
        return item

    def union(self, a, b) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        if self._size[ra] < self._size[rb]:
            ra, rb = rb, ra
        self._parent[rb] = ra
        self._size[ra] += self._size[rb]

    def groups(self) -> list[list]:
        out: dict = {}
        for item in self._parent:
            out.setdefault(self.find(item), []).append(item)
        return list(out.values())


def connected(edges: Iterable[tuple]) -> list[list]:
    """Connected components of an edge list, each sorted, largest first then by first member."""
    uf = UnionFind()
    for a, b in edges:
        uf.union(a, b)
    return sorted((sorted(g) for g in uf.groups()), key=lambda g: (-len(g), g[0]))
