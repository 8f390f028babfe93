"""The admission framework: what a plugin is, what it sees, what a refusal looks like.

A plugin has a ``name`` and a ``mutate(obj, ctx)`` (it may change ``obj``), a
``validate(obj, ctx)`` (it must not), or both, as kube-apiserver's admission.MutationInterface
and admission.ValidationInterface. Each returns ``None`` to let the request through, or a
:class:`Rejection` (the HTTP code, status reason, message and causes of the answer); ``validate``
may also return field errors, which the chain turns into a 422 Invalid. Refusals are values:
no exception leaves a plugin for a user's mistake.

:class:`AdmissionContext` is everything a plugin may read besides the object: the operation,
the PriorityClasses and namespaces that exist, and the server's options (its flags).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from kubespread.api.apps import PriorityClass
from kubespread.api.errors import FieldError
from kubespread.api.features import FeatureGates
from kubespread.api.meta import KubeObject, ObjectMeta

__all__ = [
    "BUILTIN_PRIORITY_CLASSES",
    "AdmissionContext",
    "AdmissionOptions",
    "AdmissionPlugin",
    "MutatingPlugin",
    "Operation",
    "Rejection",
    "ValidatingPlugin",
    "api_group",
    "go_quote",
    "handles",
    "qualified_kind",
    "resource_name",
]


class Operation(StrEnum):
    """admission.Operation: what the request does to the object."""

    CREATE = "CREATE"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    CONNECT = "CONNECT"


# --- naming the object in messages -----------------------------------------------------------------------


def api_group(api_version: str) -> str:
    """``apps`` of ``apps/v1``; ``""`` for the core group (``v1``)."""
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


def go_quote(s: str) -> str:
    """Go's %q, close enough for names (they are validated ASCII in practice)."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _plural(kind: str) -> str:
    """The lower-case plural the REST path uses: pods, nodes, priorityclasses, policies."""
    lower = kind.lower()
    if lower.endswith("s"):
        return lower + "es"
    if lower.endswith("y") and lower[-2:-1] not in ("a", "e", "i", "o", "u"):
        return lower[:-1] + "ies"
    return lower + "s"


def resource_name(obj: KubeObject) -> str:
    """The group-qualified resource, as NewForbidden names it (``pods``, ``deployments.apps``)."""
    group = api_group(obj.API_VERSION)
    plural = _plural(obj.KIND)
    return f"{plural}.{group}" if group else plural


def qualified_kind(obj: KubeObject) -> str:
    """``Pod``, ``Deployment.apps``: how a 422 message names the kind."""
    group = api_group(obj.API_VERSION)
    return f"{obj.KIND}.{group}" if group else obj.KIND


# --- refusals ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rejection:
    """A refusal: what kube-apiserver answers instead of storing the object."""

    code: int
    reason: str
    message: str
    causes: tuple[dict[str, str], ...] = ()

    @classmethod
    def bad_request(cls, message: str) -> Rejection:
        """400: the request cannot be read (not a mapping, no kind, a malformed quantity)."""
        return cls(400, "BadRequest", message)

    @classmethod
    def too_large(cls, limit: int) -> Rejection:
        """413: the body is over the server's request limit (3 MiB)."""
        return cls(413, "RequestEntityTooLarge", f"Request entity too large: limit is {limit}")

    @classmethod
    def forbidden(cls, obj: KubeObject, why: str) -> Rejection:
        """admission.NewForbidden: ``pods "name" is forbidden: why`` (403, no causes)."""
        name = obj.metadata.name
        subject = f"{resource_name(obj)} {go_quote(name)}" if name else resource_name(obj)
        return cls(403, "Forbidden", f"{subject} is forbidden: {why}")

    @classmethod
    def not_found(cls, resource: str, name: str) -> Rejection:
        """errors.NewNotFound: ``namespaces "prod" not found`` (404)."""
        return cls(404, "NotFound", f"{resource} {go_quote(name)} not found")

    @classmethod
    def invalid(cls, obj: KubeObject, errors: Iterable[FieldError]) -> Rejection:
        """errors.NewInvalid: 422 with one cause per error; the message lists the distinct
        errors, one bare or several in brackets."""
        errors = list(errors)
        distinct = list(dict.fromkeys(str(e) for e in errors))
        head = f"{qualified_kind(obj)} {go_quote(obj.metadata.name)} is invalid"
        if len(distinct) == 1:
            head = f"{head}: {distinct[0]}"
        elif distinct:
            head = f"{head}: [{', '.join(distinct)}]"
        return cls(422, "Invalid", head, tuple(e.cause() for e in errors))

    def answer(self) -> dict[str, Any]:
        """The answer of shared/conformance/admission for this refusal."""
        return {
            "accepted": False,
            "code": self.code,
            "reason": self.reason,
            "message": self.message,
            "causes": list(self.causes),
        }


