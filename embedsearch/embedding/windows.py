"""Long-text handling shared by the bulk embedder and the fast query encoder.

The first window is the text as plain truncation would read it (the opening carries most of an
abstract's topic); the tokens past it become further windows. Window vectors are averaged with
weights proportional to their token counts, the later windows scaled by ``tail_weight``, then
re-normalised. So nothing past the model's window is silently dropped (up to ``max_windows``),
while the truncated reading still dominates: on SciFact's train split a tail weight of 0.25 beat
both plain truncation and equal weighting (benchmarks/HISTORY.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def window_spans(offsets: Sequence[tuple[int, int]], max_tokens: int,
                 max_windows: int) -> list[tuple[int, int, int]]:
    """Character spans ``(start, end, n_tokens)`` of consecutive windows of at most ``max_tokens`` tokens."""
    n = len(offsets)
    if n <= max_tokens or max_windows <= 1:
        return [(0, offsets[-1][1] if n else 0, max(1, min(n, max_tokens)))]
    spans = []
    for first in range(0, min(n, max_tokens * max_windows), max_tokens):
        last = min(first + max_tokens, n) - 1
        spans.append((offsets[first][0], offsets[last][1], last - first + 1))
    return spans


def split_texts(texts: Sequence[str], offsets_per_text: Sequence[Sequence[tuple[int, int]]], max_tokens: int,
                max_windows: int, tail_weight: float) -> tuple[list[str], list[int], list[float]]:
    """Flatten texts into window strings, the index of the text each came from, and its weight."""
    pieces: list[str] = []
    owners: list[int] = []
    weights: list[float] = []
    for i, (text, offsets) in enumerate(zip(texts, offsets_per_text)):
        spans = window_spans(offsets, max_tokens, max_windows)
        for w, (start, end, n_tokens) in enumerate(spans):
            pieces.append(text if len(spans) == 1 else text[start:end])
            owners.append(i)
            weights.append(n_tokens * (1.0 if w == 0 else tail_weight))
    return pieces, owners, weights


def pool_windows(vectors: np.ndarray, owners: Sequence[int], weights: Sequence[float], n_texts: int) -> np.ndarray:
    """Weighted average of window vectors back into one unit vector per text."""
    out = np.zeros((n_texts, vectors.shape[1]), dtype=np.float64)
    np.add.at(out, np.asarray(owners), vectors * np.asarray(weights, dtype=np.float64)[:, None])
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return (out / np.where(norms == 0, 1, norms)).astype(np.float32)
