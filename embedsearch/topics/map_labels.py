"""Labels that follow the zoom (dynamic map labelling, after Been, Daiches and Yap 2006): every topic at every
level shown gets one label, anchored over its own topic's densest points, and the zoom at which it appears.

Zoom is a scale ``s`` in screen pixels per map unit (the map spans [-1, 1] on its longer side). A label is
a box of fixed pixel size centred on its anchor, so in map units it shrinks as ``s`` grows:

- it is *pure* from the smallest ``s`` at which the box holds at least ``PURITY`` of its own topic's points
  (and stays so as the view closes in): a label never sits over another topic's points;
- two labels' boxes overlap exactly while ``s < min((wi + wj) / 2|dx|, (hi + hj) / 2|dy|)``, so, placed
  greedily (coarsest level first, then by size), each label appears at the first zoom past its purity at
  which it overlaps none placed before it, and stays from there on: zooming in only adds labels, none flickers.

Two rules come before purity. A topic holding more than half the papers is not labelled: it names nothing
the eye can find (the legend still lists it). Every topic of the coloured level holding at least ``SHOWN_SHARE``
of the papers is placed first and shows from ``FIRST_VIEW`` (the scale a page opens at on a phone) where it
can: among its densest spots, then just beside them, it takes the first whose box, kept inside the map, lies
mostly over its own points and overlaps no label already placed there, in the smallest font if it must;
where none does, purity decides as for the rest.

The layout depends on pixel sizes and map units only, not on the screen, so it is computed once here and
read by the page and the PNG alike; each drops the labels whose box would leave its plot.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .results import TopicModel

PURITY = 2 / 3
SCALES = 50 * 2 ** (np.arange(0, 45) / 4)  # px per map unit: from a thumbnail to ~2,000x a desktop's first view
POOL = 20_000
CANDIDATES = 200
FONTS = (15, 13, 12, 11)
MAX_CHARS = 34
FIRST_VIEW = 190.0  # px per map unit as a page opens on a phone (a 380 px wide map shows [-1, 1]); a laptop opens closer
OWN_AT_FIRST = 0.6  # a label shown at once still sits mostly over its own topic's points
SHOWN_SHARE = 0.01
SPOTS = 12


@dataclass(frozen=True)
class MapLabel:
    """One label: its text, topic (level and id), anchor in map units, box size in CSS px, the zoom it shows from."""

    text: str
    level: int
    topic: int
    x: float
    y: float
    width: int
    height: int
    font: int
    scale: float  # px per map unit from which it shows; inf: never (it found no place over its own points)

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "level": self.level, "topic": self.topic, "x": round(self.x, 5),
                "y": round(self.y, 5), "w": self.width, "h": self.height, "font": self.font,
                "scale": None if not np.isfinite(self.scale) else round(self.scale, 2)}


def box_size(text: str, font: int) -> tuple[int, int]:
    """A label's box in CSS px: an allowance of 0.6 em a character (the page clips, never overflows it)."""
    return int(np.ceil(0.6 * font * len(text))) + 10, int(round(font * 1.3)) + 6


def short(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS - 1].rstrip(" ,;-") + "…"


def of_model(model: TopicModel, coords: np.ndarray, level: int = 0) -> list[MapLabel]:
    """The labels of ``model`` drawn at ``level`` (coloured by it): its topics and every coarser level's, each
    with the model's own level number."""
    depths = range(level, len(model.levels))
    placed = place(coords, [np.asarray(model.assignments[d]) for d in depths],
                 [{t.id: t.title for t in model.levels[d]} for d in depths],
                 [{t.id: t.size for t in model.levels[d]} for d in depths], model.settings.get("seed", 0))
    return [MapLabel(**{**lb.__dict__, "level": lb.level + level}) for lb in placed]


