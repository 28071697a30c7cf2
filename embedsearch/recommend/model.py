"""The direction a recommendation searches along: from liked (and unliked) papers' vectors, one unit vector
whose inner product with a paper's vector ranks the corpus. A linear model's weight vector is itself a
query for the vector index, so a recommendation costs a fit over a few thousand vectors and one search."""

from __future__ import annotations

import numpy as np

from .settings import RecommendSettings


def unit(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return (vector / norm if norm > 0 else vector).astype(np.float32)


def direction(likes: np.ndarray, unlikes: np.ndarray, background: np.ndarray,
              settings: RecommendSettings = RecommendSettings()) -> np.ndarray:
    """One liked paper and nothing else is that paper's own vector (``similar``); otherwise the settings'
    method over the likes, the unlikes and the ``background`` sample of the corpus."""
    likes = np.atleast_2d(likes).astype(np.float32)
    unlikes = np.asarray(unlikes, np.float32).reshape(-1, likes.shape[1])
    centre = unit(likes.mean(0))
    away = settings.unlike_weight * unit(unlikes.mean(0)) if len(unlikes) else 0.0
    if len(likes) == 1 and not len(unlikes) or settings.method == "centroid":
        return unit(centre - away)
    from sklearn.svm import LinearSVC

    negatives = np.concatenate([unlikes, np.asarray(background, np.float32).reshape(-1, likes.shape[1])])
    x = np.concatenate([likes, negatives])
    y = np.r_[np.ones(len(likes)), np.zeros(len(negatives))]
    weight = np.r_[np.full(len(likes), len(negatives) / max(len(likes), 1)),  # balanced classes
                   np.full(len(unlikes), settings.unlike_cost), np.ones(len(negatives) - len(unlikes))]
    model = LinearSVC(C=settings.c, tol=1e-6, max_iter=10_000, dual="auto")
    model.fit(x, y, sample_weight=weight / weight.mean())
    return unit(unit(model.coef_[0]) + settings.centroid_weight * centre - away)