# --- what plugins see --------------------------------------------------------------------------------------


def _builtin_class(name: str, value: int) -> PriorityClass:
    return PriorityClass(
        metadata=ObjectMeta(name=name), value=value, preemption_policy="PreemptLowerPriority"
    )


# The classes every cluster has (the API server creates them at start); neither is the global default.
BUILTIN_PRIORITY_CLASSES: Mapping[str, PriorityClass] = MappingProxyType(
    {
        "system-cluster-critical": _builtin_class("system-cluster-critical", 2_000_000_000),
        "system-node-critical": _builtin_class("system-node-critical", 2_000_001_000),
    }
)


@dataclass(frozen=True, kw_only=True)
class AdmissionOptions:
    """kube-apiserver flags the plugins read."""

    # --default-not-ready-toleration-seconds, --default-unreachable-toleration-seconds
    default_not_ready_toleration_seconds: int = 300
    default_unreachable_toleration_seconds: int = 300
    # HardAntiAffinity (off in kube-apiserver's default): the pod affinity design's rule (no
    # required anti-affinity against all namespaces beyond a node) and kube's old
    # LimitPodHardAntiAffinityTopology plugin (no required anti-affinity beyond a node at all)
    hard_anti_affinity_limit: bool = False
    limit_pod_hard_anti_affinity_topology: bool = False
    # the server's version and --feature-gates: what its registry and plugins do
    features: FeatureGates = field(default_factory=FeatureGates)


@dataclass(frozen=True, kw_only=True)
class AdmissionContext:
    """One request as the plugins see it, apart from the object itself.

    ``priority_classes`` holds every class that exists (build it with :meth:`create`, which adds
    the built-in ones); ``namespaces`` the namespaces that exist, or ``None`` to take every
    namespace as existing (NamespaceLifecycle then has nothing to check).
    """

    operation: Operation = Operation.CREATE
    #: "" for the object itself; "eviction", "status", ... for a subresource request
    subresource: str = ""
    #: the stored object an UPDATE or DELETE acts on
    old: KubeObject | None = None
    priority_classes: Mapping[str, PriorityClass] = field(default_factory=lambda: BUILTIN_PRIORITY_CLASSES)
    namespaces: frozenset[str] | None = None
    options: AdmissionOptions = field(default_factory=AdmissionOptions)

    @classmethod
    def create(
        cls,
        *,
        operation: Operation = Operation.CREATE,
        subresource: str = "",
        old: KubeObject | None = None,
        priority_classes: Mapping[str, PriorityClass] | Iterable[PriorityClass] | None = None,
        namespaces: Iterable[str] | None = None,
        options: AdmissionOptions | None = None,
    ) -> AdmissionContext:
        """A context with the built-in PriorityClasses plus ``priority_classes`` (a mapping by
        name or the classes themselves)."""
        classes = dict(BUILTIN_PRIORITY_CLASSES)
        if priority_classes is not None:
            given = priority_classes.values() if isinstance(priority_classes, Mapping) else priority_classes
            classes.update((pc.metadata.name, pc) for pc in given)
        return cls(
            operation=operation,
            subresource=subresource,
            old=old,
            priority_classes=MappingProxyType(classes),
            namespaces=None if namespaces is None else frozenset(namespaces),
            options=options or AdmissionOptions(),
        )

    def global_default_priority_class(self) -> PriorityClass | None:
        """The class marked globalDefault; with several (a race), the lowest value wins."""
        best: PriorityClass | None = None
        for pc in self.priority_classes.values():
            if pc.global_default and (best is None or pc.value < best.value):
                best = pc
        return best

    def namespace_exists(self, name: str) -> bool:
        return self.namespaces is None or name in self.namespaces


# --- plugins -----------------------------------------------------------------------------------------------


def handles(plugin: object, ctx: AdmissionContext) -> bool:
    """admission.Interface.Handles: whether a plugin acts on this request. A plugin lists the
    ``operations`` and ``subresources`` it handles; by default creates of the object itself,
    which is all the API server's built-in plugins here look at."""
    operations = getattr(plugin, "operations", (Operation.CREATE,))
    subresources = getattr(plugin, "subresources", ("",))
    return ctx.operation in operations and ctx.subresource in subresources


@runtime_checkable
class MutatingPlugin(Protocol):
    """admission.MutationInterface: may change the object; runs before the registry validates."""

    name: str

    def mutate(self, obj: KubeObject, ctx: AdmissionContext) -> Rejection | None: ...


@runtime_checkable
class ValidatingPlugin(Protocol):
    """admission.ValidationInterface: reads the object after the registry validated it.
    Field errors become a 422 Invalid; a Rejection is answered as it is."""

    name: str

    def validate(self, obj: KubeObject, ctx: AdmissionContext) -> Rejection | list[FieldError] | None: ...


AdmissionPlugin = MutatingPlugin | ValidatingPlugin
