"""TaintNodesByCondition: a new Node starts out tainted not-ready.

On CREATE of a Node, ``{key: node.kubernetes.io/not-ready, effect: NoSchedule}`` is appended to
``spec.taints`` unless a taint with that key and effect is already there (whatever its value), so
that no pod lands on the node before the node lifecycle controller has seen it Ready.
"""

from __future__ import annotations

from kubespread.admission.framework import AdmissionContext, Operation, Rejection
from kubespread.api.core import Node
from kubespread.api.keys import TAINT_NOT_READY
from kubespread.api.meta import KubeObject
from kubespread.api.taints import NO_SCHEDULE, Taint

__all__ = ["TaintNodesByCondition"]


class TaintNodesByCondition:
    name = "TaintNodesByCondition"

    def mutate(self, obj: KubeObject, ctx: AdmissionContext) -> Rejection | None:
        if ctx.operation is not Operation.CREATE or not isinstance(obj, Node):
            return None
        taints = obj.spec.taints
        # Taint.MatchTaint: same key and effect
        if not any(t.key == TAINT_NOT_READY and t.effect == NO_SCHEDULE for t in taints):
            taints.append(Taint(key=TAINT_NOT_READY, effect=NO_SCHEDULE))
        return None
