"""DefaultTolerationSeconds: a new Pod tolerates a not-ready or unreachable node for a while.

On CREATE of a Pod, two tolerations are appended, each unless the pod already has one that
covers it (rule: the toleration's key is that taint's key or empty, and its effect is NoExecute
or empty; operator and value are not looked at):

    {key: node.kubernetes.io/not-ready,   operator: Exists, effect: NoExecute, tolerationSeconds: 300}
    {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 300}

The seconds are the server's options (--default-not-ready-toleration-seconds,
--default-unreachable-toleration-seconds). Workload templates are not touched.
"""

from __future__ import annotations

from kubespread.admission.framework import AdmissionContext, Operation, Rejection
from kubespread.api.core import Pod
from kubespread.api.keys import TAINT_NOT_READY, TAINT_UNREACHABLE
from kubespread.api.meta import KubeObject
from kubespread.api.taints import NO_EXECUTE, Toleration

__all__ = ["DefaultTolerationSeconds"]


def _covers(toleration: Toleration, key: str) -> bool:
    return toleration.key in (key, "") and toleration.effect in (NO_EXECUTE, "")


class DefaultTolerationSeconds:
    name = "DefaultTolerationSeconds"

    def mutate(self, obj: KubeObject, ctx: AdmissionContext) -> Rejection | None:
        if ctx.operation is not Operation.CREATE or not isinstance(obj, Pod):
            return None
        tolerations = obj.spec.tolerations
        opts = ctx.options
        wanted = (
            (TAINT_NOT_READY, opts.default_not_ready_toleration_seconds),
            (TAINT_UNREACHABLE, opts.default_unreachable_toleration_seconds),
        )
        missing = [(key, s) for key, s in wanted if not any(_covers(t, key) for t in tolerations)]
        for key, seconds in missing:
            tolerations.append(
                Toleration(key=key, operator="Exists", effect=NO_EXECUTE, toleration_seconds=seconds)
            )
        return None
