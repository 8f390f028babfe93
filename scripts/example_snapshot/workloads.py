"""Deployments, ReplicaSets, Services and Namespaces as kubectl prints them: the controllers'
statuses and conditions, and who wrote which field."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from kubespread.api.apps import Deployment, ReplicaSet
from kubespread.api.core import Namespace, Service

from .catalog import with_defaults
from .common import DUMP_TIME, LAST_APPLIED, later, parse_ts
from .fields import fieldset, managed, without

if TYPE_CHECKING:
    from .history import Write
    from .state import Dump

REVISION = "deployment.kubernetes.io/revision"


def deployment_dict(dump: Dump, dep: Deployment) -> dict[str, Any]:
    d = dep.to_dict()
    meta = dump.common_meta(d, keep_generation=True)
    created = meta["creationTimestamp"]
    rss = dump.h.replica_sets_of(dep)
    new_rs = next(
        (rs for rs in rss if rs.metadata.annotations.get(REVISION) == dep.metadata.annotations.get(REVISION)),
        rss[-1],
    )
    writes = dump.h.writes[dep.key]
    status = {k: v for k, v in dict(dep.status).items() if v}  # omitempty
    status_time = dump.last_pod_time({rs.metadata.uid for rs in rss}, writes[-1][0])
    status["conditions"] = deployment_conditions(
        dep, status, created, writes[-1][0], status_time, new_rs.metadata.name
    )
    d["status"] = status
    has_last_applied = LAST_APPLIED in meta.get("annotations", {})
    revision_time = next(
        (w[0] for w in reversed(writes) if w[1] not in ("kubectl", "kubectl-rollout")), created
    )
    rev_fields: dict[str, Any] = {f"f:{REVISION}": {}}
    if not has_last_applied:
        rev_fields = {".": {}, **rev_fields}
    status_written = max(status_time, status["conditions"][-1]["lastUpdateTime"])
    meta["managedFields"] = [
        *user_entries(writes, has_last_applied),
        by_controller(revision_time, {"f:metadata": {"f:annotations": rev_fields}}),
        by_controller(status_written, {"f:status": fieldset(status)}, "status"),
    ]
    return d


def by_controller(time: str, fields: dict[str, Any], subresource: str = "") -> dict[str, Any]:
    """A managedFields entry of the kube-controller-manager's (the apps/v1 controllers)."""
    return managed("kube-controller-manager", "Update", time, fields, "apps/v1", subresource)


