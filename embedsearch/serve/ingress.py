"""The cluster's ingress (``serve.cluster``): the newest cut, the query encoder and one Ray Serve handle per
shard; each call fans out to the shards that answer in time, merges as ``shards.merge`` does and fetches the
winners' documents. Writes go through ``Index`` over the cluster in this process, which owns the shard folders' lock."""

import asyncio
import logging
from functools import reduce
from pathlib import Path
from typing import Any

from ..corpus import Document
from ..errors import IdConflictError, InputError, UnknownIdError
from ..retrieval.search import check_k
from ..index import Index
from ..shards import Shard
from ..shards.merge import depth, hits_of, merge, request
from ..store import cuts
from ..corpus.kinds import combine
from ..store.fields import describe
from .api import bands, hits_json, shown
from .cluster_topics import ClusterTopics
from .duplicates import csv_report, read_upload, with_display
from .guard import ApiError
from .schemas import AddDocuments
from .settings import ClusterSettings

log = logging.getLogger("embedsearch.serve")
SILENT = object()  # what a shard that did not answer said (None is an answer: "no such document here")


class Ingress:
    """What the HTTP routes call: the newest cut, the encoder, and one handle per shard."""

    def __init__(self, root: str, settings: ClusterSettings, token: str | None, *handles: Any):
        self.root, self.settings, self.token, self.handles = Path(root), settings, token, list(handles)
        self.names = cuts.shard_names(self.root)
        first = Shard(self.root / cuts.SHARDS / self.names[0])
        self.index, self.search_settings = first.index, first.settings
        self._described: tuple[int, list, dict[str, str]] = (-1, [], {})
        self.topics = ClusterTopics(self.root)

    async def _call(self, shard: int, method: str, *args: Any) -> Any:
        """One shard's answer, or ``SILENT`` when it has no live replica that answers in time."""
        for attempt in range(self.settings.retries + 1):
            try:
                response = getattr(self.handles[shard], method).remote(*args)
                return await asyncio.wait_for(response, self.settings.shard_timeout_s)
            except asyncio.TimeoutError:
                response.cancel()
                break
            except Exception as exc:  # noqa: BLE001  (a dead or unreachable replica: Ray raises several kinds)
                if isinstance(exc, InputError):
                    raise
                log.warning("shard %s: %s on attempt %d", self.names[shard], type(exc).__name__, attempt + 1)
                await asyncio.sleep(0.2 * (attempt + 1))
        return SILENT

    async def _round(self, method: str, shards: list[int], args_of) -> dict[int, Any]:
        answers = await asyncio.gather(*(self._call(s, method, *args_of(s)) for s in shards))
        return {s: a for s, a in zip(shards, answers) if a is not SILENT}

    async def search(self, query: str, k: int, mode: str | None, filters: list[str],
                     display: bool = False) -> dict[str, Any]:
        query, mode = request(query, k, mode, self.search_settings)
        cut = cuts.newest(self.root)
        generation = dict(enumerate(cut.generations))
        vector = self.index.encode([query])[0]
        alive = list(range(len(self.names)))
        corpus = None
        if mode != "dense":
            shares = await self._round("stats", alive, lambda s: (generation[s], query))
            alive = sorted(shares)
            corpus = reduce(lambda a, b: a + b, shares.values()) if shares else None
        wanted = depth(k, mode, self.search_settings)
        kinds = self._kinds(cut) if filters else None
        offered = await self._round("candidates", alive,
                                    lambda s: (generation[s], vector, query, corpus, wanted, mode, filters, kinds))
        answer = await self._answer(generation, offered, k, mode, self.search_settings.bands(), display)
        return {"query": query, "cut": cut.number, **answer}

    async def info(self) -> dict[str, Any]:
        """The cluster: its shards and their sizes at the newest cut, the model, the bands and the fields."""
        cut = cuts.newest(self.root)
        sizes = await self._round("size", list(range(len(self.names))), lambda s: (cut.generations[s],))
        manifest = self.index.snapshot.manifest
        return {"name": manifest.name, "model": manifest.model.name, "cut": cut.number,
                "documents": sum(sizes.values()), "shards": {self.names[s]: n for s, n in sorted(sizes.items())},
                "missing": [n for s, n in enumerate(self.names) if s not in sizes],
                "fields": self._fields(cut), "bands": bands(self.search_settings)}

    def _fields(self, cut: cuts.Cut) -> list[dict[str, Any]]:
        """The filterable metadata fields over every shard at ``cut`` (read from the shard folders once per cut)."""
        return self._describe(cut)[1]

    def _kinds(self, cut: cuts.Cut) -> dict[str, str]:
        """The cluster's field contract at ``cut``: every shard's together, so a filter means one thing in all."""
        return self._describe(cut)[2]

    def _describe(self, cut: cuts.Cut) -> tuple[int, list, dict[str, str]]:
        if self._described[0] != cut.number:
            parts, kinds = [], []
            for name, generation in zip(self.names, cut.generations):
                snapshot = Shard(self.root / cuts.SHARDS / name, generation).index.snapshot
                parts += [(segment.folder, live) for segment, live in zip(snapshot.segments, snapshot.live)]
                kinds.append(snapshot.field_kinds)
            self._described = (cut.number, describe(parts), combine(kinds))
        return self._described

    async def similar(self, doc_id: str | None, text: str | None, k: int, display: bool = False) -> dict[str, Any]:
        """Papers related to a paper of the cluster (itself excluded) or to an abstract's text."""
        check_k(k)
        cut = cuts.newest(self.root)
        generation = dict(enumerate(cut.generations))
        skip = None
        if doc_id is None:
            vector = self.index.encode([text])[0]
        else:
            owner = cuts.owner(doc_id, len(self.names))
            found = await self._round("vector", [owner], lambda s: (generation[s], doc_id))
            if owner not in found:
                return {"id": doc_id, "cut": cut.number, "match": "none", "hits": [], "partial": True,
                        "missing": [self.names[owner]]}
            if found[owner] is None:
                raise UnknownIdError(f"no document with id {doc_id[:200]!r}; POST /similar takes an abstract's text")
            skip, vector = (owner, found[owner][0]), found[owner][1]
        offered = await self._round("candidates", list(range(len(self.names))),
                                    lambda s: (generation[s], vector, "", None, k + 1, "dense", []))
        offered = {s: [c for c in found if (s, c.row) != skip] for s, found in offered.items()}
        answer = await self._answer(generation, offered, k, "dense", self.search_settings.bands(abstracts=True),
                                    display)
        return {**({"id": doc_id} if doc_id is not None else {}), "cut": cut.number, **answer}

    async def document(self, doc_id: str, display: bool = False) -> dict[str, Any]:
        """A document of the cluster, from the shard its id routes to."""
        cut = cuts.newest(self.root)
        owner = cuts.owner(doc_id, len(self.names))
        found = await self._round("vector", [owner], lambda s: (cut.generations[s], doc_id))
        if owner not in found:
            raise ApiError(503, f"{self.names[owner]}, which holds {doc_id[:200]!r}, has no replica that answers; "
                                "try again shortly")
        if found[owner] is None:
            raise UnknownIdError(f"no document with id {doc_id[:200]!r}")
        documents = await self._round("documents", [owner], lambda s: (cut.generations[s], [found[owner][0]]))
        if owner not in documents:
            raise ApiError(503, f"{self.names[owner]} stopped answering; try again shortly")
        doc = documents[owner][0]
        return {**doc.to_record(), "cut": cut.number, "topic": self.topics.state.topic_of(doc_id),
                **({"display": shown(doc)} if display else {})}

    async def duplicates_of(self, doc_id: str, display: bool = False) -> dict[str, Any]:
        """A paper's near-duplicates among every shard's papers (``Cluster.duplicates(of=)``, read from the
        shard folders in this process, not through the replicas)."""
        def judge() -> dict[str, Any]:
            cluster = Index.load(self.root)
            out = {**cluster.duplicates(of=[doc_id]).to_json(), "cut": cluster.generation}
            return with_display(out, None, cluster.document) if display else out

        return await asyncio.to_thread(judge)

    async def check_duplicates(self, documents: list[Document], display: bool = False,
                               **overrides: Any) -> dict[str, Any]:
        """New abstracts judged against every shard (``Index.check_duplicates`` over the cluster); nothing is added."""
        def judge() -> dict[str, Any]:
            cluster = Index.load(self.root)
            out = {**cluster.check_duplicates(documents, **overrides).to_json(), "cut": cluster.generation}
            return with_display(out, {d.id: d for d in documents}, cluster.document) if display else out

        return await asyncio.to_thread(judge)

    async def check_file(self, body: bytes, name: str) -> Any:
        """An uploaded batch judged against every shard, as a CSV report (as ``dedup --against --csv``)."""
        documents = read_upload(body, name)
        report = await asyncio.to_thread(lambda: Index.load(self.root).check_duplicates(documents))
        return csv_report(report, len(documents))

    async def add(self, body: AddDocuments) -> dict[str, Any]:
        """Embed and add documents, each to its shard, as one new cut; with ``check_duplicates``, each is
        judged against every shard under the write's lock first (``Index.add_checked`` over the cluster)."""
        documents = [d.document(n) for n, d in enumerate(body.documents)]
        if not body.check_duplicates:
            cluster = await asyncio.to_thread(self._write, "add", documents)
            return {"added": len(documents), "cut": cluster.generation, "documents": len(cluster), "skipped": []}
        def checked() -> tuple[Index, Any]:
            cluster = Index.load(self.root)  # moved to the new cut by add_checked
            return cluster, self._write("add_checked", documents, body.on_duplicate, cluster=cluster)

        cluster, report = await asyncio.to_thread(checked)
        flagged = sorted({p.a for p in report.pairs})
        skipped = flagged if body.on_duplicate == "skip" else []
        return {"added": len(documents) - len(skipped), "cut": cluster.generation, "documents": len(cluster),
                "skipped": skipped, "duplicates": report.to_json()}

    async def remove(self, doc_id: str) -> dict[str, Any]:
        cluster = await asyncio.to_thread(self._write, "remove", [doc_id])
        return {"removed": 1, "cut": cluster.generation, "documents": len(cluster)}

    async def compact(self) -> dict[str, Any]:
        cluster = await asyncio.to_thread(self._write, "compact")
        return {"cut": cluster.generation, "documents": len(cluster),
                "segments": {name: len(p.segments) for name, p in cluster.snapshot.parts.items()}}

    def _write(self, method: str, *items: Any, cluster: Index | None = None) -> Any:
        try:
            return getattr(cluster or Index.load(self.root), method)(*items, wait=self.settings.lock_wait_s)
        except (IdConflictError, UnknownIdError) as exc:
            raise type(exc)(str(exc).replace(str(self.root), "the cluster")) from None

    async def _answer(self, generation: dict[int, int], offered: dict[int, list], k: int, mode: str,
                      bands: tuple[float, float], display: bool = False) -> dict[str, Any]:
        """Merge what the shards offered, fetch the winners' documents; shards that did not answer are named."""
        placed = merge([offered.get(s, []) for s in range(len(self.names))], k, mode, self.search_settings)
        shown = sorted({p.shard for p in placed})
        fetched = await self._round("documents", shown,
                                    lambda s: (generation[s], [p.ranked.row for p in placed if p.shard == s]))
        placed = [p for p in placed if p.shard in fetched]
        hits = hits_of(placed, {s: (lambda rows, s=s: fetched[s]) for s in fetched}, bands)
        missing = [self.names[s] for s in range(len(self.names)) if s not in offered or (s in shown and s not in fetched)]
        return {**hits_json(hits, display), "partial": bool(missing), "missing": missing}
