"""How every table spells a workload: ``deploy/checkout``, ``rs/shop/web-6d4f``, ``pod/x``
(kubectl's ``kind/name``, the namespace before the name unless it is ``default``). One
spelling, so a workload found in one command's table is found by the same text in another's."""

from __future__ import annotations

from kubespread.cluster.workloads import WorkloadRef

__all__ = ["workload_label"]


def workload_label(ref: WorkloadRef | None, namespace: str = "default", pod: str = "") -> str:
    """``ref.short``; for no workload (a pod without a controller), ``pod/<pod>`` in
    ``namespace``."""
    if ref is not None:
        return ref.short
    return WorkloadRef(namespace, "Pod", pod).short
