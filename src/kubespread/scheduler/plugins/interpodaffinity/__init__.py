"""InterPodAffinity: inter-pod affinity and anti-affinity, as kube-scheduler v1.35 has it."""

from kubespread.scheduler.plugins.interpodaffinity.common import AffinityTerm, PodTerms, pod_terms
from kubespread.scheduler.plugins.interpodaffinity.filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
)
from kubespread.scheduler.plugins.interpodaffinity.plugin import InterPodAffinity

__all__ = [
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "AffinityTerm",
    "InterPodAffinity",
    "PodTerms",
    "pod_terms",
]
