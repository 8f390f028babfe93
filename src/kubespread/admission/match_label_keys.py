"""The Pod registry's PrepareForCreate: matchLabelKeys and mismatchLabelKeys are merged into the
term's own labelSelector.

Not an admission plugin: the registry does it after mutating admission and before validating.
For each key of a term's ``matchLabelKeys`` that the pod carries, ``{key In [value]}`` is appended
to the term's ``labelSelector.matchExpressions`` after the user's; ``mismatchLabelKeys`` append
``NotIn``. Keys the pod lacks are skipped and the key lists are kept. A term without a selector
is left alone (a nil selector matches nothing; there is nothing to narrow).

Pod affinity and anti-affinity terms (required, of both the IgnoredDuringExecution and the
design's RequiredDuringExecution forms, and preferred) and topology spread constraints of a new
Pod; workload templates are not merged. Validation then sees the merged selector, which is why
"exists in both matchLabelKeys and labelSelector" fires only for a label the pod carries.

Spread constraints are merged here only from v1.34 (MatchLabelKeysInPodTopologySpreadSelectorMerge);
before, the stored pod keeps its selector and kube-scheduler's PodTopologySpread merges the
keys when it parses the constraints. Affinity terms are merged here in every version kubespread
models (MatchLabelKeysInPodAffinity, GA since v1.33).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from kubespread.api.core import Pod, PodAffinityTerm, PodTemplateSpec, TopologySpreadConstraint
from kubespread.api.features import (
    MATCH_LABEL_KEYS_IN_POD_AFFINITY,
    MATCH_LABEL_KEYS_SELECTOR_MERGE,
    POD_LEVEL_RESOURCES,
    FeatureGates,
)
from kubespread.api.meta import KubeObject
from kubespread.api.policy import PodDisruptionBudget, PodDisruptionBudgetStatus
from kubespread.api.selectors import LabelSelectorRequirement

__all__ = ["merge_match_label_keys", "prepare_for_create"]


def _merge(
    term: PodAffinityTerm | TopologySpreadConstraint, labels: Mapping[str, str], mismatch: list[str]
) -> None:
    sel = term.label_selector
    if sel is None:
        return
    for key in term.match_label_keys:
        if key in labels:
            sel.match_expressions.append(
                LabelSelectorRequirement(key=key, operator="In", values=[labels[key]])
            )
    for key in mismatch:
        if key in labels:
            sel.match_expressions.append(
                LabelSelectorRequirement(key=key, operator="NotIn", values=[labels[key]])
            )


def _affinity_terms(pod: Pod) -> Iterator[PodAffinityTerm]:
    affinity = pod.spec.affinity
    if affinity is None:
        return
    for pa in (affinity.pod_affinity, affinity.pod_anti_affinity):
        if pa is None:
            continue
        yield from pa.required_during_scheduling_ignored_during_execution
        yield from pa.required_during_scheduling_required_during_execution
        for weighted in pa.preferred_during_scheduling_ignored_during_execution:
            yield weighted.pod_affinity_term


def merge_match_label_keys(pod: Pod, features: FeatureGates | None = None) -> None:
    """The merge, in place, on one new Pod, as the API server of ``features``' version does
    it (default: v1.35)."""
    if features is None:
        features = FeatureGates()
    labels = pod.metadata.labels
    if features.enabled(MATCH_LABEL_KEYS_IN_POD_AFFINITY):
        for term in _affinity_terms(pod):
            _merge(term, labels, term.mismatch_label_keys)
    if features.enabled(MATCH_LABEL_KEYS_SELECTOR_MERGE):
        for constraint in pod.spec.topology_spread_constraints:
            _merge(constraint, labels, [])


def drop_disabled_fields(obj: KubeObject, features: FeatureGates) -> None:
    """dropDisabledFields of a new Pod or a workload's pod template (pkg/api/pod/util.go):
    with PodLevelResources off (before v1.34) spec.resources is dropped, so the pod's
    containers alone say what it requests."""
    if features.enabled(POD_LEVEL_RESOURCES):
        return
    if isinstance(obj, Pod):
        obj.spec.resources = None
    template = getattr(getattr(obj, "spec", None), "template", None)
    if isinstance(template, PodTemplateSpec):
        template.spec.resources = None


def prepare_for_create(obj: KubeObject, features: FeatureGates | None = None) -> None:
    """What the registry changes on a new object before validating it (the parts kubespread
    models): fields of disabled features dropped (Pods and pod templates); the merge above,
    for Pods; a PodDisruptionBudget's status cleared and its generation 1 (a create cannot set
    status: the disruption controller writes it)."""
    if features is None:
        features = FeatureGates()
    drop_disabled_fields(obj, features)
    if isinstance(obj, Pod):
        merge_match_label_keys(obj, features)
    elif isinstance(obj, PodDisruptionBudget):
        obj.status = PodDisruptionBudgetStatus()
        obj.metadata.generation = 1
