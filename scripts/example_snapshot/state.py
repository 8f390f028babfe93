"""What the object writers share: the history, resourceVersions, pod IPs (no writer imported
here, so nodes, pods and workloads can all take a Dump)."""

from __future__ import annotations

import random
from typing import Any

from .catalog import SYSTEM_IMAGES
from .common import SEED, digest, later
from .history import History, controlled_by

Item = dict[str, Any]


class Dump:
    """What the object writers share: the history, resourceVersions, pod IPs."""

    def __init__(self, history: History) -> None:
        self.h = history
        self.sim = history.sim
        self.rng = random.Random(f"{SEED}-dump")
        self.plans = {p.name: p for p in history.plans}
        self.rv_base = 51_273_000
        self.max_rv = 0
        self.pod_ips: dict[str, str] = {}

    def rv(self, sim_rv: str) -> str:
        """The resourceVersion of a real API server, in the simulation's order."""
        n = self.rv_base + int(sim_rv) * 23 + int(digest(sim_rv)[:4], 16) % 20
        self.max_rv = max(self.max_rv, n)
        return str(n)

    def common_meta(self, d: Item, *, keep_generation: bool) -> dict[str, Any]:
        meta = d["metadata"]
        meta["resourceVersion"] = self.rv(meta["resourceVersion"])
        if not keep_generation:
            meta.pop("generation", None)
        return meta

    def images_on(self, node: str) -> list[str]:
        """The images the node's pods run that it had not pulled from the start."""
        pods = self.sim.cluster.pods.values()
        running = {c.image for pod in pods if pod.spec.node_name == node for c in pod.spec.containers}
        return sorted(running - {name for name, _ in SYSTEM_IMAGES})

    def last_pod_time(self, uids: set[str], default: str) -> str:
        """Seconds after the last pod of these owners was created (their last status write)."""
        times = [
            p.metadata.creation_timestamp or ""
            for p in self.sim.cluster.pods.values()
            if controlled_by(p, uids)
        ]
        return later(max([default, *times]), 14)
