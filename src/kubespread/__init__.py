"""kubespread: Kubernetes topology-aware pod placement, faithful to kube-scheduler."""

from importlib.metadata import PackageNotFoundError, version

from kubespread.io import Manifests, load

try:
    __version__ = version("kubespread")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+unknown"

__all__ = ["Manifests", "__version__", "load"]
