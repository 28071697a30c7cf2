"""What a writer takes in: batches of documents and their vectors, checked on the way (ids unique across
every batch, metadata fitting the field contract) and cut to segment size."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from ..corpus import Document, UniqueIds
from ..corpus.kinds import FieldKinds, Mismatch
from ..errors import FieldConflictError, InputError

Batch = tuple[Sequence[Document], np.ndarray]


def admit(contract: FieldKinds, documents: Iterable[Document], outcome: str) -> None:
    """Every document's metadata checked against (and learned into) ``contract``; the first that does not
    fit is an error naming it (a ``FieldConflictError`` where the field holds another kind)."""
    for doc in documents:
        problem = contract.admit(doc.metadata)
        if problem:
            error = FieldConflictError if isinstance(problem, Mismatch) else InputError
            raise error(f"document {doc.id!r}: {problem}; {outcome}")


def unique(batches: Iterable[Batch]) -> Iterator[Batch]:
    """Pass batches through, failing on an empty corpus, a vector count that does not match, or an id seen before."""
    ids = UniqueIds()
    for documents, matrix in batches:
        if len(matrix) != len(documents):
            raise InputError(f"{len(matrix)} vectors for {len(documents)} documents")
        for doc in documents:
            ids.add(doc.id)
        yield documents, matrix
    ids.finish()


def chunks(documents: Iterable[Document], size: int) -> Iterator[list[Document]]:
    """Lists of at most ``size`` documents, read from ``documents`` one list at a time."""
    from itertools import islice

    stream = iter(documents)
    while part := list(islice(stream, size)):
        yield part
