"""Admission: what kube-apiserver does to a new object between decoding and storing it.

- :mod:`.framework`: the plugin protocols, :class:`AdmissionContext`, :class:`Rejection`;
- :mod:`.chain`: :class:`AdmissionChain` and the default plugin order;
- one module per plugin: :mod:`.namespace_lifecycle`, :mod:`.taint_nodes_by_condition`,
  :mod:`.priority`, :mod:`.default_toleration_seconds`, :mod:`.hard_anti_affinity`;
- the registry's own steps: :mod:`.defaults` (API defaulting), :mod:`.match_label_keys`
  (PrepareForCreate);
- :mod:`.apiserver`: one create request end to end (decode, defaults, mutating admission,
  preparation, validation, validating admission) and its answer.
"""

from kubespread.admission.apiserver import admit, admit_object, admit_text, create, decode
from kubespread.admission.chain import DEFAULT_CHAIN, AdmissionChain
from kubespread.admission.default_toleration_seconds import DefaultTolerationSeconds
from kubespread.admission.defaults import apply_defaults
from kubespread.admission.framework import (
    BUILTIN_PRIORITY_CLASSES,
    AdmissionContext,
    AdmissionOptions,
    AdmissionPlugin,
    MutatingPlugin,
    Operation,
    Rejection,
    ValidatingPlugin,
)
from kubespread.admission.hard_anti_affinity import HardAntiAffinity, required_anti_affinity_terms
from kubespread.admission.match_label_keys import merge_match_label_keys, prepare_for_create
from kubespread.admission.namespace_lifecycle import NamespaceLifecycle
from kubespread.admission.priority import Priority
from kubespread.admission.taint_nodes_by_condition import TaintNodesByCondition

__all__ = [
    "BUILTIN_PRIORITY_CLASSES",
    "DEFAULT_CHAIN",
    "AdmissionChain",
    "AdmissionContext",
    "AdmissionOptions",
    "AdmissionPlugin",
    "DefaultTolerationSeconds",
    "HardAntiAffinity",
    "MutatingPlugin",
    "NamespaceLifecycle",
    "Operation",
    "Priority",
    "Rejection",
    "TaintNodesByCondition",
    "ValidatingPlugin",
    "admit",
    "admit_object",
    "admit_text",
    "apply_defaults",
    "create",
    "decode",
    "merge_match_label_keys",
    "prepare_for_create",
    "required_anti_affinity_terms",
]
