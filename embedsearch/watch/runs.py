"""New papers for a saved search: ``add`` keeps a watch with the index (its query in the grammar, or liked and
unliked ids and a library) and the ids the index held then; ``run`` ranks only the papers that arrived since
the watch last ran (every live id not seen then), lists those at least ``related`` to it, and records what
the index holds now, so the next run starts from here. A run can be written as an Atom feed (RFC 4287, the
standard library's ElementTree): one entry a new paper, its id a URN of the index and the paper's id."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import quote
from xml.etree import ElementTree as ET

import numpy as np

from ..errors import InputError
from ..index import Index
from ..retrieval import bm25
from ..retrieval import filters as flt
from ..retrieval.answer import Answer, Hit, band
from ..retrieval.query import parse
from ..store.docstore import id_hashes
from ..store.files import now
from ..store.watches import Watch, check_name, listed, load, remove, save

__all__ = ["Watch", "WatchRun", "add", "listed", "remove", "run"]  # the store's listed and remove, re-exported


@dataclass(frozen=True)
class WatchRun:
    """One run: the watch as it now stands, how many papers arrived since its last run, and those that match."""

    watch: Watch
    arrived: int
    answer: Answer

    def to_json(self) -> dict:
        return {"watch": self.watch.name, "arrived": self.arrived, "hits": [h.to_json() for h in self.answer]}


def add(index: Index, watch: Watch) -> Watch:
    """Keep ``watch`` with ``index``, checked first: a run then shows only papers added after this moment."""
    check_name(watch.name)
    if (index.path / "watches" / f"{watch.name}.json").exists():
        raise InputError(f"a watch named {watch.name!r} exists in {index.path}; remove it first "
                         f"(`embedsearch watch remove {watch.name} --index {index.path}`)")
    if not (watch.query or watch.like or watch.library):
        raise InputError("a watch needs a QUERY, --like IDS or a --library FILE")
    if watch.query:
        parse(watch.query)
    if watch.library:
        watch = replace(watch, library=str(Path(watch.library).resolve()))
    if watch.like or watch.library:
        index.recommend(watch.like, watch.unlike, watch.library or None, 1, watch.filters)  # every id and the file
    for f in watch.filters:
        flt.Filter.parse(f)
    watch = replace(watch, created=now())
    save(index.path, watch, _seen(index))
    return watch


def run(index: Index, name: str) -> WatchRun:
    watch, seen = load(index.path, name)
    ids = index.snapshot.documents.ids
    hashes = id_hashes(ids)
    position = np.searchsorted(seen, hashes)
    old = (position < len(seen)) & (seen[np.minimum(position, max(len(seen) - 1, 0))] == hashes) if len(seen) \
        else np.zeros(len(ids), dtype=bool)
    rows = np.flatnonzero(~old)
    answer = _rank(index, watch, rows)
    watch = replace(watch, last_run=now(), runs=watch.runs + 1)
    save(index.path, watch, np.unique(hashes))
    return WatchRun(watch, len(rows), answer)


def _seen(index: Index) -> np.ndarray:
    return np.unique(id_hashes(index.snapshot.documents.ids))


def _rank(index: Index, watch: Watch, rows: np.ndarray) -> Answer:
    """The arrived ``rows`` that match the watch, best first: by the query's cosine (its grammar's checks and
    years applied), or by the cosine to the closest liked paper (a library's entries included)."""
    snapshot, settings = index.snapshot, index.search_settings
    filters = [flt.Filter.parse(f) for f in watch.filters]
    query = parse(watch.query) if watch.query else None
    mask = flt.allowed(snapshot, [*filters, *(query.filters if query else ())])
    rows = rows[mask[rows]] if mask is not None and len(rows) else rows
    if not len(rows):
        return Answer((), index.generation)
    vectors = np.asarray(snapshot.embeddings[rows], dtype=np.float32)
    if query is not None:
        cosines = scores = vectors @ index.encode([query.text])[0]
        threshold = settings.bands()[0] if query.free else -np.inf  # author:X alone: every paper of theirs
        bands = settings.bands()
    else:
        from ..corpus.library import read_library
        from ..recommend import Seeds
        from ..recommend.library import match

        found = match(index.reader, read_library(Path(watch.library))) if watch.library else None
        seeds = Seeds.of(watch.like, watch.unlike, found)
        likes = np.asarray(snapshot.embeddings[[snapshot.documents.row_of[i] for i in seeds.like]], np.float32) \
            if seeds.like else np.zeros((0, vectors.shape[1]), np.float32)
        if seeds.texts:
            likes = np.concatenate([likes, index.encode([t for _, t in seeds.texts])])
        cosines = (vectors @ likes.T).max(1)
        scores = cosines
        bands = settings.bands(abstracts=True)
        threshold = bands[0]
    order = [i for i in np.argsort(-scores, kind="stable") if cosines[i] >= threshold]
    docs = snapshot.documents.get([int(rows[i]) for i in order])
    tokenize = bm25.of(snapshot).tokenizer if query is not None and snapshot.manifest.lexical.forms else None
    hits = [Hit(0, d.id, float(scores[i]), d.title, d.text, d.metadata, float(cosines[i]), None,
                band(float(cosines[i]), bands)) for i, d in zip(order, docs)
            if query is None or query.keeps(d.title, d.text, d.metadata, tokenize)][:watch.k]
    return Answer(tuple(replace(h, rank=r) for r, h in enumerate(hits, start=1)), index.generation)


NS = "http://www.w3.org/2005/Atom"


def atom_feed(index, runs: Sequence) -> str:
    """The runs' new papers as one Atom feed, its summary each abstract."""
    ET.register_namespace("", NS)
    feed = ET.Element(f"{{{NS}}}feed")
    stamp = now()
    names = ", ".join(r.watch.name for r in runs)
    for tag, text in (("title", f"embedsearch: {names} on {index.name}"), ("id", f"urn:embedsearch:{quote(str(index.path))}:{quote(names)}"),
                      ("updated", stamp)):
        ET.SubElement(feed, f"{{{NS}}}{tag}").text = text
    ET.SubElement(ET.SubElement(feed, f"{{{NS}}}author"), f"{{{NS}}}name").text = "embedsearch"
    for run in runs:
        for hit in run.answer:
            entry = ET.SubElement(feed, f"{{{NS}}}entry")
            ET.SubElement(entry, f"{{{NS}}}id").text = f"urn:embedsearch:{quote(str(index.path))}:{quote(hit.id)}"
            ET.SubElement(entry, f"{{{NS}}}title").text = hit.preview
            ET.SubElement(entry, f"{{{NS}}}updated").text = stamp
            ET.SubElement(entry, f"{{{NS}}}category", term=run.watch.name)
            ET.SubElement(entry, f"{{{NS}}}summary").text = hit.text
    return ET.tostring(feed, encoding="unicode", xml_declaration=True) + "\n"
