"""``.npy`` files read and written block by block with plain file reads and writes, never memory-mapped:
a merge passes gigabytes through them, and the pages of a mapping would stay resident (and count) for as
long as the mapping lives, where a read block is freed as soon as it is dropped."""

from __future__ import annotations

import mmap
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CorruptIndexError


class NpyRows:
    """Rows ``start..stop`` of a C-order ``.npy`` file, read on demand. Slicing gives another view and reads
    nothing; ``np.asarray`` (or a list of rows) reads. It is what a vector backend builds a merged index from."""

    def __init__(self, path: Path, start: int = 0, stop: int | None = None):
        self.path = Path(path)
        try:
            with self.path.open("rb") as fh:
                version = np.lib.format.read_magic(fh)
                read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
                    np.lib.format.read_array_header_2_0
                shape, fortran, dtype = read_header(fh)
                self._offset = fh.tell()
        except (OSError, ValueError) as exc:
            raise CorruptIndexError(f"{self.path}: unreadable ({str(exc).strip()[:120]}); rebuild the index") from exc
        if fortran or not shape:
            raise CorruptIndexError(f"{self.path}: not a row-major array; rebuild the index")
        self.dtype = dtype
        self._row_shape = tuple(shape[1:])
        self._row_items = int(np.prod(self._row_shape, dtype=np.int64))
        self.start, self.stop = start, shape[0] if stop is None else min(stop, shape[0])
        if self.path.stat().st_size < self._offset + shape[0] * self._row_items * dtype.itemsize:
            raise CorruptIndexError(f"{self.path}: shorter than its header says; restore it or rebuild the index")

    @property
    def shape(self) -> tuple[int, ...]:
        return (len(self), *self._row_shape)

    def __len__(self) -> int:
        return max(0, self.stop - self.start)

    def read(self, start: int, stop: int) -> np.ndarray:
        """Rows ``start..stop`` of this view as a fresh array."""
        start, stop = self.start + start, min(self.start + stop, self.stop)
        count = max(0, stop - start)
        with self.path.open("rb") as fh:
            fh.seek(self._offset + start * self._row_items * self.dtype.itemsize)
            flat = np.fromfile(fh, dtype=self.dtype, count=count * self._row_items)
        return flat.reshape((count, *self._row_shape))

    def blocks(self, rows: int):
        """``(first row, block)`` over the whole view, ``rows`` at a time."""
        for start in range(0, len(self), max(1, rows)):
            yield start, self.read(start, start + rows)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            start, stop, step = key.indices(len(self))
            if step != 1:
                return np.asarray(self)[key]
            return NpyRows(self.path, self.start + start, self.start + max(start, stop))
        if isinstance(key, (int, np.integer)):
            return self.read(int(key), int(key) + 1)[0]
        wanted = np.asarray(key, dtype=np.int64)
        order = np.argsort(wanted, kind="stable")
        out = np.empty((len(wanted), *self._row_shape), dtype=self.dtype)
        block = 65_536
        for first in np.unique(wanted // block):
            chosen = order[(wanted[order] // block) == first]
            rows = self.read(int(first) * block, int(first + 1) * block)
            out[chosen] = rows[wanted[chosen] - int(first) * block]
        return out

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self.read(0, len(self))
        return out if dtype is None else out.astype(dtype, copy=False)


def mapped(path: Path, scattered: bool = False) -> np.ndarray:
    """A ``.npy`` file's memory-mapped pages as a plain array (``numpy.memmap``'s Python hooks cost per slice).
    ``scattered`` turns read-ahead off for a mapping read a few rows at a time (a search's re-scoring): cold,
    each row then costs one page read instead of a read-ahead window (400 rows of a 1M index here: 21 ms
    against 1.3 s). A scan wants read-ahead, so the default keeps it."""
    matrix = np.load(path, mmap_mode="r")
    if scattered and isinstance(matrix, np.memmap) and matrix._mmap is not None:
        matrix._mmap.madvise(mmap.MADV_RANDOM)
    return np.asarray(matrix)


class NpyWriter:
    """Writes a ``.npy`` file of a known shape block by block; ``close`` fails unless every row came."""

    def __init__(self, path: Path, dtype: Any, shape: tuple[int, ...]):
        self.path, self.dtype, self.shape = Path(path), np.dtype(dtype), tuple(int(s) for s in shape)
        self.written = 0
        self._fh = self.path.open("wb")
        header = {"descr": np.lib.format.dtype_to_descr(self.dtype), "fortran_order": False, "shape": self.shape}
        np.lib.format.write_array_header_2_0(self._fh, header)

    def append(self, rows: np.ndarray) -> None:
        rows = np.ascontiguousarray(rows, dtype=self.dtype)
        if rows.shape[1:] != self.shape[1:] or self.written + len(rows) > self.shape[0]:
            raise ValueError(f"{self.path}: rows of shape {rows.shape} do not fit {self.shape}")
        self._fh.write(rows.tobytes())
        self.written += len(rows)

    def close(self) -> None:
        self._fh.close()
        if self.written != self.shape[0]:
            raise ValueError(f"{self.path}: {self.written} rows written of {self.shape[0]}")

    def __enter__(self) -> NpyWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            self.close()
        else:
            self._fh.close()
