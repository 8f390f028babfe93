"""Taints and tolerations."""

from __future__ import annotations

import math
from typing import Final

from kubespread.api.model import Model, model

__all__ = ["TAINT_EFFECTS", "Taint", "Toleration", "find_untolerated", "tolerates_all", "toleration_time"]

NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE = "NoSchedule", "PreferNoSchedule", "NoExecute"
TAINT_EFFECTS: Final = (NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE)
EQUAL, EXISTS = "Equal", "Exists"


@model
class Taint(Model):
    key: str = ""
    value: str = ""
    effect: str = ""
    time_added: str | None = None

    def __str__(self) -> str:
        """kube-scheduler's rendering in reasons: {key: value} for the taint."""
        return f"{{{self.key}: {self.value}}}"


@model
class Toleration(Model):
    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    def tolerates(self, taint: Taint) -> bool:
        """ToleratesTaint: an empty effect matches all effects; an empty key with Exists matches
        every taint; Equal (or an empty operator) compares values."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == EXISTS:
            return True
        if self.operator in (EQUAL, ""):
            return self.value == taint.value
        return False


def tolerates_all(tolerations: list[Toleration], taint: Taint) -> bool:
    return any(t.tolerates(taint) for t in tolerations)


def find_untolerated(
    taints: list[Taint], tolerations: list[Toleration], effects: tuple[str, ...] = (NO_SCHEDULE, NO_EXECUTE)
) -> Taint | None:
    """The first taint with one of ``effects`` that no toleration tolerates."""
    for taint in taints:
        if taint.effect in effects and not tolerates_all(tolerations, taint):
            return taint
    return None


def toleration_time(tolerations: list[Toleration], taints: Taint | list[Taint]) -> float | None:
    """How long (seconds) a pod may stay on a node with these NoExecute taints.

    Each taint takes the *first* toleration that tolerates it (GetMatchingTolerations); None
    when some taint has none (evict now). Of the tolerations taken, the smallest
    tolerationSeconds counts, negative as 0; ``math.inf`` when none sets it (stay forever), as
    the taint eviction controller's getMinTolerationTime.
    """
    taints = [taints] if isinstance(taints, Taint) else taints
    used = []
    for taint in taints:
        first = next((t for t in tolerations if t.tolerates(taint)), None)
        if first is None:
            return None
        used.append(first)
    seconds = [max(0, t.toleration_seconds) for t in used if t.toleration_seconds is not None]
    return min(seconds) if seconds else math.inf
