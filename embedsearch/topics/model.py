"""Fitting the topic model of an index (``results`` holds what it returns) and keeping it in the index folder.

Results live in ``<index>/topics/<key>/`` (JSON + ``.npy``), keyed by the resolved settings and the corpus
version: after an ``add`` or ``remove`` the last fit is carried over to the new version (``extend``) or fitted
again, so topics of another version are never served."""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
from dataclasses import asdict
from pathlib import Path

import numpy as np

from ..engine.jobs import JobRunner, local_map
from ..errors import CorruptIndexError, EmbedsearchError, InputError
from ..disk.durable import file_records, sha256, staged_folder
from ..store.snapshot import Snapshot
from . import umap_hdbscan as cl
from .assemble import Corpus, assemble, enough
from .consensus import fit_labels
from .extend import extend
from .results import Topic, TopicModel
from .sample import fit_and_assign

FOLDER = "topics"
FORMAT = 6  # part of the cache key: raised when saved results would differ (2: labels, sample assignment; 3: consensus;
#            4: labels chosen by meaning; 5: checksums.json;
#            6: phrase names)
CHECKSUMS = "checksums.json"
log = logging.getLogger("embedsearch.topics")


def fit(snapshot: Snapshot, settings: cl.TopicSettings = cl.TopicSettings(), map_jobs: JobRunner = local_map,
        level: int = 0, refit: bool = False) -> TopicModel:
    """Cluster a snapshot's embeddings into a topic hierarchy (cached in the index folder, keyed by corpus
    version and settings). Above ``settings.sample`` documents, fit on a sample and assign the rest through
    ``map_jobs``. After adds and removes the last fit is carried over (``extend``: stable labels) unless
    ``refit`` or too much changed. A ``level`` the hierarchy lacks is an error raised before anything is
    saved; damaged cached results are fitted again."""

    resolved = settings.resolve(len(snapshot))
    if not 0 <= level < settings.max_levels(len(snapshot)):
        raise InputError(f"--level {level} does not exist; topics of {len(snapshot)} documents have at most "
                         f"{settings.max_levels(len(snapshot))} levels (0 is the finest)")
    folder = snapshot.path / FOLDER / _key(snapshot, resolved)
    if (folder / "model.json").exists() and not refit:
        try:
            model = load(folder)
            model.topics(level)
            return model
        except CorruptIndexError as exc:
            log.warning("%s; fitting again", exc)
            shutil.rmtree(folder, ignore_errors=True)
    base = None if refit else latest(snapshot.path / FOLDER, settings)
    model = extend(base, snapshot) if base is not None else None
    if model is not None:
        model.topics(level)
        save(model, folder)
        prune(snapshot.path / FOLDER, settings)
        return model
    cl.enable_numba_cache()
    embeddings = np.asarray(snapshot.embeddings, dtype=np.float32)
    if len(snapshot) > resolved.sample:
        labels, coordinates = fit_and_assign(embeddings, resolved, map_jobs)
    else:
        indices, distances, _ = cl.neighbour_graph(snapshot, resolved.graph_neighbours)
        labels = fit_labels(embeddings, indices, distances, resolved)
        knn = (indices[:, :resolved.neighbours], distances[:, :resolved.neighbours], None)
        coordinates = None
    enough(labels, len(snapshot), resolved)
    if coordinates is None:
        coordinates = cl.reduce(embeddings, knn, resolved, 2)
    corpus = Corpus(tuple(snapshot.documents.ids), [d.embed_text for d in snapshot.documents], embeddings,
                    snapshot.encoder.encode, snapshot.generation.corpus_version)
    model = assemble(corpus, labels, coordinates, resolved, settings)
    model.topics(level)
    if refit and folder.exists():
        shutil.rmtree(folder, ignore_errors=True)
    save(model, folder)
    return model


def _saved(root: Path, settings: cl.TopicSettings) -> list[tuple[int, Path]]:
    """Saved fits under ``root`` (an index's or a cluster's ``topics``) with the same requested settings,
    newest corpus version first."""
    wanted = asdict(settings)
    found = []
    for folder in root.iterdir() if root.is_dir() else ():
        try:
            head = json.loads((folder / "model.json").read_text())
        except (OSError, ValueError):
            continue
        meta = head.get("settings", {})
        if head.get("format") == FORMAT and meta.get("requested") == wanted:
            found.append((meta.get("corpus_version", -1), folder))
    return sorted(found, reverse=True)


def latest(root: Path, settings: cl.TopicSettings) -> TopicModel | None:
    """The most recent saved fit under ``root`` with the same requested settings, if any."""
    for _, folder in _saved(root, settings):
        try:
            return load(folder)
        except CorruptIndexError as exc:
            log.warning("%s; not carried over", exc)
    return None


KEEP_CARRIED = 2


