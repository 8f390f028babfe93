"""An ordered chain of admission plugins: the mutating phase, then the validating phase.

kube-apiserver runs every mutating plugin in its order, then (after the registry has prepared
and validated the object) every validating plugin in its own order; the first refusal ends the
request. :data:`DEFAULT_CHAIN` holds the plugins of a default kube-apiserver v1.36 that change or
refuse the objects kubespread models (shared/conformance/admission/README.md lists them all):

    mutating:   NamespaceLifecycle, TaintNodesByCondition, Priority, DefaultTolerationSeconds
    validating: HardAntiAffinity, Priority

The others have nothing to do in a cluster without LimitRanges, quotas, webhooks, policies,
storage classes or runtime classes. HardAntiAffinity (kubespread's; kube's
LimitPodHardAntiAffinityTopology and the pod affinity design's limit) does nothing unless an
AdmissionOptions switch turns it on; it sits where kube orders LimitPodHardAntiAffinityTopology,
before Priority.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kubespread.admission.default_toleration_seconds import DefaultTolerationSeconds
from kubespread.admission.framework import (
    AdmissionContext,
    MutatingPlugin,
    Rejection,
    ValidatingPlugin,
    handles,
)
from kubespread.admission.hard_anti_affinity import HardAntiAffinity
from kubespread.admission.namespace_lifecycle import NamespaceLifecycle
from kubespread.admission.priority import Priority
from kubespread.admission.taint_nodes_by_condition import TaintNodesByCondition
from kubespread.api.meta import KubeObject

__all__ = ["DEFAULT_CHAIN", "AdmissionChain"]


@dataclass(frozen=True)
class AdmissionChain:
    """Plugins in the order they run, per phase. A plugin with both phases (Priority) is listed
    in both, at its place in each."""

    mutating: Sequence[MutatingPlugin] = ()
    validating: Sequence[ValidatingPlugin] = ()

    def mutate(self, obj: KubeObject, ctx: AdmissionContext) -> Rejection | None:
        """Run the mutating plugins in order; the first refusal stops the chain."""
        for plugin in self.mutating:
            if not handles(plugin, ctx):
                continue
            rejection = plugin.mutate(obj, ctx)
            if rejection is not None:
                return rejection
        return None

    def validate(self, obj: KubeObject, ctx: AdmissionContext) -> Rejection | None:
        """Run the validating plugins in order; the first refusal stops the chain."""
        for plugin in self.validating:
            if not handles(plugin, ctx):
                continue
            outcome = plugin.validate(obj, ctx)
            if isinstance(outcome, Rejection):
                return outcome
            if outcome:
                return Rejection.invalid(obj, outcome)
        return None

    def extended(
        self, mutating: Sequence[MutatingPlugin] = (), validating: Sequence[ValidatingPlugin] = ()
    ) -> AdmissionChain:
        """This chain with plugins added at the end of each phase, where kube-apiserver runs its
        MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins."""
        return AdmissionChain(
            mutating=(*self.mutating, *mutating), validating=(*self.validating, *validating)
        )

    @property
    def names(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(mutating names, validating names), in order."""
        return tuple(p.name for p in self.mutating), tuple(p.name for p in self.validating)


_PRIORITY = Priority()

DEFAULT_CHAIN = AdmissionChain(
    mutating=(NamespaceLifecycle(), TaintNodesByCondition(), _PRIORITY, DefaultTolerationSeconds()),
    validating=(HardAntiAffinity(), _PRIORITY),
)
