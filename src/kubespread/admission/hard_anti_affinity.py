"""Limits on required ("hard") pod anti-affinity: the pod affinity design's step 4 and kube's old
LimitPodHardAntiAffinityTopology plugin. Both are off by default, so the default chain answers
as kube-apiserver v1.36 does (which has neither enabled).

Why: anti-affinity is symmetric. A pod that arrives first and states required anti-affinity
against every pod closes its whole topology domain to everyone else; with a zone key, a pod
requesting almost nothing can take a zone. Exclusive use of a node is the legitimate case.

- ``AdmissionOptions.hard_anti_affinity_limit`` (the design's rule): a required anti-affinity
  term that selects all namespaces must use the ``kubernetes.io/hostname`` key. "All
  namespaces" is, in today's API, an empty ``namespaceSelector: {}`` (the design's era spelled
  it as an empty namespace list, which now means the pod's own namespace). A selector that
  happens to match every namespace without being empty is not caught.
- ``AdmissionOptions.limit_pod_hard_anti_affinity_topology`` (kube's plugin): every required
  anti-affinity term must use ``kubernetes.io/hostname``, whatever namespaces it selects.

"Required" covers both forms, IgnoredDuringExecution and the design's RequiredDuringExecution
(kube's plugin left the latter as a TODO for when the field would exist; here it does). Only
Pods are looked at, on CREATE and UPDATE, as kube's plugin does: a Deployment's template is
not refused, its pods are when they are created. The first offending term, IgnoredDuringExecution
terms before RequiredDuringExecution ones, is refused with 403 Forbidden naming its field path.
"""

from __future__ import annotations

from collections.abc import Iterator

from kubespread.admission.framework import AdmissionContext, Operation, Rejection, go_quote
from kubespread.api.core import Pod, PodAffinityTerm
from kubespread.api.errors import Path
from kubespread.api.keys import LABEL_HOSTNAME
from kubespread.api.meta import KubeObject
from kubespread.api.selectors import compile_label_selector

__all__ = ["HardAntiAffinity", "required_anti_affinity_terms"]

_FORMS = ("requiredDuringSchedulingIgnoredDuringExecution", "requiredDuringSchedulingRequiredDuringExecution")


def required_anti_affinity_terms(pod: Pod) -> Iterator[tuple[Path, PodAffinityTerm]]:
    """Every required anti-affinity term of the pod with its field path, in the order refused."""
    affinity = pod.spec.affinity
    anti = affinity.pod_anti_affinity if affinity is not None else None
    if anti is None:
        return
    base = Path("spec").child("affinity", "podAntiAffinity")
    lists = (
        anti.required_during_scheduling_ignored_during_execution,
        anti.required_during_scheduling_required_during_execution,
    )
    for form, terms in zip(_FORMS, lists, strict=True):
        for i, term in enumerate(terms):
            yield base.child(form).index(i), term


def _selects_all_namespaces(term: PodAffinityTerm) -> bool:
    """An empty namespaceSelector (``{}``) selects every namespace; nil selects none."""
    return term.namespace_selector is not None and compile_label_selector(term.namespace_selector).empty


class HardAntiAffinity:
    """Validating: refuses a Pod whose required anti-affinity reaches beyond a node, by the
    rules the admission options switch on (neither is on by default)."""

    name = "HardAntiAffinity"
    operations = (Operation.CREATE, Operation.UPDATE)

    def validate(self, obj: KubeObject, ctx: AdmissionContext) -> Rejection | None:
        opts = ctx.options
        if not (opts.hard_anti_affinity_limit or opts.limit_pod_hard_anti_affinity_topology):
            return None
        if ctx.operation not in (Operation.CREATE, Operation.UPDATE) or not isinstance(obj, Pod):
            return None
        for path, term in required_anti_affinity_terms(obj):
            key = term.topology_key
            if key == LABEL_HOSTNAME:
                continue
            where = path.child("topologyKey")
            if opts.limit_pod_hard_anti_affinity_topology:
                # kube's wording, after the path of the term it is about
                return Rejection.forbidden(
                    obj,
                    f"{where}: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey {key} "
                    f"but only key {LABEL_HOSTNAME} is allowed",
                )
            if _selects_all_namespaces(term):
                return Rejection.forbidden(
                    obj,
                    f"{where}: a required anti-affinity term that selects all namespaces "
                    f"(namespaceSelector: {{}}) may only use topologyKey {LABEL_HOSTNAME}, "
                    f"not {go_quote(key)}",
                )
        return None