def prune(root: Path, settings: cl.TopicSettings) -> None:
    """Drop carried-over fits older than the newest ``KEEP_CARRIED`` (the previous one stays for readers
    still on the previous generation): a service that carries topics over after every commit would
    otherwise keep one saved model per commit."""
    for _, folder in _saved(root, settings)[KEEP_CARRIED:]:
        shutil.rmtree(folder, ignore_errors=True)


def _key(snapshot: Snapshot, resolved: cl.TopicSettings) -> str:
    payload = json.dumps([asdict(resolved), snapshot.generation.corpus_version, len(snapshot), FORMAT], sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:12]


def save(model: TopicModel, folder: Path) -> None:
    """Write atomically (``store.staged_folder``): a concurrent fit of the same key keeps the first result."""
    with staged_folder(folder) as tmp:
        payload = {"format": FORMAT, "settings": model.settings, "ids": list(model.ids), "attached": list(model.attached),
                   "assignments": [list(a) for a in model.assignments],
                   "levels": [[t.to_json() for t in level] for level in model.levels]}
        (tmp / "model.json").write_text(json.dumps(payload, ensure_ascii=False))
        np.save(tmp / "coordinates.npy", model.coordinates)
        for depth, centre in enumerate(model.centroids):
            np.save(tmp / f"centroids-{depth}.npy", centre)
        (tmp / CHECKSUMS).write_text(json.dumps(file_records(tmp), indent=1))


def _verify(folder: Path) -> dict:
    """Every saved file against the size and SHA-256 recorded when it was written (as a segment's are)."""
    try:
        records = json.loads((folder / CHECKSUMS).read_text())
    except (OSError, ValueError) as exc:
        raise CorruptIndexError(f"{folder / CHECKSUMS}: unreadable ({type(exc).__name__}); these topic results are "
                                "fitted again by the next `embedsearch topics`") from exc
    if not isinstance(records, dict):
        raise CorruptIndexError(f"{folder / CHECKSUMS}: not a record of files; these topic results are fitted again "
                                "by the next `embedsearch topics`")
    for name in sorted({"model.json", "coordinates.npy", *records}):
        record, file = records.get(name), folder / name
        if not isinstance(record, dict) or not file.is_file() or file.stat().st_size != record.get("bytes") or \
                sha256(file) != record.get("sha256"):
            raise CorruptIndexError(f"{file}: does not match the checksum {CHECKSUMS} recorded; these topic results "
                                    "are fitted again by the next `embedsearch topics`")
    return records


def load(folder: Path) -> TopicModel:
    """Saved topic results, or a one-line ``CorruptIndexError`` naming the damaged folder."""
    records = _verify(folder)
    try:
        payload = json.loads((folder / "model.json").read_text())
        levels = tuple(tuple(Topic(t["id"], t["label"], t["size"], tuple(t["keywords"]),
                                   tuple(t["representatives"]), tuple(t["members"]), t["parent"], t.get("name", ""))
                             for t in level)
                       for level in payload["levels"])
        if any(f"centroids-{d}.npy" not in records for d in range(len(levels))):
            raise KeyError("centroids")
        centres = tuple(np.load(folder / f"centroids-{d}.npy") for d in range(len(levels)))
        model = TopicModel(levels, tuple(tuple(a) for a in payload["assignments"]), tuple(payload["ids"]),
                           tuple(payload["attached"]), payload["settings"], np.load(folder / "coordinates.npy"),
                           centres)
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        raise CorruptIndexError(f"{folder}: damaged topic results ({type(exc).__name__}); they are fitted again "
                                "by the next `embedsearch topics`") from exc
    if not levels or any(len(a) != len(model.ids) for a in model.assignments) or \
            len(model.coordinates) != len(model.ids):
        raise CorruptIndexError(f"{folder}: topic results disagree with themselves; they are fitted again by the "
                                "next `embedsearch topics`")
    return model


def cached(snapshot: Snapshot) -> TopicModel | None:
    """The most recently fitted topic model of this corpus version, if any (no fitting); damaged
    results count as none, so they never break a search."""
    root = snapshot.path / FOLDER
    if not root.is_dir():
        return None
    fitted = sorted((p for p in root.iterdir() if (p / "model.json").exists()), key=lambda p: p.stat().st_mtime)
    for folder in reversed(fitted):
        try:
            model = load(folder)
        except CorruptIndexError:
            continue
        if model.settings.get("corpus_version") == snapshot.generation.corpus_version:
            return model
    return None


def problems(root: Path) -> list[str]:
    """What is wrong with the saved topic results of the index at ``root``, one line each."""
    folder = root / FOLDER
    found = []
    for item in sorted(folder.iterdir()) if folder.is_dir() else []:
        if item.name.startswith("."):
            continue
        try:
            load(item)
        except EmbedsearchError as exc:
            found.append(f"{exc} (search is unaffected)")
    return found
