"""Which Kubernetes version kubespread answers as, and what that version turns on.

The one place that maps a version to behaviour, modelled on kube's versioned feature specs
(``pkg/features/kube_features.go`` ``defaultVersionedKubernetesFeatureGates``, formerly
``versioned_kube_features.go``): each feature lists, per version where it changed, its
default and stage. Plugins and admission steps ask a :class:`FeatureGates` whether a feature
is on; none of them compares version numbers.

Two kinds of entries:

- kube's own feature gates (``upstream=True``), with the specs kube declares;
- changes kube made without a gate (``upstream=False``), named here after what they change
  and the pull request that made them, "on" from the release that shipped them. kube-scheduler
  cannot turn these off; kubespread can, so one answer can be compared with the other.

It sits in ``api`` so that both the admission chain and the scheduler (and every layer above)
can read it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from typing import Final

__all__ = [
    "BALANCED_ALLOCATION_SCORES_IMPROVEMENT",
    "DEFAULT_KUBE_VERSION",
    "FEATURES",
    "FIT_UNRESOLVABLE_BEYOND_ALLOCATABLE",
    "INTER_POD_AFFINITY_HINT_FIXES",
    "INTER_POD_ANTI_AFFINITY_HINT_ANY_TERM",
    "KUBE_VERSIONS",
    "KUBE_VERSION_ENV",
    "MATCH_LABEL_KEYS_IN_POD_AFFINITY",
    "MATCH_LABEL_KEYS_IN_POD_TOPOLOGY_SPREAD",
    "MATCH_LABEL_KEYS_SELECTOR_MERGE",
    "MAX_UNAVAILABLE_STATEFUL_SET",
    "POD_LEVEL_RESOURCES",
    "PREEMPTION_EMPTY_PDB_SELECTOR",
    "PREEMPTION_PLACEMENT_MESSAGE",
    "SPREAD_EMPTY_SELECTOR_MATCHES_ALL",
    "TAINT_MESSAGE_WITHOUT_VALUES",
    "Feature",
    "FeatureGates",
    "KubeVersion",
    "Stage",
    "VersionError",
    "VersionedSpec",
    "features_for",
]


class VersionError(ValueError):
    """A Kubernetes version kubespread cannot answer as (one line, says which it can)."""


@dataclass(frozen=True, order=True)
class KubeVersion:
    """major.minor: the patch level does not change what kubespread models."""

    major: int
    minor: int

    @classmethod
    def parse(cls, text: str) -> KubeVersion:
        """``1.36``, ``v1.36``, ``1.36.2``, ``v1.36.2-gke.1200`` (a /version gitVersion)."""
        m = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?", text.strip())
        if m is None:
            raise VersionError(
                f"{text!r} is not a Kubernetes version (expected MAJOR.MINOR: 1.33, 1.34, ... 1.38)"
            )
        return cls(int(m.group(1)), int(m.group(2)))

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"


#: the versions kubespread answers as; the default until the others are proven as 1.35 is
KUBE_VERSIONS: Final = tuple(KubeVersion(1, m) for m in range(33, 39))
DEFAULT_KUBE_VERSION: Final = KubeVersion(1, 35)
#: the environment variable every command reads when --kube-version is not given
KUBE_VERSION_ENV: Final = "KUBESPREAD_KUBE_VERSION"


class Stage(StrEnum):
    ALPHA = "Alpha"
    BETA = "Beta"
    GA = "GA"
    DEPRECATED = "Deprecated"
    #: a change made without a gate: always on from its version
    CHANGE = "Change"


@dataclass(frozen=True)
class VersionedSpec:
    """From ``version`` on (until the next spec), the feature's default and stage."""

    version: KubeVersion
    default: bool
    stage: Stage
    #: LockToDefault: the gate can no longer be set against its default
    locked: bool = False


def _v(text: str) -> KubeVersion:
    return KubeVersion.parse(text)


