"""DefaultPreemption (PostFilter), as default_preemption.go and preemption.go's Preempt do it.

1. PodEligibleToPreemptOthers: a pod with preemptionPolicy Never may not preempt; nor may a
   pod whose nominated node (status.nominatedNodeName, unless rejected there as
   UnschedulableAndUnresolvable) still runs a lower-priority pod that the scheduler's
   preemption is terminating: that eviction is still under way.
2. findCandidates: the potential nodes are those rejected as Unschedulable, where removing
   pods might help; UnschedulableAndUnresolvable rules a node out.
3. DryRunPreemption (preemption.py): on each potential node, from the offset the framework
   handle gives (0 unless seeded), the fewest lower-priority pods whose removal lets the pod
   fit, until max(10% of the potential nodes, 100) candidates (capped at their number) are
   found. A node without lower-priority pods is "No preemption victims found for incoming
   pod"; one where the pod does not fit even without them keeps the filters' status; every
   node not tried is "Preemption is not helpful for scheduling". With no candidate, the
   answer is Unschedulable, "preemption: " + a FitError message over those statuses.
4. pickOneNodeForPreemption chooses among the candidates; the answer is Success and the
   PreemptionResult (nominated node, victims, PDB violations) is left on the CycleState
   under PREEMPTION_RESULT, with the criterion that decided. The plugin evicts nothing: the
   caller applies the result (the simulation's Simulation.preempt).

When no potential node runs a lower-priority pod the dry run is skipped: its answer is known
(every potential node has no victims), and this keeps PostFilter cheap for workloads
without priorities; when no node at all does (``ClusterState.lowest_priority``), not even
the potential nodes' pods are looked at.
"""

from __future__ import annotations

from collections import Counter
from typing import Final

from kubespread.api.core import DISRUPTION_TARGET, Pod
from kubespread.api.features import PREEMPTION_EMPTY_PDB_SELECTOR, PREEMPTION_PLACEMENT_MESSAGE, FeatureGates
from kubespread.api.policy import PodDisruptionBudget
from kubespread.api.schedconfig import DefaultPreemptionArgs
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.defaults import default_default_preemption_args
from kubespread.scheduler.framework import (
    PREEMPTION_RESULT,
    Code,
    CycleState,
    FrameworkHandle,
    NodeStatuses,
    PostFilterPlugin,
    PreemptionResult,
    Status,
    fit_error_text,
)
from kubespread.scheduler.plugins.defaultpreemption.preemption import (
    MSG_NO_VICTIMS,
    dry_run,
    num_candidates,
    pick_one_node_why,
    pod_priority,
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
MSG_NOT_HELPFUL: Final = "Preemption is not helpful for scheduling"
PREEMPT_NEVER: Final = "Never"
REASON_PREEMPTION_BY_SCHEDULER: Final = "PreemptionByScheduler"


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


def _not_helpful(num_nodes: int, statuses: dict[str, Status]) -> str:
    """The FitError message over the dry run's statuses, the nodes it did not try counted as
    "Preemption is not helpful for scheduling"."""
    counts: Counter[str] = Counter()
    for st in statuses.values():
        counts.update(st.reasons)
    rest = num_nodes - len(statuses)
    if rest:
        counts[MSG_NOT_HELPFUL] += rest
    return fit_error_text(num_nodes, counts)


def pdbs_of(cluster: ClusterState) -> list[PodDisruptionBudget]:
    """The cluster's PodDisruptionBudgets (getPodDisruptionBudgets), in store order."""
    return [
        o for o in cluster.objects(PodDisruptionBudget.KIND).values() if isinstance(o, PodDisruptionBudget)
    ]


def preempt(
    pod: Pod,
    cluster: ClusterState,
    statuses: NodeStatuses,
    handle: FrameworkHandle | None = None,
    args: DefaultPreemptionArgs | None = None,
    features: FeatureGates | None = None,
) -> tuple[PreemptionResult | None, Status | None]:
    """Preempt: (the result, Success) when a node is nominated; (None, Unschedulable with the
    message) when preemption cannot help (a result with ``eligible`` False when the pod may
    not preempt at all); (None, Error) when the dry run went wrong. Without
    a handle the filters cannot be run: (None, None) when some potential node has victims."""
    reason = not_eligible_reason(pod, cluster, statuses)
    if reason:
        return PreemptionResult(eligible=False), Status.unschedulable(reason)
    potential = statuses.nodes_with_code(Code.UNSCHEDULABLE).tolist()
    num_nodes = cluster.num_nodes
    priority = pod_priority(pod)
    lowest = cluster.lowest_priority()
    if lowest is None or lowest >= priority or not _any_victim(cluster, potential, priority):
        counts = {MSG_NO_VICTIMS: len(potential), MSG_NOT_HELPFUL: num_nodes - len(potential)}
        return None, Status.unschedulable(fit_error_text(num_nodes, {r: n for r, n in counts.items() if n}))
    if handle is None:
        return None, None
    infos = [cluster.node_info_at(i) for i in potential]
    offset = handle.candidate_offset(len(infos))
    args = default_default_preemption_args(args)
    wanted = num_candidates(
        len(infos), args.min_candidate_nodes_percentage or 0, args.min_candidate_nodes_absolute or 0
    )
    empty_selects_all = (features or FeatureGates()).enabled(PREEMPTION_EMPTY_PDB_SELECTOR)
    run = dry_run(
        handle, cluster, pod, infos, pdbs_of(cluster), offset, wanted, empty_selects_all=empty_selects_all
    )
    best, why = pick_one_node_why(run.candidates)
    if best is None:
        errors = list(dict.fromkeys(st.message for st in run.statuses.values() if st.code is Code.ERROR))
        if errors:  # utilerrors.NewAggregate's message
            return None, Status.error(errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]")
        return None, Status.unschedulable(_not_helpful(num_nodes, run.statuses))
    return PreemptionResult(best.node, best.victims, best.pdb_violations, why), Status()


def placement_message(result: PreemptionResult) -> str:
    """The Success status's message from v1.37 (kubernetes#140180), which FailedScheduling
    then carries after "preemption: "."""
    return (
        f"found a potential placement for pod on node {result.nominated_node}, "
        f"preempting {len(result.victims)} victims"
    )


class DefaultPreemption(PostFilterPlugin):
    """Finds the node to nominate and the pods to evict there (see the module notes); the
    result is left on the CycleState under PREEMPTION_RESULT. Called without a framework
    handle (outside a scheduling cycle) it cannot run the filters, and answers None ("cannot
    say") when some potential node runs a lower-priority pod."""

    name = NAME

    def __init__(
        self, args: DefaultPreemptionArgs | None = None, *, features: FeatureGates | None = None
    ) -> None:
        super().__init__(default_default_preemption_args(args), features=features)
        #: v1.37+: a nomination says where and how many victims (kubernetes#140180)
        self.placement_message = self.features.enabled(PREEMPTION_PLACEMENT_MESSAGE)

    def post_filter(self, state: CycleState, pod: Pod, statuses: NodeStatuses) -> Status | None:
        result, status = preempt(pod, state.cluster, statuses, state.handle, self.args, self.features)
        if status is None:
            return None
        state.write(PREEMPTION_RESULT, result if result is not None else PreemptionResult())
        if status.message and not status.is_success:
            return Status(status.code, (PREFIX + status.message,))
        if status.is_success and result is not None and self.placement_message:
            return Status(status.code, (PREFIX + placement_message(result),))
        return status
