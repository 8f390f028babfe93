"""Pending pods by content, for the scheduling queue's queueing hints.

On every cluster change the queue asks the hints of each unschedulable pod's rejecting plugins
(:mod:`kubespread.scheduler.queue`). The replicas of one ReplicaSet ask the same question, so
the queue asks it once per *template*: pods that :class:`PodTemplates` gives one id are equal
in everything a hint may read of the pending pod — its namespace, labels, annotations, owner
references (PodTopologySpread's default constraints follow the controller) and its whole spec
(requests, ports, tolerations, node selector and affinity, spread constraints, priority,
scheduler name...). They differ only in name, uid, status and bookkeeping fields, which no hint
reads of the pending pod, except its own key: a hint comparing the event's pod with the pending
pod (its own update) is asked per pod by the queue, never shared.

Ids are by content, never by object identity: two pods built separately from one template get
one id, and a pod changed in place gets a new one once the queue sees a new object.
"""

from __future__ import annotations

import itertools
from typing import Final

from kubespread.api.core import Pod

__all__ = ["PodTemplates"]

#: pods compared per bucket before a new id is handed out without comparing (a new id is
#: always sound: it only forgoes sharing)
_BUCKET_LIMIT: Final = 16
#: distinct templates kept before forgetting them all (ids are never reused)
_TEMPLATE_LIMIT: Final = 1 << 14


def _bucket(pod: Pod) -> tuple[object, ...]:
    """A cheap, hashable part of the content: equal pods fall in one bucket."""
    spec = pod.spec
    return (
        pod.namespace,
        tuple(pod.metadata.labels.items()),
        spec.scheduler_name,
        spec.priority,
        len(spec.containers),
    )


def same_template(a: Pod, b: Pod) -> bool:
    """Whether every queueing hint answers alike for ``a`` and ``b`` pending (their keys aside)."""
    if a is b:
        return True
    ma, mb = a.metadata, b.metadata
    return (
        a.namespace == b.namespace
        and ma.labels == mb.labels
        and ma.annotations == mb.annotations
        and ma.owner_references == mb.owner_references
        and a.spec == b.spec
    )


class PodTemplates:
    """An id per distinct content of pending pods (see the module notes)."""

    def __init__(self) -> None:
        self._ids = itertools.count()
        #: bucket -> (a pod of each template seen, its id)
        self._buckets: dict[tuple[object, ...], list[tuple[Pod, int]]] = {}
        self._size = 0

    def id_of(self, pod: Pod) -> int:
        where = _bucket(pod)
        bucket = self._buckets.get(where)
        if bucket is None:
            if self._size >= _TEMPLATE_LIMIT:
                self._buckets.clear()
                self._size = 0
            bucket = self._buckets[where] = []
        for seen, tid in bucket:
            if same_template(seen, pod):
                return tid
        tid = next(self._ids)
        if len(bucket) < _BUCKET_LIMIT:
            bucket.append((pod, tid))
            self._size += 1
        return tid