def deployment_conditions(
    dep: Deployment, status: dict[str, Any], created: str, last_write: str, status_time: str, rs_name: str
) -> list[dict[str, Any]]:
    """Available and Progressing, as the deployment controller last set them."""
    replicas = dep.spec.replicas or 0
    available = int(status.get("availableReplicas", 0))
    if available >= replicas - max(0, replicas // 4):
        since = later(created, 9)
        avail = ("True", "MinimumReplicasAvailable", "Deployment has minimum availability.", since, since)
    else:
        message = "Deployment does not have minimum availability."
        avail = ("False", "MinimumReplicasUnavailable", message, status_time, status_time)
    if dep.spec.paused:
        progressing = ("Unknown", "DeploymentPaused", "Deployment is paused", last_write, last_write)
    elif status.get("updatedReplicas") == replicas == available and status.get("replicas") == replicas:
        done = min(later(last_write, 25 + 5 * replicas), status_time)
        message = f'ReplicaSet "{rs_name}" has successfully progressed.'
        progressing = (
            "True",
            "NewReplicaSetAvailable",
            message,
            later(created, 2),
            max(done, later(created, 9)),
        )
    elif (DUMP_TIME - parse_ts(last_write)).total_seconds() > 600:
        deadline = later(last_write, 601)
        message = f'ReplicaSet "{rs_name}" has timed out progressing.'
        progressing = ("False", "ProgressDeadlineExceeded", message, deadline, deadline)
    else:
        message = f'ReplicaSet "{rs_name}" is progressing.'
        progressing = ("True", "ReplicaSetUpdated", message, later(created, 2), last_write)
    return [condition("Available", *avail), condition("Progressing", *progressing)]


def condition(type_: str, status: str, reason: str, message: str, since: str, updated: str) -> dict[str, Any]:
    return {
        "lastTransitionTime": since,
        "lastUpdateTime": updated,
        "message": message,
        "reason": reason,
        "status": status,
        "type": type_,
    }


def user_entries(writes: list[Write], has_last_applied: bool) -> list[dict[str, Any]]:
    """One managedFields entry per (manager, operation, subresource) of the users' writes, with
    the latest write's time; a scale takes spec.replicas from the others."""
    entries: dict[tuple[str, str, str], tuple[str, dict[str, Any]]] = {}
    for time, manager, operation, subresource, fields in writes:
        if "f:spec" in fields:  # kubectl scale, kubectl rollout pause: the fields themselves
            fv = fields
        elif operation == "Apply":  # server-side apply owns what the applied manifest names
            fv = {
                "f:metadata": fieldset({"labels": fields["metadata"]["labels"]}),
                "f:spec": fieldset(fields["spec"]),
            }
        else:  # a create or update owns every field it stored, the defaulted ones too
            meta_fields: dict[str, Any] = {"labels": fields["metadata"]["labels"]}
            if has_last_applied:
                meta_fields["annotations"] = {LAST_APPLIED: ""}
            fv = {"f:metadata": fieldset(meta_fields), "f:spec": fieldset(with_defaults(fields)["spec"])}
        entries[(manager, operation, subresource)] = (time, fv)
    if any(k[2] == "scale" for k in entries):
        for k, (time, fv) in list(entries.items()):
            if k[2] != "scale":
                entries[k] = (time, without(fv, ("f:spec", "f:replicas")))
    return [
        managed(
            manager,
            operation,
            time,
            fv,
            "apps/v1" if subresource != "scale" else "autoscaling/v1",
            subresource,
        )
        for (manager, operation, subresource), (time, fv) in entries.items()
    ]


def replica_set_dict(dump: Dump, rs: ReplicaSet) -> dict[str, Any]:
    d = rs.to_dict()
    meta = dump.common_meta(d, keep_generation=True)
    raw = dict(rs.status) if isinstance(rs.status, dict) else {}
    status = {"replicas": raw.get("replicas", 0)}
    status.update({k: v for k, v in raw.items() if v and k != "replicas"})
    d["status"] = status
    status_time = dump.last_pod_time({rs.metadata.uid}, meta["creationTimestamp"])
    meta_fields = {k: meta[k] for k in ("annotations", "labels", "ownerReferences") if k in meta}
    spec_fields = {"f:metadata": fieldset(meta_fields), "f:spec": fieldset(d["spec"])}
    meta["managedFields"] = [
        by_controller(status_time, spec_fields),
        by_controller(status_time, {"f:status": fieldset(status)}, "status"),
    ]
    return d


def service_dict(dump: Dump, svc: Service) -> dict[str, Any]:
    """A Service, written by the tool that applied its workload (kubectl's with its
    last-applied-configuration), or by the API server itself."""
    d = svc.to_dict()
    meta = dump.common_meta(d, keep_generation=False)
    app = dump.h.service_apps.get(svc.key)
    written = {
        k: v
        for k, v in d["spec"].items()
        if k not in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy")
    }
    manager, operation = ("kube-apiserver", "Update") if app is None else app.writer[:2]
    if app is not None and app.manager == "kubectl":
        user = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "labels": meta.get("labels", {}),
                "name": meta["name"],
                "namespace": meta["namespace"],
            },
            "spec": {"ports": d["spec"]["ports"], "selector": d["spec"].get("selector", {})},
        }
        meta["annotations"] = {LAST_APPLIED: json.dumps(user, sort_keys=True, separators=(",", ":")) + "\n"}
    meta_fields = {k: meta[k] for k in ("annotations", "labels") if k in meta}
    if "annotations" in meta_fields:
        meta_fields["annotations"] = {k: "" for k in meta_fields["annotations"]}
    fields = {"f:metadata": fieldset(meta_fields), "f:spec": fieldset(written)}
    meta["managedFields"] = [managed(manager, operation, meta["creationTimestamp"], fields)]
    return d


def namespace_dict(dump: Dump, ns: Namespace) -> dict[str, Any]:
    d = ns.to_dict()
    meta = dump.common_meta(d, keep_generation=False)
    system = ns.name.startswith("kube-") or ns.name == "default"
    fields = {"f:metadata": fieldset({"labels": meta["labels"]})}
    meta["managedFields"] = [
        managed("kube-apiserver" if system else "kubectl-create", "Update", meta["creationTimestamp"], fields)
    ]
    return d