@dataclass(frozen=True)
class Feature:
    name: str
    specs: tuple[VersionedSpec, ...]
    #: the pull request or KEP that made the change kubespread models
    reference: str
    #: what changes for a user when it is on
    summary: str
    #: a kube feature gate (True), or a change kube made without one (False)
    upstream: bool = True
    #: where the behaviour was read: upstream source at a version, or only a description
    source: str = "kube_features.go, kubernetes v1.36 (openshift/microshift's tree)"

    def spec_at(self, version: KubeVersion) -> VersionedSpec | None:
        """The spec in force at ``version`` (None before the feature existed: off)."""
        current = None
        for spec in self.specs:
            if spec.version <= version:
                current = spec
        return current

    def default_at(self, version: KubeVersion) -> bool:
        spec = self.spec_at(version)
        return spec is not None and spec.default


def _gate(
    name: str, reference: str, summary: str, *specs: tuple[str, bool, Stage] | VersionedSpec
) -> Feature:
    out = tuple(s if isinstance(s, VersionedSpec) else VersionedSpec(_v(s[0]), s[1], s[2]) for s in specs)
    return Feature(name, out, reference, summary)


def _change(name: str, version: str, reference: str, summary: str, source: str) -> Feature:
    return Feature(
        name,
        (VersionedSpec(_v(version), True, Stage.CHANGE, locked=True),),
        reference,
        summary,
        False,
        source,
    )


# kube's gates, with the specs of kubernetes v1.36's pkg/features/kube_features.go
# (openshift/kubernetes, as vendored by openshift/microshift); v1.37+ entries are noted where
# they come from.
MATCH_LABEL_KEYS_IN_POD_TOPOLOGY_SPREAD: Final = _gate(
    "MatchLabelKeysInPodTopologySpread",
    "KEP-3243",
    "spread constraints' matchLabelKeys are honoured",
    ("1.25", False, Stage.ALPHA),
    ("1.27", True, Stage.BETA),
)
MATCH_LABEL_KEYS_SELECTOR_MERGE: Final = _gate(
    "MatchLabelKeysInPodTopologySpreadSelectorMerge",
    "KEP-3243",
    "kube-apiserver merges a spread constraint's matchLabelKeys into its labelSelector when the "
    "pod is created; before, only the scheduler merged them, and the stored pod kept its selector",
    ("1.34", True, Stage.BETA),
)
MATCH_LABEL_KEYS_IN_POD_AFFINITY: Final = _gate(
    "MatchLabelKeysInPodAffinity",
    "KEP-3633",
    "pod (anti-)affinity's matchLabelKeys/mismatchLabelKeys are merged at pod creation",
    ("1.29", False, Stage.ALPHA),
    ("1.31", True, Stage.BETA),
    VersionedSpec(_v("1.33"), True, Stage.GA, locked=True),
)
POD_LEVEL_RESOURCES: Final = _gate(
    "PodLevelResources",
    "KEP-2837",
    "spec.resources (pod-level requests) counts for Filter and BalancedAllocation",
    ("1.32", False, Stage.ALPHA),
    ("1.34", True, Stage.BETA),
    # v1.37 (GA): from the v1.37 release notes as issue 37 quotes them, no v1.37 source at hand
    VersionedSpec(_v("1.37"), True, Stage.GA, locked=True),
)
MAX_UNAVAILABLE_STATEFUL_SET: Final = _gate(
    "MaxUnavailableStatefulSet",
    "KEP-961",
    "a StatefulSet's rollingUpdate.maxUnavailable is honoured (else one pod at a time)",
    ("1.24", False, Stage.ALPHA),
    ("1.35", False, Stage.BETA),  # on in v1.35.0, off again from kubernetes#137904
    # v1.37 (on by default): from the v1.37 release notes as issue 37 quotes them
    ("1.37", True, Stage.BETA),
)
# Gates whose state kubespread reports but does not branch on: each is on in every version
# 1.33-1.38 or only changes the scheduler's timing, which kubespread's cycle does not model.
_REPORTED: Final = (
    _gate(
        "NodeInclusionPolicyInPodTopologySpread",
        "KEP-3094",
        "nodeAffinityPolicy / nodeTaintsPolicy of spread constraints",
        ("1.25", False, Stage.ALPHA),
        ("1.26", True, Stage.BETA),
        VersionedSpec(_v("1.33"), True, Stage.GA, locked=True),
    ),
    _gate(
        "SchedulerAsyncPreemption",
        "KEP-4832",
        "preemption's API calls run asynchronously (timing only)",
        ("1.32", False, Stage.ALPHA),
        ("1.33", True, Stage.BETA),
    ),
    _gate(
        "SchedulerQueueingHints",
        "KEP-4247",
        "plugins' queueing hints decide which cluster events requeue a pod",
        ("1.28", False, Stage.BETA),
        ("1.32", True, Stage.BETA),
        VersionedSpec(_v("1.34"), True, Stage.GA, locked=True),
    ),
    _gate(
        "SchedulerPopFromBackoffQ",
        "KEP-5142",
        "the queue pops from backoffQ when activeQ is empty",
        ("1.33", True, Stage.BETA),
    ),
    _gate(
        "NominatedNodeNameForExpectation",
        "KEP-5278",
        "nominatedNodeName is set for expected placements",
        ("1.34", False, Stage.ALPHA),
        ("1.35", True, Stage.BETA),
    ),
    _gate(
        "ClearingNominatedNodeNameAfterBinding",
        "KEP-5278",
        "nominatedNodeName is cleared once the pod is bound",
        ("1.34", False, Stage.ALPHA),
        ("1.35", True, Stage.BETA),
    ),
)

