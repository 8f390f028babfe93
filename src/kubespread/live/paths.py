"""The webhook's URL paths, in a module free of the live extra's libraries: the server
(:mod:`kubespread.live.webhook`) serves them and the printed manifests
(:mod:`kubespread.live.manifests`) register them, and a plain install prints manifests too."""

from __future__ import annotations

from typing import Final

__all__ = [
    "CONVERT_WORKLOADSPREADS",
    "HEALTHZ",
    "MUTATE_PODS",
    "MUTATE_PODS_MATCH_LABEL_KEYS",
    "VALIDATE_PODS",
    "VALIDATE_WORKLOADSPREADS",
]

HEALTHZ: Final = "/healthz"
MUTATE_PODS: Final = "/mutate-pods"
#: the matchLabelKeys merge alone (registered for every namespace, failurePolicy Ignore)
MUTATE_PODS_MATCH_LABEL_KEYS: Final = "/mutate-pods/match-label-keys"
VALIDATE_PODS: Final = "/validate-pods"
VALIDATE_WORKLOADSPREADS: Final = "/validate-workloadspreads"
#: the CRD's conversion webhook: WorkloadSpread between apps.kruise.io/v1alpha1 and v1beta1
CONVERT_WORKLOADSPREADS: Final = "/convert-workloadspreads"
