"""A scheduling profile: the plugin instances per extension point, in order, with weights.

kube-scheduler's frameworkImpl holds the same lists. A Profile is built by
scheduler/config.py from a KubeSchedulerProfile (after defaulting and validation) and is
immutable afterwards; one plugin instance serves every extension point it is enabled at.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kubespread.api.features import FeatureGates
from kubespread.scheduler.framework import (
    FilterPlugin,
    Plugin,
    PostFilterPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ScorePlugin,
)

__all__ = ["EXTENSION_POINTS", "Profile"]

#: extension point (as in KubeSchedulerConfiguration's plugins) → the interface implementing it
EXTENSION_POINTS: dict[str, type[Plugin]] = {
    "preEnqueue": PreEnqueuePlugin,
    "queueSort": QueueSortPlugin,
    "preFilter": PreFilterPlugin,
    "filter": FilterPlugin,
    "postFilter": PostFilterPlugin,
    "preScore": PreScorePlugin,
    "score": ScorePlugin,
}


@dataclass(frozen=True)
class Profile:
    scheduler_name: str
    pre_enqueue: tuple[PreEnqueuePlugin, ...] = ()
    queue_sort: QueueSortPlugin | None = None
    pre_filter: tuple[PreFilterPlugin, ...] = ()
    filter: tuple[FilterPlugin, ...] = ()
    #: run in order when no node fits; the default profile's: DynamicResources, DefaultPreemption
    post_filter: tuple[PostFilterPlugin, ...] = ()
    pre_score: tuple[PreScorePlugin, ...] = ()
    score: tuple[ScorePlugin, ...] = ()
    weights: Mapping[str, int] = field(default_factory=dict)
    #: every instance by name, including those only at points kubespread does not run
    plugins: Mapping[str, Plugin] = field(default_factory=dict)
    #: the share of nodes Filter looks for feasible ones in (the profile's own setting, else the
    #: configuration's; 0: adaptive, kube's default); read only by a cycle that samples
    #: (schedule_one's ``order``), the every-node cycle ignores it
    percentage_of_nodes_to_score: int = 0
    #: the Kubernetes version this profile answers as, and its feature gates (every plugin
    #: instance holds the same object)
    features: FeatureGates = field(default_factory=FeatureGates)

    def weight(self, name: str) -> int:
        return self.weights.get(name, 1)

    def enabled(self, point: str) -> list[str]:
        """Plugin names enabled at an extension point, in order (for display and tests)."""
        got = getattr(
            self,
            {
                "preEnqueue": "pre_enqueue",
                "queueSort": "queue_sort",
                "preFilter": "pre_filter",
                "postFilter": "post_filter",
                "preScore": "pre_score",
            }.get(point, point),
        )
        if got is None:
            return []
        if isinstance(got, Plugin):
            return [got.name]
        return [p.name for p in got]
