"""Building an index in this process: documents embedded segment by segment (through the cache; on Ray
with ``ray``) and written as a new folder that replaces any index there only once whole. """

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..corpus import Document, FieldMap, Problem, check_unique, collection_name, iter_sources
from ..embedding.embed import Embedder
from ..embedding.settings import DEFAULT_MODEL, EmbedSettings
from ..jobs.on_ray import job_map
from ..store import writer
from ..store.manifest import Manifest
from ..store.settings import StoreSettings
from ..store.snapshot import Snapshot
from .embedding import embed_documents, export_query_encoder, progress_bar
from .manifest import new_manifest

if TYPE_CHECKING:
    from ..jobs.settings import RaySettings


def write_batches(batches: Iterable[writer.Batch], path: Path, manifest: Manifest, total: int,
                  ray: RaySettings | None = None, share: Snapshot | None = None) -> None:
    """Write ``(documents, vectors)`` batches as a new index, one segment each (``total`` picks the vector
    index kind; ``share``: that snapshot's kind and quantizer, for a shard cut from it)."""
    writer.create(path, manifest, total, writer.unique(batches), job_map(ray), share)


def build(documents: Iterable[Document], path: Path, model: str = DEFAULT_MODEL, embed: EmbedSettings | None = None,
          progress: bool = False, ray: RaySettings | None = None, storage: StoreSettings = StoreSettings(),
          total: int | None = None, **settings: Any) -> None:
    """Embed ``documents`` a segment at a time and write them as a new index at ``path``; an iterator is read
    one segment at a time (``total``, the expected count, then chooses the vector index)."""
    if total is None:
        documents = list(documents)
        check_unique(documents)
        total = len(documents)
    embedder = Embedder(embed or EmbedSettings(model=model))
    with ExitStack() as stack:
        bar = stack.enter_context(progress_bar(total, "embedding")).update if progress else False
        batches = ((part, embed_documents(embedder, part, bar, "embedding", ray))
                   for part in writer.chunks(documents, storage.segment_rows))
        write_batches(batches, path, new_manifest(embedder.manifest_entry(), storage=storage, **settings), total, ray)
    export_query_encoder(embedder)


def from_sources(sources: Sequence[str | Path], path: Path, fields: FieldMap = FieldMap(),
                 skip_invalid: bool = False, **options: Any) -> list[Problem]:
    """Read corpus files and build; returns the records skipped. One pass validates and counts (a bad line
    fails before the model loads), a second streams segments; with ``ray=``, workers read the files and
    write the segments (``distributed``)."""
    options["name"] = options.get("name") or collection_name(sources)
    if options.get("ray") is not None:
        from .on_ray import from_sources as on_ray

        return on_ray([Path(s) for s in sources], path, fields, skip_invalid, **options)
    skipped: list[Problem] = []
    total = sum(1 for _ in iter_sources(sources, fields, skip_invalid, []))
    build(iter_sources(sources, fields, skip_invalid, skipped), path, sources=[str(s) for s in sources],
          total=total, **options)
    return skipped
