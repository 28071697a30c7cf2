"""The map page's data, packed for a browser: positions quantised to 16 bits and a topic number per paper as
one binary block, titles and ids as newline-joined text, each gzip-compressed and base64-encoded (the page
inflates them with the browser's own ``DecompressionStream``). About 6 bytes a paper before its title."""

from __future__ import annotations

import base64
import gzip
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..corpus import Document
from ..errors import InputError
from . import map_labels
from .results import TopicModel

UNASSIGNED = 65535
TEXTS_UP_TO = 20_000  # a standalone page carries abstracts up to this many papers; above, titles only
TITLE_CHARS = 110
BATCH = 10_000


def shown_rows(assigned: np.ndarray, max_points: int | None = None, seed: int = 0) -> np.ndarray:
    """The rows the page draws: all of them unless ``max_points`` asks for fewer, then a seeded sample of about
    ``max_points`` in which every topic (and the unassigned) keeps its share, with at least five points each."""
    if max_points is not None and max_points < 1:
        raise InputError(f"--max-points must be at least 1, got {max_points}")
    if max_points is None or len(assigned) <= max_points:
        return np.arange(len(assigned))
    rng = np.random.default_rng(seed)
    order = np.argsort(assigned, kind="stable")
    _, starts = np.unique(assigned[order], return_index=True)
    picked = []
    for rows in np.split(order, starts[1:]):
        take = min(len(rows), max(5, round(max_points * len(rows) / len(assigned))))
        picked.append(rng.choice(rows, take, replace=False))
    return np.sort(np.concatenate(picked))


def unit_square(coords: np.ndarray) -> np.ndarray:
    """Coordinates moved and scaled (one factor for both axes) so the longer side spans [-0.96, 0.96]."""
    low, high = coords.min(axis=0), coords.max(axis=0)
    half = max(float((high - low).max()) / 2, 1e-9) / 0.96
    return ((coords - (low + high) / 2) / half).astype(np.float32)


def pack(model: TopicModel, documents: Any, level: int = 0, max_points: int | None = None,
         texts: bool = True) -> dict[str, Any]:
    """Everything the page draws, as JSON-ready values: points, titles, ids (and abstracts when ``texts`` and
    at most ``TEXTS_UP_TO`` papers), the level's topics, the coarser levels' topics that have labels (so the
    legend lists every topic a label names), and every label with its level and the zoom it shows from."""
    assigned = np.asarray(model.assignments[level])
    rows = shown_rows(assigned, max_points, model.settings.get("seed", 0))
    coords = unit_square(np.asarray(model.coordinates, dtype=np.float64))
    topics = model.topics(level)
    colour_of = np.full(len(topics) + 1, UNASSIGNED, dtype=np.uint16)
    colour_of[:len(topics)] = np.arange(len(topics))
    quantised = np.round((coords[rows] + 1) / 2 * 65534).astype("<u2")
    topic = colour_of[np.where(assigned[rows] >= 0, assigned[rows], len(topics))].astype("<u2")
    block = np.concatenate([quantised[:, 0], quantised[:, 1], topic]).tobytes()
    titles, ids, abstracts = _texts(documents, rows, texts and len(rows) <= TEXTS_UP_TO)
    labels = map_labels.of_model(model, coords, level)
    return {"n": int(len(rows)), "total": len(model.ids), "points": _blob(block), "titles": _blob("\n".join(titles)),
            "ids": _blob("\n".join(ids)), "texts": _blob("\n".join(abstracts)) if abstracts else None,
            "topics": [{"id": t.id, "name": t.title, "label": t.label, "size": t.size} for t in topics],
            "broader": [{"level": d, "topics": [{"id": t.id, "name": t.title, "size": t.size} for t in model.levels[d]]}
                        for d in range(level + 1, len(model.levels)) if any(lb.level == d for lb in labels)],
            "level": level, "labels": [lb.to_json() for lb in labels]}


def _texts(documents: Sequence[Document] | Any, rows: np.ndarray, abstracts: bool
           ) -> tuple[list[str], list[str], list[str]]:
    titles, ids, texts = [], [], []
    for start in range(0, len(rows), BATCH):
        chunk = rows[start:start + BATCH].tolist()
        docs = documents.get(chunk) if hasattr(documents, "get") else [documents[r] for r in chunk]
        for doc in docs:
            shown = doc.readable()
            title = " ".join((shown.title or shown.first_sentence(TITLE_CHARS)).split())
            titles.append(title if len(title) <= TITLE_CHARS else title[:TITLE_CHARS - 1] + "…")
            ids.append(" ".join(shown.id.split()))
            if abstracts:
                texts.append(" ".join(shown.text.split()))
    return titles, ids, texts


def _blob(data: bytes | str) -> str:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")
