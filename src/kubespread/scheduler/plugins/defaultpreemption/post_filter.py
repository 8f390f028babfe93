"""DefaultPreemption (PostFilter), as default_preemption.go and preemption.go's Preempt do
it, as far as kubespread can follow without evicting anything.

1. PodEligibleToPreemptOthers: a pod with preemptionPolicy Never may not preempt; nor may a
   pod whose nominated node (status.nominatedNodeName, unless rejected there as
   UnschedulableAndUnresolvable) still runs a lower-priority pod that the scheduler's
   preemption is terminating: that eviction is still under way.
2. findCandidates: the potential nodes are those rejected as Unschedulable, where removing
   pods might help; UnschedulableAndUnresolvable rules a node out.
3. DryRunPreemption: on a potential node the victims are the pods of lower priority than the
   incoming pod. A node without any is "No preemption victims found for incoming pod"; every
   node not tried is "Preemption is not helpful for scheduling". With no candidate, the
   answer nests a FitError over those statuses.

The answer is Unschedulable, "preemption: " + that message. When some potential node has
victims, kube-scheduler would remove them, run the filters again, pick a candidate and evict
its victims (or report why none fits). kubespread models none of that: ``post_filter``
answers None ("cannot say") and the FitError message is left without its PostFilter part.
"""

from __future__ import annotations

from typing import Final

from kubespread.api.core import Pod
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.framework import (
    Code,
    CycleState,
    NodeStatuses,
    PostFilterPlugin,
    Status,
    fit_error_text,
)

__all__ = [
    "MSG_NEVER",
    "MSG_NOT_HELPFUL",
    "MSG_NO_VICTIMS",
    "MSG_TERMINATING_ON_NOMINATED",
    "DefaultPreemption",
    "pod_priority",
]

NAME: Final = "DefaultPreemption"
PREFIX: Final = "preemption: "
MSG_NEVER: Final = "not eligible due to preemptionPolicy=Never."
MSG_TERMINATING_ON_NOMINATED: Final = "not eligible due to a terminating pod on the nominated node."
MSG_NO_VICTIMS: Final = "No preemption victims found for incoming pod"
MSG_NOT_HELPFUL: Final = "Preemption is not helpful for scheduling"
PREEMPT_NEVER: Final = "Never"
DISRUPTION_TARGET: Final = "DisruptionTarget"
REASON_PREEMPTION_BY_SCHEDULER: Final = "PreemptionByScheduler"


def pod_priority(pod: Pod) -> int:
    """corev1helpers.PodPriority: spec.priority, 0 when unset."""
    return pod.spec.priority or 0


def _terminating_by_preemption(pod: Pod) -> bool:
    """Terminating, and its first DisruptionTarget condition says the scheduler preempted it."""
    if not pod.is_terminating:
        return False
    for cond in pod.status.conditions:
        if cond.type == DISRUPTION_TARGET:
            return cond.status == "True" and cond.reason == REASON_PREEMPTION_BY_SCHEDULER
    return False


def not_eligible_reason(pod: Pod, cluster: ClusterState, statuses: NodeStatuses) -> str:
    """Why the pod may not preempt at all ("" when it may)."""
    if pod.spec.preemption_policy == PREEMPT_NEVER:
        return MSG_NEVER
    nominated = pod.status.nominated_node_name
    if not nominated or nominated not in cluster.nodes:
        return ""
    info = cluster.node_info(nominated)
    status = statuses.status_at(info.index)
    if status is not None and status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
        return ""  # the nominated node is out for good: the pod may look elsewhere
    priority = pod_priority(pod)
    for other in info.pods.values():
        if pod_priority(other) < priority and _terminating_by_preemption(other):
            return MSG_TERMINATING_ON_NOMINATED
    return ""


def _any_victim(cluster: ClusterState, node_ids: list[int], priority: int) -> bool:
    """Whether a pod of lower priority runs on any of the nodes: a scan over their pods that
    stops at the first (pod_priority inlined: an unschedulable pod's cycle in a large
    cluster spends most of its time here)."""
    info_at = cluster.node_info_at
    for i in node_ids:
        for p in info_at(i).pods.values():
            if (p.spec.priority or 0) < priority:
                return True
    return False


def preempt(pod: Pod, cluster: ClusterState, statuses: NodeStatuses) -> str | None:
    """Preempt's message, or None when kube-scheduler would go on to a dry run with victims."""
    reason = not_eligible_reason(pod, cluster, statuses)
    if reason:
        return reason
    potential = statuses.nodes_with_code(Code.UNSCHEDULABLE)
    if _any_victim(cluster, potential.tolist(), pod_priority(pod)):
        return None
    num_nodes = cluster.num_nodes
    counts = {MSG_NO_VICTIMS: len(potential), MSG_NOT_HELPFUL: num_nodes - len(potential)}
    return fit_error_text(num_nodes, {r: n for r, n in counts.items() if n})


class DefaultPreemption(PostFilterPlugin):
    """Says why preemption cannot help: not eligible, or no potential node has a victim.

    kubespread never preempts. When some potential node (rejected as Unschedulable) runs a
    pod of lower priority, kube-scheduler would dry-run preemption there and might evict
    pods; what it would then report depends on that, so ``post_filter`` answers None
    ("cannot say") and the FitError message is left without its PostFilter part.
    """

    name = NAME

    def post_filter(self, state: CycleState, pod: Pod, statuses: NodeStatuses) -> Status | None:
        msg = preempt(pod, state.cluster, statuses)
        if msg is None:
            return None
        return Status.unschedulable(PREFIX + msg)
