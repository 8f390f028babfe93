"""Leader election through a coordination.k8s.io/v1 Lease, as client-go's leaderelection does.

Only the leader works; the others wait and take the Lease over once its holder has not renewed
it for ``lease_seconds``. Every write carries the resourceVersion read, so two candidates
racing for an expired Lease cannot both win (one gets 409 Conflict). A leader that cannot renew
within ``renew_deadline`` stops leading (the caller exits, as kube-scheduler does); on a clean
stop it releases the Lease so a successor need not wait. A Lease the API server will not let
it read or write (401, 403: RBAC, or a namespace its Role does not cover) ends the election at
once (``refused``, ``lost``): retrying cannot help, and a candidate that can never lead must
not look healthy while scheduling nothing.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime
from typing import Any

from kubespread.live.kube import ApiError, KubeApi
from kubespread.live.recorder import micro_time

__all__ = ["LeaderElector"]

log = logging.getLogger("kubespread.live")


def _parse(stamp: str | None) -> float | None:
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


class LeaderElector(threading.Thread):
    """Acquire and renew ``namespace/name`` as ``identity``; ``leading`` is set while leader,
    ``lost`` once leadership held has been lost."""

    def __init__(
        self,
        api: KubeApi,
        *,
        namespace: str,
        name: str,
        identity: str,
        stop: threading.Event,
        lease_seconds: int = 15,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
    ) -> None:
        super().__init__(name="leader-election", daemon=True)
        self.api = api
        self.key = f"{namespace}/{name}"
        self.namespace, self.lease_name = namespace, name
        self.identity = identity
        self.stop = stop
        self.lease_seconds = lease_seconds
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.leading = threading.Event()
        self.lost = threading.Event()
        #: the 401/403 that ended the election (None while it runs)
        self.refused: ApiError | None = None

    def run(self) -> None:
        last_renew = 0.0
        while not self.stop.is_set():
            ok = self._try_acquire_or_renew()
            if self.refused is not None:
                log.error("leader election: %s", self.refused.advice(f"Lease {self.key}"))
                self.leading.clear()
                self.lost.set()
                return
            now = time.monotonic()
            if ok:
                last_renew = now
                if not self.leading.is_set():
                    log.info("leader election: %s now leads %s", self.identity, self.key)
                    self.leading.set()
            elif self.leading.is_set() and now - last_renew > self.renew_deadline:
                log.error("leader election: lost %s (not renewed for %.0fs)", self.key, self.renew_deadline)
                self.leading.clear()
                self.lost.set()
                return
            self.stop.wait(self.retry_period)
        if self.leading.is_set():
            self._release()

    def _spec(self, transitions: int, acquire: str) -> dict[str, Any]:
        return {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": self.lease_seconds,
            "acquireTime": acquire,
            "renewTime": micro_time(),
            "leaseTransitions": transitions,
        }

    def _try_acquire_or_renew(self) -> bool:
        try:
            try:
                lease = self.api.get("Lease", self.key)
            except ApiError as e:
                if e.status != 404:
                    raise
                self._create()
                return True
            spec = lease.get("spec") or {}
            holder = spec.get("holderIdentity") or ""
            transitions = int(spec.get("leaseTransitions") or 0)
            if holder == self.identity:
                lease["spec"] = self._spec(transitions, spec.get("acquireTime") or micro_time())
            else:
                renewed = _parse(spec.get("renewTime")) or 0.0
                duration = float(spec.get("leaseDurationSeconds") or self.lease_seconds)
                if holder and renewed + duration > time.time():
                    return False  # held by someone alive
                lease["spec"] = self._spec(transitions + 1, micro_time())
            self.api.replace(lease)
            return True
        except ApiError as e:
            if e.denied:
                self.refused = e
            elif e.status != 409:
                log.warning("leader election: %s", e)
            return False

    def _create(self) -> None:
        """The first candidate creates the Lease; a namespace that does not exist will not
        appear by waiting: that ends the election as a refusal does."""
        try:
            self.api.create(
                {
                    "apiVersion": "coordination.k8s.io/v1",
                    "kind": "Lease",
                    "metadata": {"name": self.lease_name, "namespace": self.namespace},
                    "spec": self._spec(0, micro_time()),
                }
            )
        except ApiError as e:
            if e.status == 404:
                self.refused = ApiError(
                    404, "NotFound", f"namespace {self.namespace} does not exist: {e.message}"
                )
            raise

    def _release(self) -> None:
        try:
            lease = self.api.get("Lease", self.key)
            if (lease.get("spec") or {}).get("holderIdentity") == self.identity:
                lease["spec"]["holderIdentity"] = ""
                lease["spec"]["leaseDurationSeconds"] = 1
                self.api.replace(lease)
                log.info("leader election: released %s", self.key)
        except ApiError as e:
            log.warning("leader election: could not release %s: %s", self.key, e)
        self.leading.clear()
