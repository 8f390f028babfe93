"""The disruption controller, and the Eviction API's check of PodDisruptionBudgets.

Controller (kube-controller-manager's pkg/controller/disruption), per PDB:

* the selected pods: the PDB's namespace, its selector (nil selects none, ``{}`` every pod),
  finished and terminating pods included;
* ``expectedPods`` and ``desiredHealthy`` (getExpectedPodCount): with ``maxUnavailable``,
  expected is the sum of the scale of the pods' controllers (Deployment, or the ReplicaSet
  when no Deployment owns it, StatefulSet, ReplicationController, CloneSet through its scale
  subresource; ``replicas`` unset is 1) and desired = expected - maxUnavailable (a percent of
  expected, rounded up), at least 0; with ``minAvailable`` as an int, desired is it and
  expected is the number of selected pods; as a percent, expected is the controllers' scale
  and desired the percent of it, rounded up. Pods without a controller are skipped (the
  ``UnmanagedPods`` warning); a controller that cannot be found, or a kind with no scale
  (a Job), fails the sync;
* ``disruptedPods``: the evictions the API server granted, kept while the pod exists, is not
  yet terminating and was granted less than 2 minutes ago (DeletionTimeout; a recheck is
  timed for the first expiry, and an expired entry gets the ``NotDeleted`` warning);
* ``currentHealthy``: selected pods not terminating, not in disruptedPods, and Ready;
* ``disruptionsAllowed`` = currentHealthy - desiredHealthy, at least 0, and 0 while no pod is
  expected; ``observedGeneration``; the ``DisruptionAllowed`` condition (SufficientPods /
  InsufficientPods). A failed sync writes disruptionsAllowed 0 with the condition False,
  ``SyncFailed`` (failSafe). The status is written only when it changed.

A PDB is synced when it is created or its spec changes and when a pod it selects (before or
after the change) is added, changed or deleted, as kube's event handlers do; the
controller's own status writes do not trigger it. Not modelled: the stale DisruptionTarget
condition cleanup, the MultiplePodDisruptionBudgets event.

Eviction (the API server's pods/eviction REST handler, eviction.go), :func:`check_eviction`:
a finished or Pending pod, or one already terminating, is deleted without looking at PDBs;
otherwise the PDBs in the pod's namespace whose selector matches the pod (a nil or empty
selector matches nothing): more than one is a 500; none lets the eviction through. A pod that is not
Ready goes without using the budget under ``unhealthyPodEvictionPolicy: AlwaysAllow``, or
under the default IfHealthyBudget when currentHealthy ≥ desiredHealthy > 0. Otherwise the
PDB must have observed its generation (429, "still being processed") and allow a disruption
(429 "Cannot evict pod as it would violate the pod's disruption budget."); granting one
decrements disruptionsAllowed and books the pod in disruptedPods, in a status write made
before the pod is deleted.

Who goes through it: drains (kubectl's evictions) and RequiredDuringExecution evictions. The
taint manager deletes (kube's does; NoExecute ignores budgets), and so does the WorkloadSpread
controller's rescheduling, as Kruise's does: it deletes pods that are still Pending, which the
Eviction API would let go without a budget check anyway. Admission of an eviction runs before
the budget check, as in kube-apiserver, so the WorkloadSpread webhook books a pod in
deletingPods even when its eviction is then refused (once per pod; Kruise's entry expires).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from kubespread.admission.framework import Rejection
from kubespread.api.apps import Deployment, ReplicaSet, ReplicationController, StatefulSet
from kubespread.api.core import Pod
from kubespread.api.kruise import CloneSet
from kubespread.api.meta import KubeObject, OwnerReference
from kubespread.api.policy import PodDisruptionBudget, PodDisruptionBudgetStatus
from kubespread.api.selectors import LabelSelector, Selector, compile_label_selector
from kubespread.api.timestamps import timestamp, virtual_seconds
from kubespread.api.validation.selectors import label_selector_parses
from kubespread.cluster.events import ClusterEvent, EventType
from kubespread.controllers.pods import is_ready, spec_changed

if TYPE_CHECKING:
    from kubespread.cluster.state import ClusterState
    from kubespread.controllers.host import ControllerHost

__all__ = [
    "DELETION_TIMEOUT_SECONDS",
    "DISRUPTION_ALLOWED",
    "EVICTION_REFUSED_MESSAGE",
    "DisruptionController",
    "ExpectedCount",
    "PdbBudget",
    "check_eviction",
    "expected_pod_count",
    "pdb_budget",
    "pdbs_for_pod",
    "selected_pods",
]

#: DeletionTimeout: how long a granted eviction counts a pod as gone before it is seen terminating
DELETION_TIMEOUT_SECONDS: Final = 120.0
DISRUPTION_ALLOWED: Final = "DisruptionAllowed"
SUFFICIENT_PODS: Final = "SufficientPods"
INSUFFICIENT_PODS: Final = "InsufficientPods"
SYNC_FAILED: Final = "SyncFailed"
EVICTION_REFUSED_MESSAGE: Final = "Cannot evict pod as it would violate the pod's disruption budget."
#: the StatusCause type of a refused eviction (policyv1.DisruptionBudgetCause)
DISRUPTION_BUDGET_CAUSE: Final = "DisruptionBudget"
ALWAYS_ALLOW: Final = "AlwaysAllow"
#: apiVersion group of the kinds the finders know, and the resource a scale lookup names
_GROUPS: Final = {"ReplicationController": ("",), "ReplicaSet": ("apps", "extensions")}
_NO_SCALE: Final = {"Job": "jobs.batch", "DaemonSet": "daemonsets.apps", "CronJob": "cronjobs.batch"}


def _group(api_version: str) -> str:
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


# ------------------------------------------------------------------ reading the cluster
def selected_pods(cluster: ClusterState, pdb: PodDisruptionBudget) -> list[Pod]:
    """getPodsForPdb: the PDB's namespace's pods its selector matches, by name."""
    selector = compile_label_selector(pdb.spec.selector)
    ns = pdb.namespace
    return sorted(
        (p for p in cluster.pods.values() if p.namespace == ns and selector.matches(p.metadata.labels)),
        key=lambda p: p.metadata.name,
    )


def pdbs_for_pod(cluster: ClusterState, pod: Pod) -> list[PodDisruptionBudget]:
    """The PDBs of the pod's namespace whose selector matches it, by name. An invalid, nil or
    empty selector matches nothing here (eviction.go: "it should match nothing, not
    everything"), although the controller counts every pod of the namespace for ``{}``."""
    out = []
    for obj in cluster.objects(PodDisruptionBudget.KIND).values():
        if not isinstance(obj, PodDisruptionBudget) or obj.namespace != pod.namespace:
            continue
        if not label_selector_parses(obj.spec.selector):
            continue
        selector = compile_label_selector(obj.spec.selector)  # nil: NOTHING
        if not selector.empty and selector.matches(pod.metadata.labels):
            out.append(obj)
    return sorted(out, key=lambda p: p.metadata.name)


def _replicas(obj: KubeObject) -> int:
    value = getattr(getattr(obj, "spec", None), "replicas", None)
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


def _find(cluster: ClusterState, kind: str, ns: str, ref: OwnerReference) -> KubeObject | None:
    obj = cluster.get(kind, f"{ns}/{ref.name}")
    if obj is None or (ref.uid and obj.metadata.uid != ref.uid):
        return None
    return obj


def _controller_scale(cluster: ClusterState, pod: Pod, ref: OwnerReference) -> tuple[str, int]:
    """(uid, scale) of the pod's controller, as the finders try them in turn; ValueError with
    kube's message when none can give a scale."""
    ns, group = pod.namespace, _group(ref.api_version)
    if ref.kind == ReplicationController.KIND and group in _GROUPS["ReplicationController"]:
        rc = _find(cluster, ReplicationController.KIND, ns, ref)
        if rc is not None:
            return rc.metadata.uid, _replicas(rc)
    elif ref.kind == ReplicaSet.KIND and group in _GROUPS["ReplicaSet"]:
        rs = _find(cluster, ReplicaSet.KIND, ns, ref)
        if rs is not None:
            owner = rs.metadata.controller_ref()
            if owner is not None and owner.kind == Deployment.KIND:
                deployment = _find(cluster, Deployment.KIND, ns, owner)
                if deployment is not None:
                    return deployment.metadata.uid, _replicas(deployment)
            return rs.metadata.uid, _replicas(rs)  # its own scale (the scale subresource, too)
    elif ref.kind == StatefulSet.KIND and group == "apps":
        ss = _find(cluster, StatefulSet.KIND, ns, ref)
        if ss is not None:
            return ss.metadata.uid, _replicas(ss)
    elif ref.kind == CloneSet.KIND and group == "apps.kruise.io":
        cs = _find(cluster, CloneSet.KIND, ns, ref)
        if cs is not None:
            return cs.metadata.uid, _replicas(cs)
    elif ref.kind in _NO_SCALE:
        raise ValueError(f"{_NO_SCALE[ref.kind]} does not implement the scale subresource")
    raise ValueError(f'found no controllers for pod "{pod.metadata.name}"')


@dataclass(frozen=True)
class ExpectedCount:
    expected: int
    desired: int
    unmanaged: tuple[str, ...] = ()


def _expected_scale(cluster: ClusterState, pods: list[Pod]) -> tuple[int, tuple[str, ...]]:
    scale: dict[str, int] = {}
    unmanaged: list[str] = []
    for pod in pods:
        ref = pod.metadata.controller_ref()
        if ref is None:
            unmanaged.append(pod.metadata.name)
            continue
        if ref.uid and ref.uid in scale:
            continue
        uid, replicas = _controller_scale(cluster, pod, ref)
        scale[uid] = replicas
    return sum(scale.values()), tuple(unmanaged)


def _scaled(value: int | str, total: int) -> int:
    """intstr.GetScaledValueFromIntOrPercent, rounding up (validation admits ints and N%)."""
    if isinstance(value, int):
        return value
    return math.ceil(int(value.rstrip("%")) * total / 100)


def expected_pod_count(cluster: ClusterState, pdb: PodDisruptionBudget, pods: list[Pod]) -> ExpectedCount:
    """getExpectedPodCount; ValueError (kube's message) when a controller's scale is not known."""
    spec = pdb.spec
    if spec.max_unavailable is not None:
        expected, unmanaged = _expected_scale(cluster, pods)
        desired = max(0, expected - _scaled(spec.max_unavailable, expected))
        return ExpectedCount(expected, desired, unmanaged)
    if spec.min_available is not None:
        if isinstance(spec.min_available, int):
            return ExpectedCount(len(pods), spec.min_available)
        expected, unmanaged = _expected_scale(cluster, pods)
        return ExpectedCount(expected, _scaled(spec.min_available, expected), unmanaged)
    return ExpectedCount(0, 0)


# ------------------------------------------------------------------ status helpers
def _set_condition(
    conditions: list[Any], status: str, reason: str, message: str, generation: int, now: float
) -> list[Any]:
    """apimeta.SetStatusCondition of DisruptionAllowed: lastTransitionTime moves only when the
    status does."""
    out = [dict(c) if isinstance(c, dict) else c for c in conditions]
    for c in out:
        if isinstance(c, dict) and c.get("type") == DISRUPTION_ALLOWED:
            if c.get("status") != status:
                c["lastTransitionTime"] = timestamp(now)
            c.update(status=status, reason=reason, message=message, observedGeneration=generation)
            return out
    out.append(
        {
            "type": DISRUPTION_ALLOWED,
            "status": status,
            "observedGeneration": generation,
            "lastTransitionTime": timestamp(now),
            "reason": reason,
            "message": message,
        }
    )
    return out


def _allowed_condition(status: PodDisruptionBudgetStatus, now: float) -> list[Any]:
    """UpdateDisruptionAllowedCondition."""
    if status.disruptions_allowed > 0:
        return _set_condition(status.conditions, "True", SUFFICIENT_PODS, "", status.observed_generation, now)
    return _set_condition(status.conditions, "False", INSUFFICIENT_PODS, "", status.observed_generation, now)


def _conditions_up_to_date(pdb: PodDisruptionBudget) -> bool:
    """ConditionsAreUpToDate."""
    found = (c for c in pdb.status.conditions if isinstance(c, dict) and c.get("type") == DISRUPTION_ALLOWED)
    cond = next(found, None)
    if cond is None or pdb.status.observed_generation != pdb.metadata.generation:
        return False
    if pdb.status.disruptions_allowed > 0:
        return cond.get("status") == "True" and cond.get("reason") == SUFFICIENT_PODS
    return cond.get("status") == "False" and cond.get("reason") == INSUFFICIENT_PODS


def _with_status(pdb: PodDisruptionBudget, status: PodDisruptionBudgetStatus) -> PodDisruptionBudget:
    new = copy.copy(pdb)
    new.status = status
    return new


def _selector_text(sel: LabelSelector | None) -> str:
    """A *metav1.LabelSelector as %v prints it (its generated String())."""
    if sel is None:
        return "nil"
    labels = "".join(f"{k}: {v}," for k, v in sorted(sel.match_labels.items()))
    exprs = "".join(
        f"LabelSelectorRequirement{{Key:{e.key},Operator:{e.operator},Values:[{' '.join(e.values)}],}},"
        for e in sel.match_expressions
    )
    return (
        f"&LabelSelector{{MatchLabels:map[string]string{{{labels}}},"
        f"MatchExpressions:[]LabelSelectorRequirement{{{exprs}}},}}"
    )


# ------------------------------------------------------------------ the controller
class DisruptionController:
    """Keeps every PodDisruptionBudget's status as kube's disruption controller computes it."""

    name = "disruption"

    def __init__(self) -> None:
        self._sim: ControllerHost | None = None
        #: PDB key → virtual time of its pending recheck (the first disruptedPods expiry)
        self._rechecks: dict[str, float] = {}
        self._selectors: dict[str, tuple[object, Selector]] = {}

    @property
    def sim(self) -> ControllerHost:
        assert self._sim is not None, "the disruption controller has not been started"
        return self._sim

    def start(self, sim: ControllerHost) -> None:
        self._sim = sim
        sim.cluster.subscribe(self._on_event, kinds=(PodDisruptionBudget.KIND, Pod.KIND))
        for key in sorted(sim.cluster.objects(PodDisruptionBudget.KIND)):
            sim.enqueue(self, key)

    def _on_event(self, ev: ClusterEvent) -> None:
        sim = self.sim
        if ev.kind == PodDisruptionBudget.KIND:
            if ev.type is EventType.DELETED:
                self._selectors.pop(ev.obj.key, None)
            elif spec_changed(ev):
                sim.enqueue(self, ev.obj.key)
            return
        if ev.kind != Pod.KIND or not sim.cluster.objects(PodDisruptionBudget.KIND):
            return
        keys: set[str] = set()
        for key, pdb in sim.cluster.objects(PodDisruptionBudget.KIND).items():
            if not isinstance(pdb, PodDisruptionBudget):
                continue
            selector = self._selector(pdb)
            for pod in (ev.obj, ev.old):
                if (
                    isinstance(pod, Pod)
                    and pod.namespace == pdb.namespace
                    and selector.matches(pod.metadata.labels)
                ):
                    keys.add(key)
        for key in sorted(keys):
            sim.enqueue(self, key)

    def _selector(self, pdb: PodDisruptionBudget) -> Selector:
        """The PDB's compiled selector, compiled again only when its spec object changes."""
        cached = self._selectors.get(pdb.key)
        if cached is not None and cached[0] is pdb.spec:
            return cached[1]
        selector = compile_label_selector(pdb.spec.selector)
        self._selectors[pdb.key] = (pdb.spec, selector)
        return selector

    def sync(self, key: str) -> None:
        sim = self.sim
        pdb = sim.cluster.get(PodDisruptionBudget.KIND, key)
        if not isinstance(pdb, PodDisruptionBudget):
            return
        try:
            self._try_sync(pdb)
        except ValueError as err:
            sim.record(
                pdb,
                "CalculateExpectedPodCountFailed",
                f"Failed to calculate the number of expected pods: {err}",
                type="Warning",
            )
            self._fail_safe(pdb, str(err))

    def _try_sync(self, pdb: PodDisruptionBudget) -> None:
        sim, now = self.sim, self.sim.now
        pods = selected_pods(sim.cluster, pdb)
        if not pods:
            sim.record(pdb, "NoPods", "No matching pods found")
        count = expected_pod_count(sim.cluster, pdb, pods)
        if count.unmanaged:
            sim.record(
                pdb,
                "UnmanagedPods",
                f"Pods selected by this PodDisruptionBudget (selector: {_selector_text(pdb.spec.selector)}) "
                "were found to be unmanaged. As a result, the status of the PDB cannot be calculated "
                "correctly, which may result in undefined behavior. To account for these pods please "
                'set ".spec.minAvailable" field of the PDB to an integer value.',
                type="Warning",
            )
        disrupted, recheck = self._disrupted_pods(pdb, pods, now)
        healthy = sum(
            1 for p in pods if not p.is_terminating and p.metadata.name not in disrupted and is_ready(p)
        )
        allowed = healthy - count.desired
        if count.expected <= 0 or allowed <= 0:
            allowed = 0
        self._write(pdb, healthy, count.desired, count.expected, allowed, disrupted)
        if recheck is not None:
            self._recheck(pdb.key, recheck)

    def _disrupted_pods(
        self, pdb: PodDisruptionBudget, pods: list[Pod], now: float
    ) -> tuple[dict[str, str], float | None]:
        """buildDisruptedPodMap: the entries still waiting for their pod to terminate."""
        given = pdb.status.disrupted_pods
        kept: dict[str, str] = {}
        recheck: float | None = None
        for pod in pods:
            stamp = given.get(pod.metadata.name)
            if pod.is_terminating or stamp is None:
                continue
            expected_deletion = (virtual_seconds(stamp) or 0.0) + DELETION_TIMEOUT_SECONDS
            if expected_deletion <= now:  # kube: Before(now); a virtual instant later here
                self.sim.record(
                    pod,
                    "NotDeleted",
                    # kube's message names the namespace twice (pdb.Namespace, pdb.Namespace)
                    f"Pod was expected by PDB {pdb.namespace}/{pdb.namespace} to be deleted but it wasn't",
                    type="Warning",
                )
                continue
            kept[pod.metadata.name] = stamp
            recheck = expected_deletion if recheck is None else min(recheck, expected_deletion)
        return kept, recheck

    def _write(
        self,
        pdb: PodDisruptionBudget,
        healthy: int,
        desired: int,
        expected: int,
        allowed: int,
        disrupted: dict[str, str],
    ) -> None:
        """updatePdbStatus: written only when something changed."""
        st = pdb.status
        if (
            st.current_healthy == healthy
            and st.desired_healthy == desired
            and st.expected_pods == expected
            and st.disruptions_allowed == allowed
            and st.disrupted_pods == disrupted
            and st.observed_generation == pdb.metadata.generation
            and _conditions_up_to_date(pdb)
        ):
            return
        status = PodDisruptionBudgetStatus(
            observed_generation=pdb.metadata.generation,
            disrupted_pods=dict(disrupted),
            disruptions_allowed=allowed,
            current_healthy=healthy,
            desired_healthy=desired,
            expected_pods=expected,
            conditions=list(st.conditions),
        )
        status.conditions = _allowed_condition(status, self.sim.now)
        self.sim.update(_with_status(pdb, status))

    def _fail_safe(self, pdb: PodDisruptionBudget, message: str) -> None:
        """failSafe: no disruption allowed, the condition says why; the rest as it was."""
        status = copy.deepcopy(pdb.status)
        status.disruptions_allowed = 0
        status.conditions = _set_condition(
            status.conditions, "False", SYNC_FAILED, message, status.observed_generation, self.sim.now
        )
        if status.to_dict() != pdb.status.to_dict():
            self.sim.update(_with_status(pdb, status))

    def _recheck(self, key: str, due: float) -> None:
        """At most one pending recheck per PDB, at the earliest time asked for."""
        pending = self._rechecks.get(key)
        if pending is not None and self.sim.now <= pending <= due:
            return
        self._rechecks[key] = due

        def wake() -> None:
            if self._rechecks.get(key) == due:
                del self._rechecks[key]
            self.sim.enqueue(self, key)

        # a long timer (not settling): a drain step does not wait two minutes for it
        self.sim.after(max(0.0, due - self.sim.now), wake)


# ------------------------------------------------------------------ the Eviction API's check
def _can_ignore_pdb(pod: Pod) -> bool:
    """canIgnorePDB: a finished or Pending pod, or one already being deleted."""
    phase = pod.status.phase or ("Running" if pod.spec.node_name else "Pending")
    return phase in ("Succeeded", "Failed", "Pending") or pod.is_terminating


def check_eviction(
    cluster: ClusterState, pod: Pod, now: float
) -> tuple[Rejection | None, PodDisruptionBudget | None]:
    """The eviction handler's PDB step for ``pod``: (refusal, None), or (None, the PDB with the
    granted disruption booked: to be stored before the pod is deleted), or (None, None) when
    no budget is involved."""
    if _can_ignore_pdb(pod):
        return None, None
    pdbs = pdbs_for_pod(cluster, pod)
    if len(pdbs) > 1:
        return Rejection(
            500,
            "InternalError",
            "This pod has more than one PodDisruptionBudget, which the eviction subresource does not "
            "support.",
        ), None
    if not pdbs:
        return None, None
    pdb = pdbs[0]
    st = pdb.status
    if not is_ready(pod):
        if pdb.spec.unhealthy_pod_eviction_policy == ALWAYS_ALLOW:
            return None, None
        if st.current_healthy >= st.desired_healthy and st.desired_healthy > 0:
            return None, None
    if st.observed_generation < pdb.metadata.generation:
        return _too_many_requests(
            f"The disruption budget {pdb.metadata.name} is still being processed by the server."
        ), None
    if st.disruptions_allowed < 0:
        return Rejection(
            403,
            "Forbidden",
            f'poddisruptionbudget.policy "{pdb.metadata.name}" is forbidden: '
            "pdb disruptions allowed is negative",
        ), None
    if st.disruptions_allowed == 0:
        return _too_many_requests(
            f"The disruption budget {pdb.metadata.name} needs {st.desired_healthy} healthy pods "
            f"and has {st.current_healthy} currently"
        ), None
    status = copy.deepcopy(st)
    status.disruptions_allowed -= 1
    if status.disruptions_allowed == 0:
        status.conditions = _allowed_condition(status, now)
    status.disrupted_pods[pod.metadata.name] = timestamp(now)
    return None, _with_status(pdb, status)


@dataclass(frozen=True, slots=True)
class PdbBudget:
    """What a PodDisruptionBudget's status (as the disruption controller last wrote it) says
    to a plan: how many more disruptions it grants, and whether it is broken."""

    #: disruptionsAllowed less the disruptions a plan already counted against it
    allowed: int
    current_healthy: int
    desired_healthy: int

    @property
    def grants_one(self) -> bool:
        """One more eviction passes :func:`check_eviction`'s budget step (disruptionsAllowed
        above 0; at 0 or below the Eviction API answers 429 or 403)."""
        return self.allowed > 0

    @property
    def broken(self) -> bool:
        """Fewer healthy pods than the budget wants (currentHealthy < desiredHealthy)."""
        return self.current_healthy < self.desired_healthy


def pdb_budget(pdb: PodDisruptionBudget, granted: int = 0) -> PdbBudget:
    """The budget arithmetic plans share, beside :func:`check_eviction` which refuses an
    eviction when ``disruptionsAllowed`` is 0 or below: the disruptions ``pdb`` still grants
    once ``granted`` of them are counted (evictions a plan already put in the same wave), and
    its health. Read from the status only, as the Eviction API reads it; the pod-level rules
    (a pod under several budgets, an unhealthy or finished pod) stay with the caller."""
    st = pdb.status
    return PdbBudget(st.disruptions_allowed - granted, st.current_healthy, st.desired_healthy)


def _too_many_requests(cause: str) -> Rejection:
    return Rejection(
        429,
        "TooManyRequests",
        EVICTION_REFUSED_MESSAGE,
        ({"field": "", "reason": DISRUPTION_BUDGET_CAUSE, "message": cause},),
    )
