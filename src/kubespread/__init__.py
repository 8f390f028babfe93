"""kubespread: Kubernetes topology-aware pod placement, faithful to kube-scheduler.

``load`` and ``Manifests`` are imported on first use, so ``kubespread --version`` (and any
import of a light submodule) does not pay for the API models and the loader."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubespread.io import Manifests, load

try:
    __version__ = version("kubespread")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+unknown"

__all__ = ["Manifests", "__version__", "load"]


def __getattr__(name: str) -> Any:
    if name in ("Manifests", "load"):
        from kubespread import io

        return getattr(io, name)
    raise AttributeError(f"module 'kubespread' has no attribute {name!r}")
