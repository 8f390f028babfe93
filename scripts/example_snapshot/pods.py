"""Pods as kubectl prints them: what admission added, the kubelet's (or the scheduler's)
status, and who wrote which field."""

from __future__ import annotations

import copy
import random
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from kubespread.api.core import Pod

from .common import DUMP_TIME, SEED, later, parse_ts, rand_hex, ts
from .fields import fieldset, managed
from .nodes import image_ref

if TYPE_CHECKING:
    from .state import Dump

SA_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
#: what kube-scheduler writes of a pending pod's status
SCHEDULER_FIELDS = {
    "f:status": {
        "f:conditions": {
            ".": {},
            'k:{"type":"PodScheduled"}': {
                ".": {},
                "f:lastProbeTime": {},
                "f:lastTransitionTime": {},
                "f:message": {},
                "f:reason": {},
                "f:status": {},
                "f:type": {},
            },
        }
    }
}


def qos_class(spec: dict[str, Any]) -> str:
    requests = limits = False
    guaranteed = True
    for c in spec.get("containers", []):
        res = c.get("resources", {})
        req, lim = res.get("requests", {}), res.get("limits", {})
        requests = requests or bool(req)
        limits = limits or bool(lim)
        for r in ("cpu", "memory"):
            if r not in lim or req.get(r, lim[r]) != lim[r]:
                guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def cond(type_: str, status: str, time: str, **extra: str) -> dict[str, Any]:
    return {"lastProbeTime": None, "lastTransitionTime": time, **extra, "status": status, "type": type_}


def pod_dict(dump: Dump, pod: Pod, message: str = "", *, late: bool = False) -> dict[str, Any]:
    """The pod with what admission added, its status (``message``: a pending pod's last
    FailedScheduling) and managedFields. ``late`` pods have their resourceVersion already."""
    d = pod.to_dict()
    meta = d["metadata"]
    if not late:
        dump.common_meta(d, keep_generation=True)
    spec, created = d["spec"], meta["creationTimestamp"]
    rng = random.Random(f"{SEED}-pod-{pod.key}")
    written = creator_spec(spec)
    volume = "kube-api-access-" + "".join(rng.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5))
    admitted(spec, volume)
    qos = qos_class(spec)
    creator_meta = {
        k: meta[k] for k in ("generateName", "labels", "annotations", "ownerReferences") if k in meta
    }
    creator = {"f:metadata": fieldset(creator_meta), "f:spec": fieldset(written)}
    entries = [managed("kube-controller-manager", "Update", created, creator)]
    if not spec.get("nodeName"):
        status = {
            "conditions": [cond("PodScheduled", "False", created, message=message, reason="Unschedulable")],
            "phase": "Pending",
            "qosClass": qos,
        }
        entries.append(
            managed(
                "kube-scheduler",
                "Update",
                last_try(dump, created, rng),
                SCHEDULER_FIELDS,
                subresource="status",
            )
        )
    else:
        status = running_status(dump, pod, spec, created, rng, qos)
        kubelet_fields = {k: v for k, v in status.items() if k != "qosClass"}
        ready_time = status["conditions"][2]["lastTransitionTime"]
        entries.append(
            managed(
                "kubelet", "Update", ready_time, {"f:status": fieldset(kubelet_fields)}, subresource="status"
            )
        )
    meta["managedFields"] = entries
    d["status"] = status
    return d


def creator_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """What the pod's creator wrote; admission's additions (priority, default tolerations, the
    token volume) are not attributed to it."""
    written = {
        k: copy.deepcopy(v)
        for k, v in spec.items()
        if k not in ("nodeName", "priority", "preemptionPolicy", "tolerations")
    }
    given = [t for t in spec.get("tolerations", []) if "tolerationSeconds" not in t]
    if given:
        written["tolerations"] = given
    written["enableServiceLinks"] = True
    return written