def place(coords: np.ndarray, assignments: list[np.ndarray], names: list[dict[int, str]], sizes: list[dict[int, int]],
          seed: int = 0) -> list[MapLabel]:
    """Labels for every topic of every level in ``assignments`` (finest first; ``coords`` in map units, rows
    as in the assignments), each with the zoom it shows from. A topic with the same papers as its parent a
    level up is labelled once, by the parent; one holding more than half the papers not at all."""
    rng = np.random.default_rng(seed)
    pool = rng.choice(len(coords), POOL * 10, replace=False) if len(coords) > POOL * 10 else np.arange(len(coords))
    depth = len(assignments)
    labels, spots, first = [], [], []
    for level, assigned in enumerate(assignments):
        font = FONTS[min(depth - 1 - level, len(FONTS) - 1)]
        for topic, name in names[level].items():
            if 2 * sizes[level][topic] > len(coords):
                continue
            if level + 1 < depth and _same_as_parent(assignments[level], assignments[level + 1], topic):
                continue
            text = short(name)
            width, height = box_size(text, font)
            rows = pool if (assigned[pool] == topic).sum() >= 3 else \
                np.union1d(pool, np.flatnonzero(assigned == topic))  # a small topic the subsample misses
            own = assigned[rows] == topic
            ranked = _spots(coords[rows], own, rng)
            x, y = ranked[0]
            shown_first = sizes[level][topic] >= SHOWN_SHARE * len(coords) and (
                level == 0 or len(np.unique(assignments[0][assigned == topic])) == 1)  # or labelled for its child
            if shown_first:  # best over its own at once
                ranked.sort(key=lambda spot: -_share_at(coords[rows], own, *_inside(spot, width, height), width,
                                                        height))
            scale = _pure_from(coords[rows], own, x, y, width, height)
            labels.append(MapLabel(text, level, int(topic), x, y, width, height, font, scale))
            spots.append((ranked, lambda x, y, w, h, pts=coords[rows], own=own: _share_at(pts, own, x, y, w, h)))
            first.append(shown_first)
    order = sorted(range(len(labels)), key=lambda i: (not first[i], -labels[i].level,
                                                      -sizes[labels[i].level][labels[i].topic]))
    return _layout([labels[i] for i in order], [spots[i] if first[i] else None for i in order])


def _same_as_parent(fine: np.ndarray, coarse: np.ndarray, topic: int) -> bool:
    rows = fine == topic
    parents = np.unique(coarse[rows])
    return len(parents) == 1 and parents[0] >= 0 and int((coarse == parents[0]).sum()) == int(rows.sum())


def _spots(points: np.ndarray, own: np.ndarray, rng: np.random.Generator) -> list[tuple[float, float]]:
    """The topic's densest own spots, best first: of up to ``CANDIDATES`` of its points, those whose
    neighbourhood (a quarter of the topic's spread) holds most own points, weighted by the square of their
    share there; the first ``SPOTS`` of them."""
    mine = points[own]
    spread = float(np.median(np.linalg.norm(mine - np.median(mine, axis=0), axis=1))) or 1e-3
    radius = 0.5 * spread
    low, high = mine.min(axis=0) - radius, mine.max(axis=0) + radius
    near = np.all((points >= low) & (points <= high), axis=1)
    if near.sum() > POOL:
        near[np.flatnonzero(near)[rng.permutation(int(near.sum()))[POOL:]]] = False
    nearby, nearby_own = points[near], own[near]
    candidates = mine if len(mine) <= CANDIDATES else mine[rng.choice(len(mine), CANDIDATES, replace=False)]
    close = ((candidates[:, None, :] - nearby[None, :, :]) ** 2).sum(axis=2) <= radius ** 2
    mine_near = (close & nearby_own[None, :]).sum(axis=1)
    score = mine_near * (mine_near / np.maximum(close.sum(axis=1), 1)) ** 2
    best = np.argsort(-score, kind="stable")[:SPOTS]
    return [(float(candidates[i, 0]), float(candidates[i, 1])) for i in best]


def _inside(spot: tuple[float, float], width: int, height: int) -> tuple[float, float]:
    """``spot`` moved the least that keeps a box of ``width`` x ``height`` px inside the map at ``FIRST_VIEW``."""
    return (float(np.clip(spot[0], -1 + width / 2 / FIRST_VIEW, 1 - width / 2 / FIRST_VIEW)),
            float(np.clip(spot[1], -1 + height / 2 / FIRST_VIEW, 1 - height / 2 / FIRST_VIEW)))


def _share_at(points: np.ndarray, own: np.ndarray, x: float, y: float, width: int, height: int) -> float:
    """The share of own points under the box at ``FIRST_VIEW`` (1 for an empty box)."""
    hit = (np.abs(points[:, 0] - x) <= width / 2 / FIRST_VIEW) & (np.abs(points[:, 1] - y) <= height / 2 / FIRST_VIEW)
    return float(own[hit].mean()) if hit.any() else 1.0


