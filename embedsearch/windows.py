"""Long-text handling shared by the bulk embedder and the fast query encoder.

A text longer than the model's window is cut into balanced, consecutive windows on token
boundaries; each window is embedded and the vectors are averaged, weighted by token count, then
re-normalised. Nothing past the window is silently dropped (up to ``max_windows`` windows).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def window_spans(offsets: Sequence[tuple[int, int]], max_tokens: int,
                 max_windows: int) -> list[tuple[int, int, int]]:
    """Character spans ``(start, end, n_tokens)`` covering the tokens in balanced windows."""
    n = len(offsets)
    if n <= max_tokens or max_windows <= 1:
        return [(0, offsets[-1][1] if n else 0, max(1, min(n, max_tokens)))]
    count = min(max_windows, math.ceil(n / max_tokens))
    size = min(max_tokens, math.ceil(n / count))
    spans = []
    for first in range(0, min(n, size * count), size):
        last = min(first + size, n) - 1
        spans.append((offsets[first][0], offsets[last][1], last - first + 1))
    return spans


def pool_windows(vectors: np.ndarray, owners: Sequence[int], weights: Sequence[int],
                 n_texts: int) -> np.ndarray:
    """Average window vectors back into one unit vector per text."""
    out = np.zeros((n_texts, vectors.shape[1]), dtype=np.float64)
    np.add.at(out, np.asarray(owners), vectors * np.asarray(weights, dtype=np.float64)[:, None])
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return (out / np.where(norms == 0, 1, norms)).astype(np.float32)


def split_texts(texts: Sequence[str], offsets_per_text: Sequence[Sequence[tuple[int, int]]],
                max_tokens: int, max_windows: int) -> tuple[list[str], list[int], list[int]]:
    """Flatten texts into window strings with the index of the text each came from and its weight."""
    pieces: list[str] = []
    owners: list[int] = []
    weights: list[int] = []
    for i, (text, offsets) in enumerate(zip(texts, offsets_per_text)):
        for start, end, n_tokens in window_spans(offsets, max_tokens, max_windows):
            pieces.append(text[start:end] if len(offsets) > max_tokens else text)
            owners.append(i)
            weights.append(n_tokens)
    return pieces, owners, weights