# Changes kube made without a gate, from the release that shipped them.
FIT_UNRESOLVABLE_BEYOND_ALLOCATABLE: Final = _change(
    "NodeResourcesFitUnresolvableBeyondAllocatable",
    "1.34",
    "kubernetes#131345",
    "NodeResourcesFit rejects a node whose whole allocatable is smaller than the pod's request as "
    "UnschedulableAndUnresolvable (up to v1.33: Unschedulable), so preemption no longer tries it: "
    "the FailedScheduling message's preemption part counts it as 'Preemption is not helpful'",
    "noderesources/fit.go of v1.33.3 against v1.34.1 and v1.35.4; the 1.33 and 1.34 reference "
    "corpora (filter codes of 9 cases)",
)
TAINT_MESSAGE_WITHOUT_VALUES: Final = _change(
    "TaintTolerationGenericMessage",
    "1.35",
    "kubernetes#134740",
    "TaintToleration rejects a node with 'node(s) had untolerated taint(s)' instead of naming the "
    "first untolerated taint ('node(s) had untolerated taint {key: value}'): taint keys and values "
    "may be sensitive. Cherry-picked into a later v1.34 patch release (kubernetes#135023); "
    "kubespread's 1.34 answers as v1.34.1, which names the taint",
    "taint_toleration.go of v1.33.3 and v1.34.1 against v1.35.4; the 1.33 and 1.34 reference "
    "corpora (tests/data/conformance-1.3x.json.gz)",
)
BALANCED_ALLOCATION_SCORES_IMPROVEMENT: Final = _change(
    "BalancedAllocationScoresImprovement",
    "1.36",
    "kubernetes#135573",
    "NodeResourcesBalancedAllocation scores how much the pod improves the node's balance "
    "(50 + (50 + with pod - without pod) / 2) instead of the balance with the pod alone",
    "balanced_allocation.go, kubernetes v1.35.4 (openshift-kni/scheduler-plugins' vendor) and v1.36",
)
INTER_POD_AFFINITY_HINT_FIXES: Final = _change(
    "InterPodAffinityQueueingHintFixes",
    "1.36",
    "kubernetes#135325, kubernetes#135394",
    "InterPodAffinity's queueing hint requeues a pod whose own labels change, or when a deleted "
    "pod's required anti-affinity matched it; a nominated pending pod counts as placed",
    "interpodaffinity/plugin.go isSchedulableAfterPodChange, v1.35.4 against v1.36",
)
INTER_POD_ANTI_AFFINITY_HINT_ANY_TERM: Final = _change(
    "InterPodAntiAffinityQueueingHintAnyTerm",
    "1.37",
    "kubernetes#139161",
    "InterPodAffinity's queueing hint treats a pod as matching required anti-affinity when it "
    "matches any one term (up to v1.36: only when it matches every term), on an update or "
    "deletion of a bound pod, both ways",
    "PR #139161's description and its review (podMatchesAnyAffinityTerms); the old behaviour "
    "(podMatchesAllAffinityTerms for anti-affinity) in v1.35.4's and v1.36's plugin.go",
)
PREEMPTION_PLACEMENT_MESSAGE: Final = _change(
    "PreemptionPlacementMessage",
    "1.37",
    "kubernetes#140180",
    "a FailedScheduling message of a pod that preempts ends in 'preemption: found a potential "
    "placement for pod on node X, preempting N victims'",
    "described with the status it returns in notes on PR #140180; no v1.37 source at hand",
)