def _pure_from(points: np.ndarray, own: np.ndarray, x: float, y: float, width: int, height: int) -> float:
    """The smallest scale in ``SCALES`` from which the label's box at (x, y) holds at least ``PURITY`` own points
    at every larger scale (a box holding fewer than 8 points is judged by the 8 nearest); inf if none."""
    half_w, half_h = width / 2 / SCALES[0], height / 2 / SCALES[0]
    inside = (np.abs(points[:, 0] - x) <= half_w) & (np.abs(points[:, 1] - y) <= half_h)
    dx, dy, mine = np.abs(points[inside, 0] - x), np.abs(points[inside, 1] - y), own[inside]
    nearest = np.argsort(np.hypot(points[:, 0] - x, points[:, 1] - y))[:8]
    floor = own[nearest].mean()
    pure = []
    for s in SCALES:
        hit = (dx <= width / 2 / s) & (dy <= height / 2 / s)
        total = int(hit.sum())
        pure.append(mine[hit].mean() >= PURITY if total >= 8 else floor >= PURITY)
    if not pure[-1]:
        return float("inf")
    first = len(pure) - int(np.argmin(pure[::-1])) if not all(pure) else 0
    return float(SCALES[first])


def _layout(labels: list[MapLabel], spots: list[tuple[list[tuple[float, float]], Any] | None]) -> list[MapLabel]:
    """Each label, in priority order, from the first scale past its purity at which its box overlaps none of
    the labels placed before it (two boxes part for good past their conflict scale). A label with ``spots``
    must show by ``FIRST_VIEW``: it takes the first spot (then the smallest font) that lets it."""
    placed: list[MapLabel] = []
    xy = np.zeros((len(labels), 2))
    wh = np.zeros((len(labels), 2))
    lo = np.zeros(len(labels))

    def start_of(label: MapLabel, start: float) -> float:
        n = len(placed)
        if not np.isfinite(start) or not n:
            return start
        gap = np.abs(xy[:n] - (label.x, label.y))
        with np.errstate(divide="ignore"):
            apart = np.min((wh[:n] + (label.width, label.height)) / 2 / gap, axis=1)
        blocking = np.isfinite(lo[:n]) & (apart > np.maximum(lo[:n], start))
        return max(start, float(apart[blocking].max()) * 1.0001) if blocking.any() else start

    for label, ranked in zip(labels, spots):
        fitted = None if ranked is None else _first_fit(label, *ranked, start_of)
        label = fitted or MapLabel(**{**label.__dict__, "scale": start_of(label, label.scale)})
        n = len(placed)
        xy[n], wh[n], lo[n] = (label.x, label.y), (label.width, label.height), label.scale
        placed.append(label)
    return placed


def _first_fit(label: MapLabel, ranked: list[tuple[float, float]], share, start_of) -> MapLabel | None:
    """``label`` at the first of its spots (then just above, below or beside the best one; kept inside the map
    at ``FIRST_VIEW``) where it shows by then over mostly its own points (``share``), in its own font, else in
    the smallest; None where no spot does (it then shows once its purity allows)."""
    for font in dict.fromkeys((label.font, FONTS[-1])):
        width, height = box_size(label.text, font)
        (x0, y0), dx, dy = ranked[0], width / 2 / FIRST_VIEW, height / FIRST_VIEW
        beside = [(x0 + i * dx, y0 + j * dy) for j in (1, -1, 2, -2, 3, -3) for i in (0, 1, -1)]  # off a tight cluster
        for spot in [*ranked, *beside]:
            x, y = _inside(spot, width, height)
            if share(x, y, width, height) < OWN_AT_FIRST:
                continue
            moved = MapLabel(label.text, label.level, label.topic, x, y, width, height, font,
                             min(label.scale, FIRST_VIEW))
            moved = MapLabel(**{**moved.__dict__, "scale": start_of(moved, moved.scale)})
            if moved.scale <= FIRST_VIEW:
                return moved
    return None


def visible(labels: list[MapLabel], scale: float, centre: tuple[float, float], size: tuple[float, float]
            ) -> list[tuple[MapLabel, float, float]]:
    """The labels a view shows, with their boxes' top-left corners in px: those whose scale has come and
    whose box lies inside a ``size`` (px) view centred on ``centre`` (map units) at ``scale``."""
    shown = []
    for label in labels:
        if label.scale > scale:
            continue
        left = (label.x - centre[0]) * scale + size[0] / 2 - label.width / 2
        top = (centre[1] - label.y) * scale + size[1] / 2 - label.height / 2
        if left >= 0 and top >= 0 and left + label.width <= size[0] and top + label.height <= size[1]:
            shown.append((label, left, top))
    return shown
