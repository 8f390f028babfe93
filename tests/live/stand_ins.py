"""What a cluster runs beside kubespread that the test API servers lack (the disposable
kube-apiserver has no kube-controller-manager and no kubelet; the FakeApi has neither): a
ReplicaSet controller (a replacement for each pod that goes), the nodes' kubelets (a bound
pod runs and is Ready; a terminating one ends) and the disruption controller (each
PodDisruptionBudget's status from its pods, disruptedPods dropped once they are gone), all in
one thread, through the API only, so it works on both.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from kubespread.live.kube import ApiError

__all__ = ["StandIns"]


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _matches(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in (selector.get("matchLabels") or {}).items())


class StandIns(threading.Thread):
    """Runs until ``stop``; ``namespace``: the only namespace it looks after. ``kubelet_delay``:
    how long a terminating pod takes to end (its grace period, shortened)."""

    def __init__(
        self,
        api: Any,
        namespace: str,
        stop: threading.Event,
        *,
        every: float = 0.1,
        kubelet_delay: float = 0.2,
    ) -> None:
        super().__init__(name="stand-ins", daemon=True)
        self.api = api
        self.namespace = namespace
        self.stop = stop
        self.every = every
        self.kubelet_delay = kubelet_delay
        self.created = 0
        self._terminating_since: dict[str, float] = {}

    def run(self) -> None:
        while not self.stop.is_set():
            with contextlib.suppress(ApiError):  # the API server away (a restart): next turn
                self.turn()
            self.stop.wait(self.every)

    def turn(self) -> None:
        pods, _ = self.api.list("Pod", self.namespace)
        self._kubelets(pods)
        pods, _ = self.api.list("Pod", self.namespace)
        self._replica_sets(pods)
        self._budgets(pods)

    # ------------------------------------------------------------------ kubelets
    def _kubelets(self, pods: list[dict[str, Any]]) -> None:
        now = time.monotonic()
        for p in pods:
            meta, spec, status = p["metadata"], p.get("spec") or {}, p.get("status") or {}
            path = f"/api/v1/namespaces/{self.namespace}/pods/{meta['name']}"
            if meta.get("deletionTimestamp"):
                since = self._terminating_since.setdefault(meta["uid"], now)
                if now - since >= self.kubelet_delay:
                    try:
                        self.api.request(
                            "DELETE",
                            path,
                            body={
                                "apiVersion": "v1",
                                "kind": "DeleteOptions",
                                "gracePeriodSeconds": 0,
                                "preconditions": {"uid": meta["uid"]},
                            },
                        )
                    except ApiError as e:
                        if e.status not in (404, 409):
                            raise
                continue
            if spec.get("nodeName") and status.get("phase") != "Running":
                self.api.patch(
                    "Pod",
                    f"{self.namespace}/{meta['name']}",
                    {
                        "status": {
                            "phase": "Running",
                            "startTime": _stamp(),
                            "conditions": [
                                {"type": "Ready", "status": "True", "lastTransitionTime": _stamp()}
                            ],
                        }
                    },
                    subresource="status",
                )

    # ------------------------------------------------------------------ ReplicaSets
    def _replica_sets(self, pods: list[dict[str, Any]]) -> None:
        sets, _ = self.api.list("ReplicaSet", self.namespace)
        for rs in sets:
            uid = rs["metadata"]["uid"]
            mine = [
                p
                for p in pods
                if not p["metadata"].get("deletionTimestamp")
                and any(r.get("uid") == uid for r in p["metadata"].get("ownerReferences") or [])
            ]
            for _ in range(int(rs["spec"].get("replicas") or 0) - len(mine)):
                template = rs["spec"]["template"]
                self.api.create(
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "metadata": {
                            "name": f"{rs['metadata']['name']}-{uuid.uuid4().hex[:5]}",
                            "namespace": self.namespace,
                            "labels": dict(template["metadata"].get("labels") or {}),
                            "ownerReferences": [
                                {
                                    "apiVersion": "apps/v1",
                                    "kind": "ReplicaSet",
                                    "name": rs["metadata"]["name"],
                                    "uid": uid,
                                    "controller": True,
                                    "blockOwnerDeletion": True,
                                }
                            ],
                        },
                        "spec": template["spec"],
                    }
                )
                self.created += 1

    # ------------------------------------------------------------------ PodDisruptionBudgets
    def _budgets(self, pods: list[dict[str, Any]]) -> None:
        budgets, _ = self.api.list("PodDisruptionBudget", self.namespace)
        sets, _ = self.api.list("ReplicaSet", self.namespace) if budgets else ([], "")
        for b in budgets:
            selector = b["spec"].get("selector") or {}
            matching = [p for p in pods if _matches(selector, p["metadata"].get("labels") or {})]
            live = {p["metadata"]["name"] for p in matching if not p["metadata"].get("deletionTimestamp")}
            old = b.get("status") or {}
            disrupted = {n: t for n, t in (old.get("disruptedPods") or {}).items() if n in live}
            healthy = sum(
                1
                for p in matching
                if not p["metadata"].get("deletionTimestamp")
                and p["metadata"]["name"] not in disrupted
                and any(
                    c.get("type") == "Ready" and c.get("status") == "True"
                    for c in (p.get("status") or {}).get("conditions") or []
                )
            )
            scale = sum(
                int(rs["spec"].get("replicas") or 0)
                for rs in sets
                if _matches(selector, (rs["spec"]["template"]["metadata"].get("labels") or {}))
            )
            expected = max(scale, len(live))  # the controller's scale, as the disruption controller reads it
            desired = expected - int(b["spec"].get("maxUnavailable", 0))
            status = {
                "observedGeneration": b["metadata"].get("generation", 1),
                "expectedPods": expected,
                "currentHealthy": healthy,
                "desiredHealthy": desired,
                "disruptionsAllowed": max(0, healthy - desired),
                "disruptedPods": disrupted or None,
            }
            if any(old.get(k) != v for k, v in status.items()):
                self.api.patch(
                    "PodDisruptionBudget",
                    f"{self.namespace}/{b['metadata']['name']}",
                    {"status": status},
                    subresource="status",
                )
