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

from ..jobs.runner import JobRunner, local_map
from ..errors import CorruptIndexError, InputError
from ..store.snapshot import Snapshot
from . import umap_hdbscan as cl
from .assemble import Corpus, assemble, enough
from .consensus import fit_labels
from .extend import extend
from .results import Topic, TopicModel
from .sample import fit_and_assign
from .saved import FOLDER, FORMAT, cached, load, problems, save

__all__ = ["FOLDER", "FORMAT", "Topic", "TopicModel", "cached", "fit", "load", "problems", "save"]

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