def admitted(spec: dict[str, Any], volume: str) -> None:
    """What admission adds: the service account and (unless opted out) its token volume."""
    spec["enableServiceLinks"] = True
    spec.setdefault("serviceAccountName", "default")
    spec["serviceAccount"] = spec["serviceAccountName"]
    if spec.get("automountServiceAccountToken") is not False:
        token_volume(spec, volume)


def token_volume(spec: dict[str, Any], volume: str) -> None:
    """The ServiceAccount admission plugin's projected token volume, mounted in every container."""
    namespace_item = {
        "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
        "path": "namespace",
    }
    sources = [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
        {"downwardAPI": {"items": [namespace_item]}},
    ]
    projected = {"defaultMode": 420, "sources": sources}
    spec.setdefault("volumes", []).append({"name": volume, "projected": projected})
    for c in spec["containers"]:
        c.setdefault("volumeMounts", []).append({"mountPath": SA_MOUNT, "name": volume, "readOnly": True})


def last_try(dump: Dump, created: str, rng: random.Random) -> str:
    """A pending pod's last scheduling attempt: before the late node joined (its message counts
    the nodes then)."""
    joined = next(p.created for p in dump.h.plans if p.late)
    return ts(max(parse_ts(created) + timedelta(seconds=8), joined - timedelta(seconds=rng.randint(15, 60))))


def running_status(
    dump: Dump, pod: Pod, spec: dict[str, Any], created: str, rng: random.Random, qos: str
) -> dict[str, Any]:
    """The kubelet's status of a bound pod: started seconds after it was created, some
    restarted after an OOM kill."""
    plan = dump.plans[spec["nodeName"]]
    if spec.get("hostNetwork"):
        ip = plan.ip
    else:
        ip = dump.pod_ips.setdefault(pod.key, dump.h.addresses.take(plan.zone))
    scheduled = later(created, rng.randint(0, 1))
    init = later(scheduled, 1)
    sandbox = later(init, rng.randint(1, 3))
    started = later(sandbox, rng.randint(1, 12))
    restarts, last_state, started = restarted(started, rng)
    ready = later(started, rng.randint(2, 15))
    statuses = [
        {
            "containerID": "containerd://" + rand_hex(64, rng),
            "image": c["image"],
            "imageID": image_ref(c["image"]),
            "lastState": last_state,
            "name": c["name"],
            "ready": True,
            "restartCount": restarts,
            "started": True,
            "state": {"running": {"startedAt": started}},
        }
        for c in spec["containers"]
    ]
    return {
        "conditions": [
            cond("PodReadyToStartContainers", "True", sandbox),
            cond("Initialized", "True", init),
            cond("Ready", "True", ready),
            cond("ContainersReady", "True", ready),
            cond("PodScheduled", "True", scheduled),
        ],
        "containerStatuses": statuses,
        "hostIP": plan.ip,
        "hostIPs": [{"ip": plan.ip}],
        "observedGeneration": 1,
        "phase": "Running",
        "podIP": ip,
        "podIPs": [{"ip": ip}],
        "qosClass": qos,
        "startTime": scheduled,
    }


def restarted(started: str, rng: random.Random) -> tuple[int, dict[str, Any], str]:
    """(restartCount, lastState, when the container last started): one pod in twenty was OOM
    killed a few times."""
    if rng.random() >= 0.05:
        return 0, {}, started
    restarts = rng.randint(1, 3)
    crash = min(parse_ts(started) + timedelta(hours=rng.randint(2, 300)), DUMP_TIME - timedelta(minutes=9))
    crash = max(crash, parse_ts(started) + timedelta(seconds=30))
    terminated = {
        "containerID": "containerd://" + rand_hex(64, rng),
        "exitCode": 137,
        "finishedAt": ts(crash),
        "reason": "OOMKilled",
        "startedAt": started,
    }
    return restarts, {"terminated": terminated}, ts(crash + timedelta(seconds=rng.randint(1, 20)))
