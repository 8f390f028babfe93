"""Container resources: resource names, quantities, requests ≤ limits.

Maps are walked in manifest order (Go walks them in random order, so kube-apiserver's own
order among several bad resources of one map is not stable).
"""

from __future__ import annotations

from kubespread.api.core import ResourceRequirements
from kubespread.api.errors import FieldError, Path
from kubespread.api.quantity import Quantity, QuantityError
from kubespread.api.validation.names import is_qualified_name

__all__ = ["effective_requests", "validate_container_resources", "validate_resource_name"]

NEGATIVE_MSG = "must be greater than or equal to 0"

# helper.standardResources: what a ResourceList (quota, limit range, container) may name unqualified
STANDARD_RESOURCES = frozenset(
    {
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "storage",
        "requests.storage",
        "services.nodeports",
        "services.loadbalancers",
    }
)
STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
HUGEPAGES_PREFIX = "hugepages-"
REQUESTS_PREFIX = "requests."


class _Shown:
    """A value an error prints bare, as Go prints a fmt.Stringer (a Quantity)."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __str__(self) -> str:
        return self.text


def _is_hugepages(name: str) -> bool:
    return name.startswith(HUGEPAGES_PREFIX)


def _is_native(name: str) -> bool:
    """Unprefixed, or in the kubernetes.io domain."""
    return "/" not in name or "kubernetes.io/" in name


def _is_extended(name: str) -> bool:
    """A fully-qualified, non-native name (example.com/gpu) that also reads as a quota name."""
    if _is_native(name) or name.startswith(REQUESTS_PREFIX):
        return False
    return not is_qualified_name(REQUESTS_PREFIX + name)


def _overcommit_allowed(name: str) -> bool:
    """Requests may be below limits only for native resources other than hugepages."""
    return _is_native(name) and not _is_hugepages(name)


def validate_resource_name(name: str, path: Path) -> list[FieldError]:
    """validateResourceName: a qualified name; unqualified ones must be standard."""
    errs = [FieldError.invalid(path, name, m) for m in is_qualified_name(name)]
    if errs:
        return errs
    standard = name in STANDARD_RESOURCES or name.startswith((HUGEPAGES_PREFIX, "requests.hugepages-"))
    if "/" not in name and not standard:
        errs.append(FieldError.invalid(path, name, "must be a standard resource type or fully qualified"))
    return errs


def _validate_container_resource_name(name: str, path: Path) -> list[FieldError]:
    errs = validate_resource_name(name, path)
    if "/" not in name:
        if name not in STANDARD_CONTAINER_RESOURCES and not _is_hugepages(name):
            errs.append(FieldError.invalid(path, name, "must be a standard resource for containers"))
    elif not _is_native(name) and not _is_extended(name):
        errs.append(FieldError.invalid(path, name, "doesn't follow extended resource name standard"))
    return errs


def _validate_quantity(name: str, q: Quantity, path: Path) -> list[FieldError]:
    errs = []
    if q.sign() < 0:
        errs.append(FieldError.invalid(path, q.canonical(), NEGATIVE_MSG))
    if _is_extended(name) and q.milli_value() % 1000:
        errs.append(FieldError.invalid(path, _Shown(q.canonical()), "must be an integer"))
    return errs


def _validate_hugepages(name: str, q: Quantity, path: Path) -> list[FieldError]:
    """A hugepages amount must be a whole number of pages of the size the name gives."""
    if not _is_hugepages(name):
        return []
    try:
        page = Quantity.parse(name[len(HUGEPAGES_PREFIX) :])
    except QuantityError:
        page = None
    if page is None or page.value() <= 0 or q.value() % page.value():
        text = q.canonical()
        return [FieldError.invalid(path, text, f"{text} is not positive integer multiple of {name}")]
    return []


def effective_requests(res: ResourceRequirements) -> dict[str, Quantity]:
    """The requests a Pod is stored with: a resource with a limit and no request gets the limit
    as its request (SetDefaults_Pod). Templates are not defaulted this way."""
    out = dict(res.requests)
    for name, q in res.limits.items():
        out.setdefault(name, q)
    return out


def validate_container_resources(
    res: ResourceRequirements, path: Path, *, requests: dict[str, Quantity] | None = None
) -> list[FieldError]:
    """ValidateContainerResourceRequirements. ``requests`` overrides ``res.requests`` (a Pod's
    containers are validated with their defaulted requests, see :func:`effective_requests`)."""
    reqs = res.requests if requests is None else requests
    lim_path, req_path = path.child("limits"), path.child("requests")
    errs: list[FieldError] = []
    for name, q in res.limits.items():
        p = lim_path.key(name)
        errs.extend(_validate_container_resource_name(name, p))
        errs.extend(_validate_quantity(name, q, p))
        errs.extend(_validate_hugepages(name, q, p))
    for name, q in reqs.items():
        p = req_path.key(name)
        errs.extend(_validate_container_resource_name(name, p))
        errs.extend(_validate_quantity(name, q, p))
        limit = res.limits.get(name)
        if limit is not None:
            if q != limit and not _overcommit_allowed(name):
                detail = f"must be equal to {name} limit of {limit.canonical()}"
                errs.append(FieldError.invalid(req_path, q.canonical(), detail))
            elif q > limit:
                detail = f"must be less than or equal to {name} limit of {limit.canonical()}"
                errs.append(FieldError.invalid(req_path, q.canonical(), detail))
        elif not _overcommit_allowed(name):
            errs.append(FieldError.required(lim_path, "Limit must be set for non overcommitable resources"))
        errs.extend(_validate_hugepages(name, q, p))
    names = set(res.limits) | set(reqs)
    if any(_is_hugepages(n) for n in names) and not names & {"cpu", "memory"}:
        errs.append(FieldError.forbidden(path, "HugePages require cpu or memory"))
    return errs
