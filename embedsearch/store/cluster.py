"""A cluster folder on disk: ``cluster.json`` (the shards, in order, and how ids are routed to them) and
numbered cuts, ``cuts/N.json``, each naming one generation of every shard. A reader opens the newest cut and
each shard at the generation it names, so it sees one consistent state across shards even while a writer
commits to one of them; a write commits to its shard, then publishes the next cut (under the cluster's lock).
A cut that names a generation its shard has since collected can no longer be read, and is removed."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..errors import CorruptIndexError, ModelMismatchError
from ..disk.durable import write_json
from .docstore import id_hash
from .files import GENERATIONS
from .manifest import read as read_manifest
from .snapshot import Snapshot

FORMAT = 1
CLUSTER = "cluster.json"
CUTS = "cuts"
SHARDS = "shards"
ROUTING = "blake2b-64 of the id, modulo the shard count"


@dataclass(frozen=True)
class Cut:
    """Cut ``number`` of a cluster: the generation of each shard (in shard order) that belongs to it."""

    number: int
    generations: tuple[int, ...]


def owner(doc_id: str, shards: int) -> int:
    """The shard that holds ``doc_id``: the same hash the document store finds ids by."""
    return id_hash(doc_id) % shards


def is_cluster(folder: Path) -> bool:
    return (Path(folder) / CLUSTER).is_file()


def shard_names(root: Path) -> list[str]:
    file = root / CLUSTER
    try:
        payload = json.loads(file.read_text())
        names = payload["shards"]
        if payload.get("format") != FORMAT or not names or not all(isinstance(n, str) for n in names):
            raise ValueError("unexpected format or shard list")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CorruptIndexError(f"{file}: not a cluster this version reads ({exc}); rebuild it with "
                                "`embedsearch shard`") from exc
    return names


def create(root: Path, names: list[str], generations: list[int]) -> None:
    (root / CUTS).mkdir(parents=True, exist_ok=True)
    write_json(root / CLUSTER, {"format": FORMAT, "shards": names, "routing": ROUTING})
    publish(root, generations)


def newest(root: Path) -> Cut:
    numbers = _numbers(root)
    if not numbers:
        raise CorruptIndexError(f"{root / CUTS}: no cut; the cluster is damaged, rebuild it with `embedsearch shard`")
    return read(root, numbers[-1])


def read(root: Path, number: int) -> Cut:
    file = root / CUTS / f"{number}.json"
    try:
        generations = json.loads(file.read_text())["generations"]
        if not all(isinstance(g, int) and g > 0 for g in generations):
            raise ValueError("generations must be positive whole numbers")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CorruptIndexError(f"{file}: unreadable ({exc}); restore it or rebuild the cluster") from exc
    return Cut(number, tuple(generations))


def publish(root: Path, generations: list[int]) -> Cut:
    """Write the next cut (the caller holds the cluster's writer lock), then collect the cuts no reader can
    open any more; a cut is never rewritten."""
    numbers = _numbers(root)
    number = (numbers[-1] if numbers else 0) + 1
    write_json(root / CUTS / f"{number}.json", {"cut": number, "generations": list(generations)}, exclusive=True)
    collect(root)
    return Cut(number, tuple(generations))


def collect(root: Path) -> list[int]:
    """Remove the cuts, the newest kept, that name a generation its shard has collected (after the shard's
    grace period, as one index collects its own generations); the numbers removed."""
    names, numbers = shard_names(root), _numbers(root)
    gone = []
    for number in numbers[:-1]:
        try:
            generations = read(root, number).generations
        except CorruptIndexError:
            continue  # not ours to judge: ``check`` reports it
        if any(not (root / SHARDS / name / GENERATIONS / f"{g}.json").exists() for name, g in zip(names, generations)):
            (root / CUTS / f"{number}.json").unlink(missing_ok=True)
            gone.append(number)
    return gone


def _numbers(root: Path) -> list[int]:
    return sorted(int(p.stem) for p in (root / CUTS).glob("*.json") if p.stem.isdigit())


def snapshot(root: Path, number: int | None = None) -> Snapshot:
    """Cut ``number`` of the cluster at ``root`` (the newest by default) as one snapshot: every shard at the
    generation the cut names, read as one index over all their documents (``Snapshot.union``)."""
    cut = newest(root) if number is None else read(root, number)
    parts = {name: Snapshot(root / SHARDS / name, read_manifest(root / SHARDS / name), generation)
             for name, generation in zip(shard_names(root), cut.generations)}
    if len({p.manifest.model.fingerprint for p in parts.values()}) != 1:
        raise ModelMismatchError(f"{root}: its shards were built with different models; rebuild the cluster")
    return Snapshot.union(root, cut.number, parts, max(p.generation.committed_at for p in parts.values()))
