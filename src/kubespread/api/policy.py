"""policy/v1: PodDisruptionBudget, the limit on voluntary disruptions (evictions, preemption).

The disruption controller keeps ``status`` (how many of the selected pods are healthy, how many
may go now); the Eviction API refuses an eviction when ``disruptionsAllowed`` is 0, and
kube-scheduler's preemption prefers victims whose eviction keeps every budget.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, ClassVar

from kubespread.api.meta import KubeObject
from kubespread.api.model import IntOrStr, Model, model
from kubespread.api.selectors import LabelSelector

__all__ = ["PodDisruptionBudget", "PodDisruptionBudgetSpec", "PodDisruptionBudgetStatus"]


@model
class PodDisruptionBudgetSpec(Model):
    min_available: IntOrStr | None = None
    max_unavailable: IntOrStr | None = None
    #: nil selects no pod; an empty selector ({}) selects every pod of the namespace
    selector: LabelSelector | None = None
    #: IfHealthyBudget (the default) or AlwaysAllow
    unhealthy_pod_eviction_policy: str | None = None


@model
class PodDisruptionBudgetStatus(Model):
    observed_generation: int = 0
    #: pod name → the time an eviction was granted, until the pod is gone (or 2 minutes pass)
    disrupted_pods: dict[str, str] = field(default_factory=dict)
    disruptions_allowed: int = 0
    current_healthy: int = 0
    desired_healthy: int = 0
    expected_pods: int = 0
    conditions: list[Any] = field(default_factory=list)


@model
class PodDisruptionBudget(KubeObject):
    KIND: ClassVar[str] = "PodDisruptionBudget"
    API_VERSION: ClassVar[str] = "policy/v1"

    spec: PodDisruptionBudgetSpec = field(default_factory=PodDisruptionBudgetSpec)
    status: PodDisruptionBudgetStatus = field(default_factory=PodDisruptionBudgetStatus)
