"""How kube-scheduler counts resources, as exact integers.

kube-scheduler turns resource lists into a ``framework.Resource``: CPU in millicores, memory
and ephemeral storage in bytes, the node's ``pods`` as a count, and every other *scalar*
resource (extended resources, ``hugepages-*``, ``attachable-volumes-*``,
``*kubernetes.io/*``) as whole units. The conversion rounds up (``MilliValue``/``Value``),
and it is applied to a pod's *total*, after its containers have been summed exactly — three
containers of ``100u`` CPU are one millicore, not three. We keep the totals in nano-units
(as :class:`~kubespread.api.quantity.Quantity` does) until that last step for the same
reason.

A pod's request follows ``resourcehelper.PodRequests`` (KEP-753 sidecars, pod-level
resources, overhead)::

    requests = max( sum(containers) + sum(sidecars),
                    max over init containers i of  InitUse(i) )   per resource
             (pod-level requests for cpu/memory/hugepages-* replace that, when set)
             + overhead
    InitUse(i) = sum(sidecars declared before i) + init container i   (i itself, if a sidecar)

Not modelled: container statuses (in-place resize makes kube-scheduler take the max of spec,
allocated and actuated resources; without statuses that is the spec, which is what we use).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from kubespread.api.quantity import NANO, Quantity

__all__ = [
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "Resources",
    "is_scalar_resource_name",
    "node_allocatable",
    "pod_non_zero_requests",
    "pod_request_list",
    "pod_requests",
    "pod_requests_and_non_zero",
    "sum_resources",
]

CPU, MEMORY, PODS, EPHEMERAL_STORAGE = "cpu", "memory", "pods", "ephemeral-storage"

# schedutil.DefaultMilliCPURequest / DefaultMemoryRequest: what a container that requests
# nothing is taken to use when *scoring* and in NodeInfo.NonZeroRequested, so that such
# pods still spread out instead of all piling onto the emptiest-looking node.
DEFAULT_MILLI_CPU_REQUEST: Final = 100
DEFAULT_MEMORY_REQUEST: Final = 200 * 1024 * 1024

_NON_MISSING_NANOS: Final = {CPU: DEFAULT_MILLI_CPU_REQUEST * 10**6, MEMORY: DEFAULT_MEMORY_REQUEST * NANO}

_HUGEPAGES_PREFIX = "hugepages-"
_POD_LEVEL = (CPU, MEMORY)  # plus hugepages-* (IsSupportedPodLevelResource)

_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_RE = re.compile(rf"{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*")
_QUALIFIED_NAME_RE = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")

_scalar_cache: dict[str, bool] = {}


def _is_qualified_name(value: str) -> bool:
    """validation.IsQualifiedName: ``[prefix/]name``, prefix a DNS subdomain."""
    parts = value.split("/")
    if len(parts) == 1:
        prefix, name = "", parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN_RE.fullmatch(prefix):
            return False
    else:
        return False
    return 0 < len(name) <= 63 and _QUALIFIED_NAME_RE.fullmatch(name) is not None


def is_scalar_resource_name(name: str) -> bool:
    """schedutil.IsScalarResourceName: extended, hugepages, prefixed native or attachable volumes.

    Anything else that is not cpu/memory/pods/ephemeral-storage is ignored by the scheduler.
    """
    got = _scalar_cache.get(name)
    if got is None:
        prefixed_native = "kubernetes.io/" in name
        native = "/" not in name or prefixed_native
        extended = not native and not name.startswith("requests.") and _is_qualified_name("requests." + name)
        got = (
            extended
            or prefixed_native
            or name.startswith(_HUGEPAGES_PREFIX)
            or name.startswith("attachable-volumes-")
        )
        if len(_scalar_cache) < 10_000:
            _scalar_cache[name] = got
    return got


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


class Resources:
    """framework.Resource: exact integer amounts, the unit each resource is compared in.

    ``scalar`` never holds zeros after arithmetic, and equality treats a missing scalar as 0,
    so a node that had a GPU pod and lost it compares equal to one that never had it.
    Values are plain Python ints (no overflow); treat instances held by an index as
    read-only and use :meth:`copy` to get one to change.
    """

    __slots__ = ("allowed_pod_number", "ephemeral_storage", "memory", "milli_cpu", "scalar")

    def __init__(
        self,
        milli_cpu: int = 0,
        memory: int = 0,
        ephemeral_storage: int = 0,
        allowed_pod_number: int = 0,
        scalar: Mapping[str, int] | None = None,
    ) -> None:
        self.milli_cpu = milli_cpu
        self.memory = memory
        self.ephemeral_storage = ephemeral_storage
        self.allowed_pod_number = allowed_pod_number
        self.scalar: dict[str, int] = dict(scalar) if scalar else {}

    # construction ----------------------------------------------------------------------
    @classmethod
    def from_resource_list(cls, rl: Mapping[str, Quantity]) -> Resources:
        """Resource.Add of a ResourceList: each amount rounded up in its own unit."""
        return cls.from_nanos({name: q.nanos for name, q in rl.items()})

    @classmethod
    def from_nanos(cls, amounts: Mapping[str, int]) -> Resources:
        """From exact totals in nano-units (resource name → nanos), rounding up as Resource.Add."""
        r = cls()
        for name, nanos in amounts.items():
            if name == CPU:
                r.milli_cpu += _ceil_div(nanos, 10**6)
            elif name == MEMORY:
                r.memory += _ceil_div(nanos, NANO)
            elif name == PODS:
                r.allowed_pod_number += _ceil_div(nanos, NANO)
            elif name == EPHEMERAL_STORAGE:
                r.ephemeral_storage += _ceil_div(nanos, NANO)
            elif is_scalar_resource_name(name):
                r.scalar[name] = r.scalar.get(name, 0) + _ceil_div(nanos, NANO)
        return r

    # arithmetic ------------------------------------------------------------------------
    def add_in_place(self, other: Resources, sign: int = 1) -> None:
        """self += sign * other; how NodeInfo.update accumulates (sign ±1)."""
        self.milli_cpu += sign * other.milli_cpu
        self.memory += sign * other.memory
        self.ephemeral_storage += sign * other.ephemeral_storage
        self.allowed_pod_number += sign * other.allowed_pod_number
        if other.scalar:
            scalar = self.scalar
            for name, v in other.scalar.items():
                nv = scalar.get(name, 0) + sign * v
                if nv:
                    scalar[name] = nv
                else:
                    scalar.pop(name, None)

    def add(self, other: Resources) -> Resources:
        """A new Resources, self + other."""
        out = self.copy()
        out.add_in_place(other, 1)
        return out

    def sub(self, other: Resources) -> Resources:
        """A new Resources, self - other."""
        out = self.copy()
        out.add_in_place(other, -1)
        return out

    __add__ = add
    __sub__ = sub

    def copy(self) -> Resources:
        return Resources(
            self.milli_cpu, self.memory, self.ephemeral_storage, self.allowed_pod_number, self.scalar
        )

    # reading ---------------------------------------------------------------------------
    def get(self, name: str) -> int:
        """The amount of one resource by its API name, in the unit the scheduler compares."""
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == PODS:
            return self.allowed_pod_number
        if name == EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        return self.scalar.get(name, 0)

    def is_zero(self) -> bool:
        return not (
            self.milli_cpu
            or self.memory
            or self.ephemeral_storage
            or self.allowed_pod_number
            or any(self.scalar.values())
        )

    def _key(self) -> tuple[Any, ...]:
        scalar = tuple(sorted((k, v) for k, v in self.scalar.items() if v))
        return (self.milli_cpu, self.memory, self.ephemeral_storage, self.allowed_pod_number, scalar)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Resources):
            return NotImplemented
        return self._key() == other._key()

    # mutable, so unhashable; typeshed declares object.__hash__ a method, not an Optional
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        parts = [
            f"{k}={getattr(self, k)}"
            for k in ("milli_cpu", "memory", "ephemeral_storage", "allowed_pod_number")
            if getattr(self, k)
        ]
        if self.scalar:
            parts.append(f"scalar={dict(sorted(self.scalar.items()))}")
        return f"Resources({', '.join(parts)})"


# --- pods -------------------------------------------------------------------------------------


def _add_into(acc: dict[str, int], rl: Mapping[str, int]) -> None:
    for name, v in rl.items():
        acc[name] = acc.get(name, 0) + v


def _max_into(acc: dict[str, int], rl: Mapping[str, int]) -> None:
    for name, v in rl.items():
        cur = acc.get(name)
        if cur is None or v > cur:
            acc[name] = v


def _nanos(rl: Mapping[str, Quantity], non_missing: Mapping[str, int] | None) -> dict[str, int]:
    """A container's requests in nanos; non_missing fills resources it does not name at all
    (an explicit 0 stays 0: applyNonMissing)."""
    out = {name: q.nanos for name, q in rl.items()}
    if non_missing:
        for name, v in non_missing.items():
            if name not in out:
                out[name] = v
    return out


def _pod_level_requests(pod: Any) -> dict[str, int] | None:
    """spec.resources.requests (PodLevelResources, on by default in v1.35), for the supported
    resources only; None when no supported resource is requested at the pod level."""
    res = pod.spec.resources
    if res is None or not res.requests:
        return None
    out: dict[str, int] = {}
    for name, q in res.requests.items():
        if name in _POD_LEVEL or name.startswith(_HUGEPAGES_PREFIX):
            out[name] = q.nanos
    return out or None


def _aggregate_containers(pod: Any, non_missing: Mapping[str, int] | None) -> dict[str, int]:
    """AggregateContainerRequests over the spec (KEP-753 sidecar formula), in nanos."""
    spec = pod.spec
    total: dict[str, int] = {}
    for c in spec.containers:
        _add_into(total, _nanos(c.resources.requests, non_missing))
    if not spec.init_containers:
        return total
    sidecars: dict[str, int] = {}  # running sidecars declared so far
    init_peak: dict[str, int] = {}
    for c in spec.init_containers:
        reqs = _nanos(c.resources.requests, non_missing)
        if c.is_sidecar:
            # a sidecar keeps running: it counts in the steady state and under every later init
            _add_into(total, reqs)
            _add_into(sidecars, reqs)
            use = sidecars
        else:
            use = dict(reqs)
            _add_into(use, sidecars)
        _max_into(init_peak, use)
    _max_into(total, init_peak)
    return total


def pod_request_list(pod: Any, *, non_missing: Mapping[str, int] | None = None) -> dict[str, int]:
    """resourcehelper.PodRequests as exact nano-unit totals per resource name.

    ``non_missing`` (nanos) is the NonMissingContainerRequests option: amounts given to each
    container, init container and sidecar that does not name the resource.
    """
    reqs = _aggregate_containers(pod, non_missing)
    pod_level = _pod_level_requests(pod)
    if pod_level:
        reqs.update(pod_level)
    if pod.spec.overhead:
        _add_into(reqs, {name: q.nanos for name, q in pod.spec.overhead.items()})
    return reqs


def pod_requests(pod: Any, *, container_defaults: bool = False) -> Resources:
    """What the pod asks a node for (NodeInfo.Requested, the Fit filter).

    With ``container_defaults`` every container (init and sidecar included) that names no
    cpu or memory request is taken to ask for 100m / 200Mi: the NodeResources scorers'
    calculatePodResourceRequest for an incoming pod.
    """
    non_missing = _NON_MISSING_NANOS if container_defaults else None
    return Resources.from_nanos(pod_request_list(pod, non_missing=non_missing))


def pod_non_zero_requests(pod: Any) -> Resources:
    """NodeInfo.NonZeroRequested's share of a pod (calculateResource): the requests with the
    100m CPU / 200Mi memory default given per container — init containers and sidecars too,
    before the max/sum — to each that does not name the resource.

    When pod-level requests are set, a default applies only to a resource the whole pod
    (pod level, containers and overhead) does not request at all, and then per container.
    Only ``milli_cpu`` and ``memory`` go into NonZeroRequested; the rest equals the requests.
    """
    requests = pod_request_list(pod)
    if _pod_level_requests(pod) is None:
        non_missing: Mapping[str, int] = _NON_MISSING_NANOS
    else:
        non_missing = {k: v for k, v in _NON_MISSING_NANOS.items() if k not in requests}
        if not non_missing:
            return Resources.from_nanos(requests)
    return Resources.from_nanos(pod_request_list(pod, non_missing=non_missing))


def pod_requests_and_non_zero(pod: Any) -> tuple[Resources, Resources]:
    """``(pod_requests(pod), pod_non_zero_requests(pod))``, in one pass over the containers
    for the common pod (no init containers, pod-level requests or overhead): what an index
    computes for every pod it adds."""
    spec = pod.spec
    if spec.init_containers or spec.overhead or _pod_level_requests(pod) is not None:
        return pod_requests(pod), pod_non_zero_requests(pod)
    total: dict[str, int] = {}
    nz_cpu = nz_mem = 0
    for c in spec.containers:
        rl = c.resources.requests
        for name, q in rl.items():
            total[name] = total.get(name, 0) + q.nanos
        q = rl.get(CPU)
        nz_cpu += _NON_MISSING_NANOS[CPU] if q is None else q.nanos
        q = rl.get(MEMORY)
        nz_mem += _NON_MISSING_NANOS[MEMORY] if q is None else q.nanos
    requests = Resources.from_nanos(total)
    non_zero = requests.copy()
    non_zero.milli_cpu = _ceil_div(nz_cpu, 10**6)
    non_zero.memory = _ceil_div(nz_mem, NANO)
    return requests, non_zero


# --- nodes ------------------------------------------------------------------------------------


def node_allocatable(node: Any) -> Resources:
    """NodeInfo.Allocatable: status.allocatable (``pods`` gives the pod count).

    ``Node.allocatable`` falls back to capacity when allocatable is absent, which is what the
    API server's defaulting (SetDefaults_NodeStatus) stores for such a node.
    """
    return Resources.from_resource_list(node.allocatable)


def sum_resources(items: Iterable[Resources]) -> Resources:
    """The sum of many Resources (for recomputing a node's totals from scratch)."""
    out = Resources()
    for r in items:
        out.add_in_place(r)
    return out
