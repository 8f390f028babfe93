"""DynamicResources (PreFilter, PostFilter), as dynamicresources.go does it for what
kubespread can see.

PreFilter records whether the pod references resource claims and is skipped (kubespread
allocates no devices, so a pod with claims is neither narrowed nor rejected here). PostFilter
reads that record back, as kube's reads its PreFilter state:

* no record: kube's PreFilter never ran because an earlier PreFilter plugin rejected the pod
  as UnschedulableAndUnresolvable (that stops the PreFilter loop). Reading the state fails
  with "not found", an Error, which ends the PostFilter loop and is the whole PostFilter
  part of the message;
* no claims: Unschedulable, "no new claims to deallocate" (nothing this plugin can undo);
* claims: kube would look for a claim to deallocate and might write to the API. kubespread
  cannot say (None).
"""

from __future__ import annotations

from typing import Final

from kubespread.api.core import Pod
from kubespread.scheduler.framework import (
    SKIP,
    CycleState,
    NodeStatuses,
    PostFilterPlugin,
    PreFilterPlugin,
    PreFilterResult,
    StateKey,
    StateNotFoundError,
    Status,
)

__all__ = ["MSG_NO_CLAIMS", "MSG_STATE_NOT_FOUND", "DynamicResources", "has_resource_claims"]

NAME: Final = "DynamicResources"
MSG_NO_CLAIMS: Final = "no new claims to deallocate"
#: fwk.ErrNotFound: what CycleState.Read answers for a key nobody wrote
MSG_STATE_NOT_FOUND: Final = "not found"
_STATE_KEY: Final = StateKey("PreFilter" + NAME, bool)
_NO_CLAIMS: Final = Status.unschedulable(MSG_NO_CLAIMS)
_STATE_NOT_FOUND: Final = Status.error(MSG_STATE_NOT_FOUND)


def has_resource_claims(pod: Pod) -> bool:
    """Whether the pod lists spec.resourceClaims (kept as an unknown field: not modelled)."""
    extra = pod.spec.extra or {}
    return bool(extra.get("resourceClaims"))


class DynamicResources(PreFilterPlugin, PostFilterPlugin):
    name = NAME

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        state.write(_STATE_KEY, has_resource_claims(pod))
        return None, SKIP

    def post_filter(self, state: CycleState, pod: Pod, statuses: NodeStatuses) -> Status | None:
        try:
            claims = state.read(_STATE_KEY)
        except StateNotFoundError:
            return _STATE_NOT_FOUND
        if claims:
            return None
        return _NO_CLAIMS
