"""API defaulting: what a decoded object of a built-in kind gets before admission sees it.

kube-apiserver applies the scheme's defaulting functions as it decodes a request, so every
admission plugin and the validation see the defaulted object. kubespread does the parts that
matter to scheduling (and that shared/conformance/admission records):

- every pod spec, a Pod's or a workload template's (SetDefaults_PodSpec):
  ``schedulerName: default-scheduler`` when empty;
- a Pod only, not a template (SetDefaults_Pod): in each container and init container, a
  resource with a limit and no request gets the limit as its request;
- a PriorityClass without ``preemptionPolicy`` gets PreemptLowerPriority (SetDefaults_PriorityClass);
- quantities are held in canonical form (``0.5`` → ``500m``, ``1024Mi`` → ``1Gi``,
  ``1.5Gi`` → ``1536Mi``, a bare ``2`` → ``"2"``), as Go's resource.Quantity writes itself back.

Custom resources (the Kruise kinds) are stored as they come: the API server has no defaulting
functions for them and does not parse their quantities.

Not done (not modelled, or not recorded): restartPolicy, dnsPolicy, terminationGracePeriodSeconds,
imagePullPolicy and the other pod spec defaults; Deployment replicas, strategy, revision history
and progress deadline; pod-level (``spec.resources``) request defaulting.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Iterator
from typing import Any

from kubespread.admission.framework import api_group
from kubespread.api.apps import PriorityClass
from kubespread.api.core import Container, Pod, PodSpec, PodTemplateSpec
from kubespread.api.meta import KubeObject
from kubespread.api.model import Model
from kubespread.api.quantity import Quantity

__all__ = [
    "DEFAULT_PREEMPTION_POLICY",
    "DEFAULT_SCHEDULER_NAME",
    "apply_defaults",
    "canonicalize_quantities",
    "default_pod",
    "default_pod_spec",
    "has_api_defaults",
]

DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_PREEMPTION_POLICY = "PreemptLowerPriority"

# API groups whose kinds kube-apiserver serves natively (and so defaults)
_BUILTIN_GROUPS = frozenset({"", "apps", "batch", "scheduling.k8s.io"})


def has_api_defaults(obj: KubeObject) -> bool:
    """Whether the kind is built in (defaulted, quantities parsed) rather than a custom resource."""
    return api_group(obj.API_VERSION) in _BUILTIN_GROUPS


def default_pod_spec(spec: PodSpec) -> None:
    """SetDefaults_PodSpec, the part kubespread models."""
    if not spec.scheduler_name:
        spec.scheduler_name = DEFAULT_SCHEDULER_NAME


def _requests_from_limits(container: Container) -> None:
    res = container.resources
    for name, limit in res.limits.items():
        if name not in res.requests:
            res.requests[name] = Quantity(limit.nanos, limit.format)


def default_pod(pod: Pod) -> None:
    """SetDefaults_Pod and its spec's defaults: templates do not get requests from limits."""
    for container in (*pod.spec.containers, *pod.spec.init_containers):
        _requests_from_limits(container)
    default_pod_spec(pod.spec)


def _pod_templates(obj: KubeObject) -> Iterator[PodTemplateSpec]:
    """The pod template of a workload (Deployment, ReplicaSet, StatefulSet, Job, ...)."""
    template = getattr(getattr(obj, "spec", None), "template", None)
    if isinstance(template, PodTemplateSpec):
        yield template


def _canonical(v: Any) -> Any:
    """``v`` with every Quantity in it canonical; lists, dicts and models are changed in place."""
    if isinstance(v, Quantity):
        if v.text is None and v.number is None:
            return v
        return Quantity(v.nanos, v.format)
    if isinstance(v, list):
        for i, x in enumerate(v):
            v[i] = _canonical(x)
    elif isinstance(v, dict):
        for k, x in v.items():
            v[k] = _canonical(x)
    elif isinstance(v, Model):
        canonicalize_quantities(v)
    return v


def canonicalize_quantities(m: Model) -> None:
    """Every Quantity held by ``m`` (at any depth of its modelled fields) in canonical form.
    Unmodelled fields (``extra``, ``Any``-typed ones) are raw manifest values and stay as they are.
    Only the fields whose type can hold a Quantity are visited (:func:`_quantity_fields`)."""
    for name in _quantity_fields(type(m)):
        v = getattr(m, name)
        new = _canonical(v)
        if new is not v:
            setattr(m, name, new)


#: model class -> the names of its fields whose declared type may hold a Quantity
_QUANTITY_FIELDS: dict[type, tuple[str, ...]] = {}


def _quantity_fields(cls: type) -> tuple[str, ...]:
    """The fields of a model class whose type mentions Quantity, Any, or a model class that has
    such fields: the others hold strings, numbers and quantity-free models, which
    canonicalizing leaves as they are, so they need no visit."""
    found = _QUANTITY_FIELDS.get(cls)
    if found is not None:
        return found
    every = tuple(f.name for f in dataclasses.fields(cls))
    _QUANTITY_FIELDS[cls] = every  # while resolving a recursive model: every field
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # an annotation that does not resolve: visit every field, as before
        return every
    found = tuple(name for name in every if _may_hold_quantity(hints.get(name, Any)))
    _QUANTITY_FIELDS[cls] = found
    return found


def _may_hold_quantity(tp: Any) -> bool:
    if tp is Quantity or tp is Any or tp is object:
        return True
    if isinstance(tp, type):
        return issubclass(tp, Model) and bool(_quantity_fields(tp))
    args = typing.get_args(tp)
    if not args:
        return True  # a form not understood here: visited
    return any(_may_hold_quantity(a) for a in args)


def apply_defaults(obj: KubeObject) -> None:
    """Default a decoded object in place, as kube-apiserver does before admission."""
    if not has_api_defaults(obj):
        return
    if isinstance(obj, Pod):
        default_pod(obj)
    if isinstance(obj, PriorityClass) and obj.preemption_policy is None:
        obj.preemption_policy = DEFAULT_PREEMPTION_POLICY
    for template in _pod_templates(obj):
        default_pod_spec(template.spec)
    canonicalize_quantities(obj)
