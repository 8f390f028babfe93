"""The per-node vectors ClusterState keeps: their names, the int64 bound their values are held
within, and how a buffer grows. Node ids index them (see :mod:`kubespread.cluster.state`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from kubespread.cluster.nodeinfo import NodeInfo

__all__ = ["NODE_VECTORS", "grown", "int64", "write_requests"]

#: per-node int64 vectors kept by ClusterState (see node_vector)
NODE_VECTORS: Final = (
    "allocatable_milli_cpu",
    "allocatable_memory",
    "allocatable_ephemeral_storage",
    "allocatable_pods",
    "requested_milli_cpu",
    "requested_memory",
    "requested_ephemeral_storage",
    "non_zero_milli_cpu",
    "non_zero_memory",
    "pod_count",
)
#: framework.Resource's fields are int64: an amount beyond (a decimal quantity such as pods:
#: "9223372036854775808"; binary ones are capped when parsed) is held in the node vectors as the
#: largest int64 rather than overflowing them; NodeInfo keeps the exact Python ints
_INT64_MAX: Final = 2**63 - 1


def int64(amount: int) -> int:
    """``amount`` held within int64, for the node vectors."""
    return max(-_INT64_MAX - 1, min(amount, _INT64_MAX))


def write_requests(vectors: dict[str, npt.NDArray[np.int64]], info: NodeInfo) -> None:
    """A node's requests into its vectors: from the exact totals, held within int64 (a bound
    pod may request "9223372036854775808")."""
    i, r, nz = info.index, info.requested, info.non_zero_requested
    vectors["requested_milli_cpu"][i] = int64(r.milli_cpu)
    vectors["requested_memory"][i] = int64(r.memory)
    vectors["requested_ephemeral_storage"][i] = int64(r.ephemeral_storage)
    vectors["non_zero_milli_cpu"][i] = int64(nz.milli_cpu)
    vectors["non_zero_memory"][i] = int64(nz.memory)


def grown(a: np.ndarray, n: int, capacity: int) -> np.ndarray:
    """A copy of per-node buffer ``a`` with room for ``capacity`` nodes, its first ``n`` kept
    (the rest zero, or None for an object array)."""
    b = np.zeros(capacity, dtype=a.dtype) if a.dtype != object else np.full(capacity, None, object)
    b[:n] = a[:n]
    return b