# The two v1.38 changes are modelled from their descriptions (issue 37 quotes the release
# notes): no v1.38 source was at hand to check them against.
SPREAD_EMPTY_SELECTOR_MATCHES_ALL: Final = _change(
    "SpreadEmptySelectorMatchesAll",
    "1.38",
    "kubernetes#141340",
    "a spread constraint with labelSelector: {} counts every pod of the namespace (up to v1.37 "
    "countPodsMatchSelector counts none for an empty selector, while the pod still matches itself)",
    "issue 37's reading of the v1.38 release notes (no v1.38 source at hand); the old behaviour "
    "from v1.36's podtopologyspread/common.go, which returns 0 for it",
)
PREEMPTION_EMPTY_PDB_SELECTOR: Final = _change(
    "PreemptionEmptyPDBSelector",
    "1.38",
    "kubernetes#141785",
    "preemption counts a PodDisruptionBudget whose selector is empty ({}) as selecting every "
    "labelled pod of its namespace (up to v1.37 it matched nothing there)",
    "issue 37's reading of the v1.38 release notes (no v1.38 source at hand); the old behaviour "
    "from v1.36's preemption.go, which skips such a budget",
)

FEATURES: Final[Mapping[str, Feature]] = {
    f.name: f
    for f in (
        MATCH_LABEL_KEYS_IN_POD_TOPOLOGY_SPREAD,
        MATCH_LABEL_KEYS_SELECTOR_MERGE,
        MATCH_LABEL_KEYS_IN_POD_AFFINITY,
        POD_LEVEL_RESOURCES,
        MAX_UNAVAILABLE_STATEFUL_SET,
        *_REPORTED,
        BALANCED_ALLOCATION_SCORES_IMPROVEMENT,
        FIT_UNRESOLVABLE_BEYOND_ALLOCATABLE,
        TAINT_MESSAGE_WITHOUT_VALUES,
        INTER_POD_AFFINITY_HINT_FIXES,
        INTER_POD_ANTI_AFFINITY_HINT_ANY_TERM,
        PREEMPTION_PLACEMENT_MESSAGE,
        PREEMPTION_EMPTY_PDB_SELECTOR,
        SPREAD_EMPTY_SELECTOR_MATCHES_ALL,
    )
}


@dataclass(frozen=True)
class FeatureGates:
    """The features of one Kubernetes version, with any overrides (``--feature-gates``-like,
    for tests and comparisons). Travels with a scheduling profile and the admission context."""

    version: KubeVersion = DEFAULT_KUBE_VERSION
    overrides: Mapping[str, bool] = field(default_factory=dict)

    def enabled(self, feature: Feature) -> bool:
        got = self.overrides.get(feature.name)
        if got is not None:
            return got
        return feature.default_at(self.version)

    def with_overrides(self, **overrides: bool) -> FeatureGates:
        """The same version with some features set (by name)."""
        unknown = sorted(set(overrides) - set(FEATURES))
        if unknown:
            raise VersionError(f"unknown feature(s): {', '.join(unknown)}")
        return FeatureGates(self.version, {**self.overrides, **overrides})

    def table(self) -> dict[str, bool]:
        """Every feature's state at this version (for ``--kube-version`` listings and tests)."""
        return {name: self.enabled(f) for name, f in FEATURES.items()}


@cache
def _for(version: KubeVersion) -> FeatureGates:
    return FeatureGates(version)


def features_for(version: KubeVersion | str | None = None) -> FeatureGates:
    """The gates of a version kubespread answers as: ``None`` reads KUBESPREAD_KUBE_VERSION,
    else the default (1.35). VersionError for a version outside 1.33-1.38."""
    if version is None:
        version = os.environ.get(KUBE_VERSION_ENV) or DEFAULT_KUBE_VERSION
    if isinstance(version, str):
        version = KubeVersion.parse(version)
    if version not in KUBE_VERSIONS:
        supported = ", ".join(str(v) for v in KUBE_VERSIONS)
        raise VersionError(f"Kubernetes {version} is not supported (supported: {supported})")
    return _for(version)
