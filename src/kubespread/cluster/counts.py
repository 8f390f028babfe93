"""Matching-pod counts per node, shared by every rule that asks the same question.

After Karpenter's TopologyGroup: topology spread, inter-pod affinity and anti-affinity all
ask "how many pods in these namespaces match this selector, on each node?". The answer is
one :class:`PodCountGroup` per distinct (namespaces, selector, include_terminating), created
on first request and then kept current by ClusterState: a bind or unbind adds ±1 at one
node for each group the pod belongs to, which the pod's record lists, so the cost does not
grow with the number of groups or pods. Grouping nodes into topology domains is left to the
caller (a ``np.bincount`` over domain codes), so one group serves every topology key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from kubespread.api.selectors import EXISTS, IN, Selector

__all__ = ["Anchor", "GroupKey", "PodCountGroup"]

GroupKey = tuple[frozenset[str] | None, Selector, bool]

# how a group is found from a pod's labels: by one (key, value) of an In requirement, by the
# key of an Exists requirement, or checked against every pod
ANCHOR_VALUES, ANCHOR_KEY, ANCHOR_ANY, ANCHOR_NONE = "values", "key", "any", "none"


class Anchor(NamedTuple):
    """How a group is found from a pod's labels: ``kind`` is one of the ANCHOR_ kinds; ``key``
    the label key (values, key), ``values`` the In requirement's values (values)."""

    kind: str
    key: str = ""
    values: tuple[str, ...] = ()


class PodCountGroup:
    """Per-node counts of the scheduler-visible pods matching one key.

    A pod counts when it is bound, not Succeeded/Failed, in ``namespaces`` (None: any),
    matched by ``selector``, and — unless ``include_terminating`` — not terminating.
    ``counts`` is the state's capacity-sized buffer; read it through ClusterState.pod_counts.
    """

    __slots__ = ("anchor", "counts", "include_terminating", "key", "namespaces", "selector")

    def __init__(self, key: GroupKey, capacity: int) -> None:
        self.key = key
        self.namespaces, self.selector, self.include_terminating = key
        self.counts: npt.NDArray[np.int64] = np.zeros(capacity, dtype=np.int64)
        self.anchor = _anchor(self.selector)

    def matches(self, namespace: str, labels: Mapping[str, str], terminating: bool) -> bool:
        """Whether a scheduler-visible pod with these facts counts in this group."""
        if terminating and not self.include_terminating:
            return False
        if self.namespaces is not None and namespace not in self.namespaces:
            return False
        return self.selector.matches(labels)

    def __repr__(self) -> str:
        ns = "*" if self.namespaces is None else sorted(self.namespaces)
        return f"PodCountGroup(ns={ns}, {self.selector!r}, terminating={self.include_terminating})"


def _anchor(sel: Selector) -> Anchor:
    """The most selective index a matching pod must be in: an In requirement's (key, values),
    else an Exists requirement's key, else none (check every pod)."""
    if sel.nothing:
        return Anchor(ANCHOR_NONE)
    ins = [r for r in sel.requirements if r.op == IN]
    if ins:
        best = min(ins, key=lambda r: len(r.values))
        return Anchor(ANCHOR_VALUES, best.key, tuple(sorted(best.values)))
    for r in sel.requirements:
        if r.op == EXISTS:
            return Anchor(ANCHOR_KEY, r.key)
    return Anchor(ANCHOR_ANY)
