"""Every arrangement re-checked by the scheduler: in the final state, one pod of each group
on each node it uses is taken off and scheduled again; it must pass the Filter there."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

from kubespread.api.core import Pod
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.framework import Status
from kubespread.scheduler.profile import Profile
from kubespread.scheduler.scheduler import schedule_one
from kubespread.solve.build import clones
from kubespread.solve.model import VerificationError

__all__ = ["verify", "verify_groups"]


@contextmanager
def _bound(
    cluster: ClusterState, plan: Sequence[tuple[Sequence[Pod], Mapping[str, int]]]
) -> Iterator[list[list[Pod]]]:
    out: list[list[Pod]] = []
    every: list[Pod] = []
    with cluster.hypothetical():
        try:
            for pods, counts in plan:
                it = iter(pods)
                mine: list[Pod] = []
                for node, k in counts.items():
                    for _ in range(k):
                        pod = next(it)
                        cluster.add(pod)
                        every.append(pod)
                        cluster.bind(pod.key, node)
                        mine.append(pod)
                out.append(mine)
            yield out
        finally:
            for pod in every:
                cluster.delete_pod(pod.key)


def verify(cluster: ClusterState, template: Pod, profile: Profile, counts: dict[str, int]) -> None:
    """:func:`verify_groups` for copies of one template."""
    verify_groups(cluster, [template], profile, [counts])


def verify_groups(
    cluster: ClusterState, templates: Sequence[Pod], profile: Profile, by_group: Sequence[Mapping[str, int]]
) -> None:
    """Re-check an arrangement with the scheduler: in the final state, one pod of each group
    on each node it uses (copies are interchangeable) is taken off and scheduled again
    (``schedule_one``: PreFilter and Filter against all the others); its node must be among
    the feasible ones. Raises :class:`VerificationError` otherwise."""
    taken = set(cluster.pods)
    plan: list[tuple[list[Pod], Mapping[str, int]]] = []
    for template, counts in zip(templates, by_group, strict=True):
        pods = clones(template, sum(counts.values()), taken)
        taken |= {p.key for p in pods}
        plan.append((pods, counts))
    with _bound(cluster, plan) as bound:
        for mine, (_, counts) in zip(bound, plan, strict=True):
            by_node: dict[str, Pod] = {}
            for pod in mine:
                by_node.setdefault(cluster.node_of(pod.key), pod)
            for node, pod in by_node.items():
                cluster.delete_pod(pod.key)
                try:
                    decision = schedule_one(pod, cluster, profile)
                finally:
                    cluster.add(pod)
                    cluster.bind(pod.key, node)
                if node not in decision.feasible:
                    rejection = decision.rejections.get(node)
                    why = "not reached" if rejection is None else _why(rejection.stage, rejection.status)
                    raise VerificationError(
                        f"solver placed {counts[node]} pod(s) of {pod.metadata.labels or pod.key} on {node} "
                        f"but the scheduler rejects one there ({why})"
                    )


def _why(stage: str, status: Status) -> str:
    reasons = "; ".join(status.reasons) or status.code.name
    return f"{stage} {status.plugin}: {reasons}"
