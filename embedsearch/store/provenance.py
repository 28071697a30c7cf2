"""What made an index: the versions of the libraries whose numbers end up in it and the CPU code path
torch ran, recorded in the manifest at build time so a result can be traced to the machine and stack
that produced it (float noise from another CPU path moves a single UMAP fit: benchmarks/HISTORY.md)."""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata
from typing import Any

PACKAGES = ("embedsearch", "numpy", "faiss-cpu", "torch", "sentence-transformers", "onnxruntime", "umap-learn",
            "hdbscan", "scikit-learn")


def versions() -> dict[str, str | None]:
    """Installed versions, read from package metadata (nothing is imported)."""
    found: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def torch_capability() -> str | None:
    """The CPU kernels torch chose (``AVX512``, ``AVX2``, ...) when this process loaded it; ``None`` when it
    did not (every vector came from the cache, made by an earlier process)."""
    torch = sys.modules.get("torch")
    return torch.backends.cpu.get_cpu_capability() if torch is not None else None


CODE_PATHS = ("ATEN_CPU_CAPABILITY", "NUMBA_CPU_NAME", "EMBEDSEARCH_ONNX_OPTIMIZATION")  # switches of float noise


def provenance() -> dict[str, Any]:
    return {"versions": versions(), "python": platform.python_version(), "machine": platform.machine(),
            "torch_cpu_capability": torch_capability(),
            "environment": {k: os.environ[k] for k in CODE_PATHS if k in os.environ}}
