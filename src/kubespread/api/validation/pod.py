"""Pods and pod templates: metadata, containers, affinity, tolerations, topology spread.

The order of the checks is ValidatePodSpec's, so that a list of errors reads as
kube-apiserver's does. Validation sees the object as the API server does *after* defaulting;
where a default decides the outcome the effective value is used, without changing the object:

- a Pod's container with a limit and no request for a resource is validated with the limit as
  its request (SetDefaults_Pod copies it); pod templates are not defaulted this way;
- an empty ``restartPolicy`` is ``Always``; an empty port protocol is ``TCP``.

The matchLabelKeys merge of a new Pod (the registry's PrepareForCreate) is *not* done here: it
changes the object, so :mod:`kubespread.admission.match_label_keys` does it before validating.
"""

from __future__ import annotations

import re
from typing import Any

from kubespread.api.core import (
    Affinity,
    Container,
    ContainerPort,
    NodeAffinity,
    Pod,
    PodAffinityTerm,
    PodSpec,
    PodTemplateSpec,
    PreferredSchedulingTerm,
    ResourceRequirements,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from kubespread.api.errors import FieldError, Path
from kubespread.api.keys import ANNOTATION_POD_DELETION_COST
from kubespread.api.model import Model
from kubespread.api.selectors import LabelSelector
from kubespread.api.taints import TAINT_EFFECTS, Toleration
from kubespread.api.validation.meta import validate_annotations, validate_object_meta
from kubespread.api.validation.names import (
    is_valid_label_value,
    name_is_dns1123_label,
    name_is_dns1123_subdomain,
    validate_dns1123_label,
    validate_label_name,
    validate_labels,
    validate_qualified_name,
)
from kubespread.api.validation.resources import effective_requests, validate_container_resources
from kubespread.api.validation.selectors import (
    validate_label_selector,
    validate_node_selector,
    validate_node_selector_term,
)
from kubespread.api.validation.volumes import validate_volume_mounts, validate_volumes

__all__ = [
    "StoredPodChecks",
    "validate_affinity",
    "validate_pod",
    "validate_pod_spec",
    "validate_pod_template",
    "validate_tolerations",
    "validate_topology_spread_constraints",
]

NOT_POSITIVE = "must be greater than zero"
WEIGHT_RANGE = "must be in the range 1-100"
RESTART_POLICIES = ("Always", "OnFailure", "Never")
DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")
PORT_PROTOCOLS = ("SCTP", "TCP", "UDP")
WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")
NODE_INCLUSION_POLICIES = ("Honor", "Ignore")
TOLERATION_OPERATORS = ("Equal", "Exists")
# Lt/Gt need the TaintTolerationComparisonOperators gate (off in v1.36): they are refused with
# the longer list, as kube-apiserver does.
TOLERATION_COMPARISON_OPERATORS = ("Equal", "Exists", "Lt", "Gt")
EMPTY_KEY_NEEDS_EXISTS = (
    'operator must be Exists when `key` is empty, which means "match all values and all keys"'
)
INIT_ONLY_WITH_RESTART = "may not be set for init containers without restartPolicy=Always"
MAX_INT32 = 2**31 - 1
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"


def _extra(m: Model, key: str) -> Any:
    """A manifest field kubespread does not model (None when absent)."""
    return (m.extra or {}).get(key)


# --- containers -------------------------------------------------------------------------------------


def _port_name_errors(name: str) -> list[str]:
    """IsValidPortName (an IANA_SVC_NAME)."""
    errs = []
    if len(name) > 15:
        errs.append("must be no more than 15 characters")
    if not name or any(not (c.isascii() and (c.islower() or c.isdigit() or c == "-")) for c in name):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not any("a" <= c <= "z" for c in name):
        errs.append("must contain at least one letter (a-z)")
    if "--" in name:
        errs.append("must not contain consecutive hyphens")
    if name.startswith("-") or name.endswith("-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def _validate_ports(ports: list[ContainerPort], path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    names: set[str] = set()
    port_range = "must be between 1 and 65535, inclusive"
    for i, port in enumerate(ports):
        p = path.index(i)
        if port.name:
            msgs = _port_name_errors(port.name)
            if msgs:
                errs.extend(FieldError.invalid(p.child("name"), port.name, m) for m in msgs)
            elif port.name in names:
                errs.append(FieldError.duplicate(p.child("name"), port.name))
            else:
                names.add(port.name)
        if port.container_port == 0:
            errs.append(FieldError.required(p.child("containerPort")))
        elif not 1 <= port.container_port <= 65535:
            errs.append(FieldError.invalid(p.child("containerPort"), port.container_port, port_range))
        if port.host_port != 0 and not 1 <= port.host_port <= 65535:
            errs.append(FieldError.invalid(p.child("hostPort"), port.host_port, port_range))
        if port.protocol and port.protocol not in PORT_PROTOCOLS:
            errs.append(FieldError.not_supported(p.child("protocol"), port.protocol, PORT_PROTOCOLS))
    return errs


def _host_port_conflicts(containers: list[Container], path: Path, seen: set[str]) -> list[FieldError]:
    """Two ports may not claim the same protocol/hostIP/hostPort."""
    errs: list[FieldError] = []
    for ci, c in enumerate(containers):
        for pi, port in enumerate(c.ports):
            if port.host_port == 0:
                continue
            key = f"{port.protocol or 'TCP'}/{port.host_ip}/{port.host_port}"
            if key in seen:
                errs.append(
                    FieldError.duplicate(path.index(ci).child("ports").index(pi).child("hostPort"), key)
                )
            else:
                seen.add(key)
    return errs


def _validate_container_common(
    c: Container, volumes: set[str], path: Path, *, is_pod: bool
) -> list[FieldError]:
    """Name, image, ports, volume mounts (against the pod's ``volumes``), resources: what every
    kind of container must get right."""
    errs: list[FieldError] = []
    if not c.name:
        errs.append(FieldError.required(path.child("name")))
    else:
        errs.extend(validate_dns1123_label(c.name, path.child("name")))
    if not c.image:
        errs.append(FieldError.required(path.child("image")))
    errs.extend(_validate_ports(c.ports, path.child("ports")))
    errs.extend(validate_volume_mounts(_extra(c, "volumeMounts"), volumes, path.child("volumeMounts")))
    requests = effective_requests(c.resources) if is_pod else None
    errs.extend(validate_container_resources(c.resources, path.child("resources"), requests=requests))
    return errs


def _validate_containers(
    containers: list[Container], volumes: set[str], path: Path, *, is_pod: bool
) -> list[FieldError]:
    if not containers:
        return [FieldError.required(path)]
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, c in enumerate(containers):
        p = path.index(i)
        errs.extend(_validate_container_common(c, volumes, p, is_pod=is_pod))
        if c.name in names:
            errs.append(FieldError.duplicate(p.child("name"), c.name))
        else:
            names.add(c.name)
        if c.restart_policy is not None:
            errs.append(
                FieldError.forbidden(p.child("restartPolicy"), "may not be set for non-init containers")
            )
    errs.extend(_host_port_conflicts(containers, path, set()))
    return errs


def _validate_init_containers(
    init: list[Container], regular: list[Container], volumes: set[str], path: Path, *, is_pod: bool
) -> list[FieldError]:
    """Init containers: names unique among all containers; restartPolicy only Always (a sidecar);
    lifecycle and probes only for sidecars."""
    errs: list[FieldError] = []
    names = {c.name for c in regular}
    for i, c in enumerate(init):
        p = path.index(i)
        errs.extend(_validate_container_common(c, volumes, p, is_pod=is_pod))
        if c.restart_policy is not None and c.restart_policy != "Always":
            errs.append(FieldError.not_supported(p.child("restartPolicy"), c.restart_policy, ("Always",)))
        if c.name in names:
            errs.append(FieldError.duplicate(p.child("name"), c.name))
        elif c.name:
            names.add(c.name)
        errs.extend(_host_port_conflicts([c], path, set()))
        if not c.is_sidecar:
            for key in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe"):
                if _extra(c, key) is not None:
                    errs.append(FieldError.forbidden(p.child(key), INIT_ONLY_WITH_RESTART))
    return errs


# --- affinity ----------------------------------------------------------------------------------------


def _validate_node_affinity(na: NodeAffinity, path: Path) -> list[FieldError]:
    """Both required forms (IgnoredDuringExecution, then the design's RequiredDuringExecution)
    are node selectors held to the same rules, each at its own path."""
    errs: list[FieldError] = []
    for name, required in (
        (
            "requiredDuringSchedulingIgnoredDuringExecution",
            na.required_during_scheduling_ignored_during_execution,
        ),
        (
            "requiredDuringSchedulingRequiredDuringExecution",
            na.required_during_scheduling_required_during_execution,
        ),
    ):
        if required is not None:
            errs.extend(validate_node_selector(required, path.child(name)))
    errs.extend(
        validate_preferred_scheduling_terms(
            na.preferred_during_scheduling_ignored_during_execution,
            path.child("preferredDuringSchedulingIgnoredDuringExecution"),
        )
    )
    return errs


def validate_preferred_scheduling_terms(terms: list[PreferredSchedulingTerm], path: Path) -> list[FieldError]:
    """ValidatePreferredSchedulingTerms: a weight of 1-100 each; the values of a preference are
    not checked (such a term may still match some node)."""
    errs: list[FieldError] = []
    for i, term in enumerate(terms):
        if not 0 < term.weight <= 100:
            errs.append(FieldError.invalid(path.index(i).child("weight"), term.weight, WEIGHT_RANGE))
        errs.extend(
            validate_node_selector_term(
                term.preference, path.index(i).child("preference"), allow_invalid_values=True
            )
        )
    return errs


def _validate_label_keys(keys: list[str], sel: LabelSelector | None, path: Path) -> list[FieldError]:
    if not keys:
        return []
    if sel is None:
        return [FieldError.forbidden(path, "must not be specified when labelSelector is not set")]
    errs: list[FieldError] = []
    for i, k in enumerate(keys):
        errs.extend(validate_label_name(k, path.index(i)))
    return errs


def validate_match_label_keys_legacy(
    path: Path, keys: list[str], sel: LabelSelector | None
) -> list[FieldError]:
    """ValidateMatchLabelKeysInTopologySpread, what a spread constraint's matchLabelKeys are
    judged by where kube-apiserver does not merge them (MatchLabelKeysInPodTopologySpreadSelectorMerge
    off, before v1.34): a key also in the labelSelector (matchLabels or any expression) is
    refused at ``matchLabelKeys[i]``."""
    errs = _validate_label_keys(keys, sel, path.child("matchLabelKeys"))
    if sel is None:
        return errs
    in_selector = set(sel.match_labels) | {req.key for req in sel.match_expressions}
    for i, k in enumerate(keys):
        if k in in_selector:
            errs.append(
                FieldError.invalid(
                    path.child("matchLabelKeys").index(i),
                    k,
                    "exists in both matchLabelKeys and labelSelector",
                )
            )
    return errs


def validate_match_label_keys(
    path: Path, match_keys: list[str], mismatch_keys: list[str], sel: LabelSelector | None
) -> list[FieldError]:
    """matchLabelKeys / mismatchLabelKeys of a pod affinity term or a spread constraint.

    The "in both matchLabelKeys and labelSelector" check reads the selector *after* the
    matchLabelKeys merge: a matchExpression whose key is a matchLabelKey and was already seen
    (in matchLabels or an earlier expression) is reported at the term's path indexed by the
    key's position in matchLabelKeys, e.g. ``spec.topologySpreadConstraints[0][1]``.
    """
    errs = _validate_label_keys(match_keys, sel, path.child("matchLabelKeys"))
    errs.extend(_validate_label_keys(mismatch_keys, sel, path.child("mismatchLabelKeys")))
    if sel is not None:
        position = {k: i for i, k in enumerate(match_keys)}
        seen = set(sel.match_labels)
        for req in sel.match_expressions:
            i = position.get(req.key)
            if i is not None and req.key in seen:
                errs.append(
                    FieldError.invalid(
                        path.index(i), req.key, "exists in both matchLabelKeys and labelSelector"
                    )
                )
            seen.add(req.key)
    mismatch = set(mismatch_keys)
    for i, k in enumerate(match_keys):
        if k in mismatch:
            errs.append(
                FieldError.invalid(
                    path.child("matchLabelKeys").index(i),
                    k,
                    "exists in both matchLabelKeys and mismatchLabelKeys",
                )
            )
    return errs


def _validate_pod_affinity_term(term: PodAffinityTerm, path: Path) -> list[FieldError]:
    errs = validate_label_selector(term.label_selector, path.child("labelSelector"))
    errs.extend(validate_label_selector(term.namespace_selector, path.child("namespaceSelector")))
    for ns in term.namespaces:
        # reported at ".namespace", singular, as kube-apiserver does
        errs.extend(FieldError.invalid(path.child("namespace"), ns, m) for m in name_is_dns1123_label(ns))
    errs.extend(
        validate_match_label_keys(path, term.match_label_keys, term.mismatch_label_keys, term.label_selector)
    )
    if not term.topology_key:
        errs.append(FieldError.required(path.child("topologyKey"), "can not be empty"))
    # an empty key also fails as a label key: three errors in all
    errs.extend(validate_label_name(term.topology_key, path.child("topologyKey")))
    return errs


def _validate_pod_affinity_terms(
    required: list[PodAffinityTerm],
    required_during_execution: list[PodAffinityTerm],
    preferred: list[WeightedPodAffinityTerm],
    path: Path,
) -> list[FieldError]:
    """The required terms of both forms (IgnoredDuringExecution, then RequiredDuringExecution)
    follow the same rules, each at its own path; then the preferred ones."""
    errs: list[FieldError] = []
    for name, terms in (
        ("requiredDuringSchedulingIgnoredDuringExecution", required),
        ("requiredDuringSchedulingRequiredDuringExecution", required_during_execution),
    ):
        req_path = path.child(name)
        for i, term in enumerate(terms):
            errs.extend(_validate_pod_affinity_term(term, req_path.index(i)))
    pref_path = path.child("preferredDuringSchedulingIgnoredDuringExecution")
    for i, wterm in enumerate(preferred):
        if not 0 < wterm.weight <= 100:
            errs.append(FieldError.invalid(pref_path.index(i).child("weight"), wterm.weight, WEIGHT_RANGE))
        errs.extend(
            _validate_pod_affinity_term(wterm.pod_affinity_term, pref_path.index(i).child("podAffinityTerm"))
        )
    return errs


def validate_affinity(affinity: Affinity | None, path: Path) -> list[FieldError]:
    if affinity is None:
        return []
    errs: list[FieldError] = []
    if affinity.node_affinity is not None:
        errs.extend(_validate_node_affinity(affinity.node_affinity, path.child("nodeAffinity")))
    for name, pa in (("podAffinity", affinity.pod_affinity), ("podAntiAffinity", affinity.pod_anti_affinity)):
        if pa is not None:
            errs.extend(
                _validate_pod_affinity_terms(
                    pa.required_during_scheduling_ignored_during_execution,
                    pa.required_during_scheduling_required_during_execution,
                    pa.preferred_during_scheduling_ignored_during_execution,
                    path.child(name),
                )
            )
    return errs


# --- tolerations ---------------------------------------------------------------------------------------


def validate_tolerations(tolerations: list[Toleration], path: Path) -> list[FieldError]:
    """Key; an empty key needs Exists; tolerationSeconds needs NoExecute; operator and value;
    effect. Operator and value problems are reported at ``.operator``."""
    errs: list[FieldError] = []
    for i, t in enumerate(tolerations):
        p = path.index(i)
        if t.key:
            errs.extend(validate_label_name(t.key, p.child("key")))
        if not t.key and t.operator != "Exists":
            errs.append(
                FieldError.invalid(
                    p.child("operator"),
                    t.operator,
                    EMPTY_KEY_NEEDS_EXISTS,
                )
            )
        if t.toleration_seconds is not None and t.effect != "NoExecute":
            errs.append(
                FieldError.invalid(
                    p.child("effect"), t.effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"
                )
            )
        if t.operator in ("Equal", ""):
            msgs = is_valid_label_value(t.value)
            if msgs:
                errs.append(FieldError.invalid(p.child("operator"), t.value, ";".join(msgs)))
        elif t.operator == "Exists":
            if t.value:
                errs.append(
                    FieldError.invalid(
                        p.child("operator"), t.value, "value must be empty when `operator` is 'Exists'"
                    )
                )
        elif t.operator in ("Lt", "Gt"):
            errs.append(
                FieldError.not_supported(p.child("operator"), t.operator, TOLERATION_COMPARISON_OPERATORS)
            )
        else:
            errs.append(FieldError.not_supported(p.child("operator"), t.operator, TOLERATION_OPERATORS))
        if t.effect and t.effect not in TAINT_EFFECTS:
            errs.append(FieldError.not_supported(p.child("effect"), t.effect, TAINT_EFFECTS))
    return errs


# --- topology spread -------------------------------------------------------------------------------------


def validate_topology_spread_constraints(
    constraints: list[TopologySpreadConstraint], path: Path, *, legacy_match_label_keys: bool = False
) -> list[FieldError]:
    """maxSkew > 0; topologyKey non-empty (only that: it need not be a valid label key);
    whenUnsatisfiable; no two constraints with the same {topologyKey, whenUnsatisfiable} (reported
    at the first); minDomains > 0 and only with DoNotSchedule; node inclusion policies;
    matchLabelKeys; the labelSelector."""
    errs: list[FieldError] = []
    for i, c in enumerate(constraints):
        p = path.index(i)
        if c.max_skew <= 0:
            errs.append(FieldError.invalid(p.child("maxSkew"), c.max_skew, NOT_POSITIVE))
        if not c.topology_key:
            errs.append(FieldError.required(p.child("topologyKey"), "can not be empty"))
        if c.when_unsatisfiable not in WHEN_UNSATISFIABLE:
            errs.append(
                FieldError.not_supported(
                    p.child("whenUnsatisfiable"), c.when_unsatisfiable, WHEN_UNSATISFIABLE
                )
            )
        for later in constraints[i + 1 :]:
            if (later.topology_key, later.when_unsatisfiable) == (c.topology_key, c.when_unsatisfiable):
                errs.append(
                    FieldError.duplicate(
                        p.child("{topologyKey, whenUnsatisfiable}"),
                        f"{{{c.topology_key}, {c.when_unsatisfiable}}}",
                    )
                )
                break
        if c.min_domains is not None:
            if c.min_domains <= 0:
                errs.append(FieldError.invalid(p.child("minDomains"), c.min_domains, NOT_POSITIVE))
            if c.when_unsatisfiable != "DoNotSchedule":
                errs.append(
                    FieldError.invalid(
                        p.child("minDomains"),
                        c.min_domains,
                        f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, "
                        f"not {c.when_unsatisfiable}",
                    )
                )
        for name, policy in (
            ("nodeAffinityPolicy", c.node_affinity_policy),
            ("nodeTaintsPolicy", c.node_taints_policy),
        ):
            if policy is not None and policy not in NODE_INCLUSION_POLICIES:
                errs.append(FieldError.not_supported(p.child(name), policy, NODE_INCLUSION_POLICIES))
        if legacy_match_label_keys:
            errs.extend(validate_match_label_keys_legacy(p, c.match_label_keys, c.label_selector))
        else:
            errs.extend(validate_match_label_keys(p, c.match_label_keys, [], c.label_selector))
        errs.extend(validate_label_selector(c.label_selector, p.child("labelSelector")))
    return errs


# --- pod spec --------------------------------------------------------------------------------------------


def _validate_host_network_ports(spec: PodSpec, path: Path) -> list[FieldError]:
    """With hostNetwork a hostPort, when given, must equal the containerPort."""
    if not spec.host_network:
        return []
    errs: list[FieldError] = []
    for i, c in enumerate(spec.containers):
        for j, port in enumerate(c.ports):
            if port.host_port != 0 and port.host_port != port.container_port:
                errs.append(
                    FieldError.invalid(
                        path.child("containers").index(i).child("ports").index(j).child("hostPort"),
                        port.host_port,
                        "must match `containerPort` when `hostNetwork` is true",
                    )
                )
    return errs


def _validate_scheduling_gates(spec: PodSpec, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, gate in enumerate(spec.scheduling_gates):
        errs.extend(validate_qualified_name(gate.name, path.index(i)))
        if gate.name in seen:
            errs.append(FieldError.duplicate(path.index(i), gate.name))
        seen.add(gate.name)
    return errs


def _validate_optional_names(spec: PodSpec, path: Path) -> list[FieldError]:
    """serviceAccountName, nodeName, activeDeadlineSeconds, hostname, subdomain (in that order)."""
    errs: list[FieldError] = []
    sa = _extra(spec, "serviceAccountName")
    if isinstance(sa, str) and sa:
        errs.extend(
            FieldError.invalid(path.child("serviceAccountName"), sa, m) for m in name_is_dns1123_subdomain(sa)
        )
    if spec.node_name:
        errs.extend(
            FieldError.invalid(path.child("nodeName"), spec.node_name, m)
            for m in name_is_dns1123_subdomain(spec.node_name)
        )
    ads = _extra(spec, "activeDeadlineSeconds")
    if isinstance(ads, int) and not isinstance(ads, bool) and not 1 <= ads <= MAX_INT32:
        errs.append(
            FieldError.invalid(
                path.child("activeDeadlineSeconds"), ads, f"must be between 1 and {MAX_INT32}, inclusive"
            )
        )
    for key in ("hostname", "subdomain"):
        v = _extra(spec, key)
        if isinstance(v, str) and v:
            errs.extend(validate_dns1123_label(v, path.child(key)))
    return errs


def validate_pod_spec(
    spec: PodSpec, path: Path, *, is_pod: bool, legacy_match_label_keys: bool = False
) -> list[FieldError]:
    """ValidatePodSpec; ``is_pod`` is False for the template of a workload;
    ``legacy_match_label_keys``: spread constraints' matchLabelKeys judged unmerged (before v1.34)."""
    volumes, errs = validate_volumes(_extra(spec, "volumes"), path.child("volumes"))
    errs.extend(_validate_containers(spec.containers, volumes, path.child("containers"), is_pod=is_pod))
    errs.extend(
        _validate_init_containers(
            spec.init_containers, spec.containers, volumes, path.child("initContainers"), is_pod=is_pod
        )
    )
    errs.extend(_validate_host_network_ports(spec, path))
    if spec.restart_policy and spec.restart_policy not in RESTART_POLICIES:
        errs.append(
            FieldError.not_supported(path.child("restartPolicy"), spec.restart_policy, RESTART_POLICIES)
        )
    dns_policy = _extra(spec, "dnsPolicy")
    if isinstance(dns_policy, str) and dns_policy and dns_policy not in DNS_POLICIES:
        errs.append(FieldError.not_supported(path.child("dnsPolicy"), dns_policy, DNS_POLICIES))
    errs.extend(validate_labels(spec.node_selector, path.child("nodeSelector")))
    errs.extend(validate_affinity(spec.affinity, path.child("affinity")))
    errs.extend(_validate_scheduling_gates(spec, path.child("schedulingGates")))
    errs.extend(
        validate_topology_spread_constraints(
            spec.topology_spread_constraints,
            path.child("topologySpreadConstraints"),
            legacy_match_label_keys=legacy_match_label_keys,
        )
    )
    errs.extend(_validate_optional_names(spec, path))
    errs.extend(validate_tolerations(spec.tolerations, path.child("tolerations")))
    if spec.priority_class_name:
        errs.extend(
            FieldError.invalid(path.child("priorityClassName"), spec.priority_class_name, m)
            for m in name_is_dns1123_subdomain(spec.priority_class_name)
        )
    runtime_class = _extra(spec, "runtimeClassName")
    if isinstance(runtime_class, str):
        errs.extend(
            FieldError.invalid(path.child("runtimeClassName"), runtime_class, m)
            for m in name_is_dns1123_subdomain(runtime_class)
        )
    if spec.preemption_policy is not None:
        if not spec.preemption_policy:
            errs.append(FieldError.required(path.child("preemptionPolicy")))
        elif spec.preemption_policy not in PREEMPTION_POLICIES:
            errs.append(
                FieldError.not_supported(
                    path.child("preemptionPolicy"), spec.preemption_policy, PREEMPTION_POLICIES
                )
            )
    return errs


def _deletion_cost_ok(value: str) -> bool:
    """A 32-bit decimal integer without a plus sign or leading zeros."""
    if not re.fullmatch(r"-?(0|[1-9][0-9]*)", value):
        return False
    return -(2**31) <= int(value) < 2**31


def _validate_pod_annotations(annotations: dict[str, str], spec: PodSpec, path: Path) -> list[FieldError]:
    """ValidatePodSpecificAnnotations: a mirror pod names its node; the pod deletion cost (which
    ReplicaSets and WorkloadSpread scale-down read) is a 32-bit integer."""
    errs: list[FieldError] = []
    mirror = annotations.get(MIRROR_POD_ANNOTATION)
    if mirror is not None and not spec.node_name:
        errs.append(
            FieldError.invalid(
                path.key(MIRROR_POD_ANNOTATION),
                mirror,
                "must set spec.nodeName if mirror pod annotation is set",
            )
        )
    cost = annotations.get(ANNOTATION_POD_DELETION_COST)
    if cost is not None and not _deletion_cost_ok(cost):
        errs.append(
            FieldError.invalid(path.key(ANNOTATION_POD_DELETION_COST), cost, "must be a 32bit integer")
        )
    return errs


def validate_pod_template(template: PodTemplateSpec, path: Path, *, spec: bool = True) -> list[FieldError]:
    """ValidatePodTemplateSpec: the template's labels are reported at ``<path>.labels`` (not
    ``.metadata.labels``), as kube-apiserver does. ``spec=False`` is a StatefulSet's check
    (ValidatePodTemplateSpecForStatefulSet): metadata only, since its containers may mount the
    volumes of its volumeClaimTemplates, which the pod spec does not list."""
    errs = validate_labels(template.metadata.labels, path.child("labels"))
    errs.extend(validate_annotations(template.metadata.annotations, path.child("annotations")))
    errs.extend(
        _validate_pod_annotations(template.metadata.annotations, template.spec, path.child("annotations"))
    )
    if not spec:
        return errs
    errs.extend(validate_pod_spec(template.spec, path.child("spec"), is_pod=False))
    if _extra(template.spec, "ephemeralContainers"):
        errs.append(
            FieldError.forbidden(
                path.child("spec", "ephemeralContainers"), "ephemeral containers not allowed in pod template"
            )
        )
    return errs


def validate_pod(pod: Pod, *, legacy_match_label_keys: bool = False) -> list[FieldError]:
    """ValidatePodCreate: metadata, spec, then what only a new Pod (not a template) must satisfy."""
    spec_path = Path("spec")
    errs = validate_object_meta(pod.metadata, namespaced=True, name_fn=name_is_dns1123_subdomain)
    errs.extend(
        _validate_pod_annotations(pod.metadata.annotations, pod.spec, Path("metadata").child("annotations"))
    )
    errs.extend(
        validate_pod_spec(pod.spec, spec_path, is_pod=True, legacy_match_label_keys=legacy_match_label_keys)
    )
    for name, containers in (
        ("containers", pod.spec.containers),
        ("initContainers", pod.spec.init_containers),
    ):
        for i, c in enumerate(containers):
            if c.image != c.image.strip():
                errs.append(
                    FieldError.invalid(
                        spec_path.child(name).index(i).child("image"),
                        c.image,
                        "must not have leading or trailing whitespace",
                    )
                )
    if _extra(pod.spec, "ephemeralContainers"):
        errs.append(FieldError.forbidden(spec_path.child("ephemeralContainers"), "cannot be set on create"))
    if pod.spec.node_name and pod.spec.scheduling_gates:
        errs.append(
            FieldError.forbidden(
                spec_path.child("nodeName"), "cannot be set until all schedulingGates have been cleared"
            )
        )
    return errs


def validate_stored_pod(pod: Pod) -> list[FieldError]:
    """What a run reads of a pod an API server stored (a dump's pod: validated whole when it
    was created, and a dump holds many thousands): a hand edit may still have broken it, so
    the name, the scheduling constraints (nodeSelector, affinity, tolerations, topology
    spread), each container's resources and the preemption policy are checked again, as
    :func:`validate_pod` checks them; the rest (container names, images, ports, volumes...)
    no command reads. The object is not changed."""
    return _stored_name_errors(pod) + _stored_spec_errors(pod)


def _stored_name_errors(pod: Pod) -> list[FieldError]:
    if not pod.metadata.name:
        return [FieldError.required("metadata.name", "name or generateName is required")]
    return []


def _stored_spec_errors(pod: Pod) -> list[FieldError]:
    spec, spec_path = pod.spec, Path("spec")
    errs: list[FieldError] = []
    errs.extend(validate_labels(spec.node_selector, spec_path.child("nodeSelector")))
    errs.extend(validate_affinity(spec.affinity, spec_path.child("affinity")))
    errs.extend(validate_tolerations(spec.tolerations, spec_path.child("tolerations")))
    errs.extend(
        validate_topology_spread_constraints(
            spec.topology_spread_constraints, spec_path.child("topologySpreadConstraints")
        )
    )
    for name, containers in (("containers", spec.containers), ("initContainers", spec.init_containers)):
        for i, c in enumerate(containers):
            path = spec_path.child(name).index(i).child("resources")
            errs.extend(
                validate_container_resources(c.resources, path, requests=effective_requests(c.resources))
            )
    if spec.preemption_policy is not None and spec.preemption_policy not in PREEMPTION_POLICIES:
        errs.append(
            FieldError.not_supported(
                spec_path.child("preemptionPolicy"), spec.preemption_policy, PREEMPTION_POLICIES
            )
        )
    return errs


class StoredPodChecks:
    """:func:`validate_stored_pod` over many pods (a dump's, by the thousand), each owner's
    pods judged once while what a run reads of them is the same as the last one judged: the
    replicas of one ReplicaSet share their constraints and resources, and equal fields give
    equal errors (the paths are the pod's own, the values the same). A pod that differs, or
    has no owner, is judged in full."""

    def __init__(self) -> None:
        self._last: dict[str, tuple[tuple[Any, ...], list[FieldError]]] = {}

    def __call__(self, pod: Pod) -> list[FieldError]:
        ref = pod.metadata.controller_ref()
        if ref is None or not ref.uid:
            return validate_stored_pod(pod)
        reads = _stored_reads(pod)
        last = self._last.get(ref.uid)
        if last is not None and last[0] == reads:
            spec_errors = last[1]
        else:
            spec_errors = _stored_spec_errors(pod)
            self._last[ref.uid] = (reads, spec_errors)
        return _stored_name_errors(pod) + list(spec_errors)


def _stored_reads(pod: Pod) -> tuple[Any, ...]:
    """What :func:`_stored_spec_errors` reads of a pod, as a value to compare: the model
    objects by their fields, quantities by amount and by how they are written (they compare
    by amount alone, while messages print them as written)."""
    spec = pod.spec
    return (
        spec.node_selector,
        spec.affinity,
        spec.tolerations,
        spec.topology_spread_constraints,
        spec.preemption_policy,
        [_resources_key(c.resources) for c in spec.containers],
        [_resources_key(c.resources) for c in spec.init_containers],
    )


def _resources_key(r: ResourceRequirements) -> tuple[Any, ...]:
    return (
        [(k, q.nanos, q.text, q.format, q.number) for k, q in r.requests.items()],
        [(k, q.nanos, q.text, q.format, q.number) for k, q in r.limits.items()],
        r.claims,
    )
