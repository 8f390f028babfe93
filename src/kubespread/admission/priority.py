"""Priority: a new Pod's priority comes from its PriorityClass, never from the user.

Mutating, on CREATE of a Pod:

- the class is ``spec.priorityClassName``; without one, the global default class (its name is
  written into the pod), and without a global default, priority 0 and PreemptLowerPriority;
- an unknown class is refused: 403 ``no PriorityClass with name X was found``;
- a ``spec.priority`` or ``spec.preemptionPolicy`` that differs from what the class gives is
  refused (403); so is any priority at all without a class, unless it is 0;
- then both are set from the class.

Workload templates are not looked at (a Deployment may carry a template priority). Validating,
on CREATE of a PriorityClass: only one class may be the global default.

Because it mutates, it runs before the registry validates: its 403 hides any validation error.
"""

from __future__ import annotations

from kubespread.admission.framework import AdmissionContext, Operation, Rejection
from kubespread.api.apps import PriorityClass
from kubespread.api.core import Pod
from kubespread.api.meta import KubeObject

__all__ = ["DEFAULT_PRIORITY", "PREEMPT_LOWER_PRIORITY", "Priority"]

# scheduling.DefaultPriorityWhenNoDefaultClassExists
DEFAULT_PRIORITY = 0
# what a class without a preemptionPolicy is stored with (SetDefaults_PriorityClass), and what a
# pod gets when no class applies
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"


class Priority:
    name = "Priority"

    def mutate(self, obj: KubeObject, ctx: AdmissionContext) -> Rejection | None:
        if ctx.operation is not Operation.CREATE or not isinstance(obj, Pod):
            return None
        spec = obj.spec
        if spec.priority_class_name:
            pc = ctx.priority_classes.get(spec.priority_class_name)
            if pc is None:
                why = f"no PriorityClass with name {spec.priority_class_name} was found"
                return Rejection.forbidden(obj, why)
            priority, preemption = pc.value, pc.preemption_policy or PREEMPT_LOWER_PRIORITY
        else:
            default = ctx.global_default_priority_class()
            if default is not None:
                spec.priority_class_name = default.metadata.name
                priority, preemption = default.value, default.preemption_policy or PREEMPT_LOWER_PRIORITY
            else:
                priority, preemption = DEFAULT_PRIORITY, PREEMPT_LOWER_PRIORITY
        if spec.priority is not None and spec.priority != priority:
            return Rejection.forbidden(
                obj,
                f"the integer value of priority ({spec.priority}) must not be provided in pod spec; "
                f"priority admission controller computed {priority} from the given PriorityClass name",
            )
        spec.priority = priority
        if spec.preemption_policy is not None and spec.preemption_policy != preemption:
            return Rejection.forbidden(
                obj,
                f"the string value of PreemptionPolicy ({spec.preemption_policy}) must not be provided "
                f"in pod spec; priority admission controller computed {preemption} from the given "
                "PriorityClass name",
            )
        spec.preemption_policy = preemption
        return None

    def validate(self, obj: KubeObject, ctx: AdmissionContext) -> Rejection | None:
        if ctx.operation is not Operation.CREATE or not isinstance(obj, PriorityClass):
            return None
        if obj.global_default:
            existing = ctx.global_default_priority_class()
            if existing is not None:
                return Rejection.forbidden(
                    obj,
                    f"PriorityClass {existing.metadata.name} is already marked as default. "
                    "Only one default can exist",
                )
        return None
