"""kubespread: Kubernetes topology-aware pod placement, faithful to kube-scheduler.

``load`` and ``Manifests`` are imported on first use, so ``kubespread --version`` (and any
import of a light submodule) does not pay for the API models and the loader; ``__version__``
is read on first use too (``importlib.metadata`` and the ``email`` parser it imports cost
more than a command's own imports of kubespread's small modules)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubespread.io import Manifests, load

    __version__: str

__all__ = ["Manifests", "__version__", "load"]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kubespread")
    except PackageNotFoundError:  # running from a source tree without installation
        return "0.0.0+unknown"


def __getattr__(name: str) -> Any:
    if name in ("Manifests", "load"):
        from kubespread import io

        return getattr(io, name)
    if name == "__version__":
        value = globals()["__version__"] = _version()
        return value
    raise AttributeError(f"module 'kubespread' has no attribute {name!r}")
