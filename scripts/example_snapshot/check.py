"""The checks: the written dump loads back cleanly, is at rest, and is consistent with
kubespread's scheduler; then a summary of what it holds."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from kubespread.admission.framework import Rejection
from kubespread.api.apps import Deployment, ReplicaSet
from kubespread.api.core import Pod
from kubespread.cluster import ClusterState
from kubespread.io import Manifests, cluster_from_manifests, load
from kubespread.sim import Simulation

from .catalog import GROUPS
from .common import NODEGROUP, SEED, ZONE, ZONES

PTS_REASON = "node(s) didn't match pod topology spread constraints"


def shown(path: Path) -> Path:
    """``path`` relative to the working directory when it is below it."""
    try:
        return path.resolve().relative_to(Path.cwd())
    except ValueError:
        return path


def rules_of(template: dict[str, Any]) -> list[str]:
    """A one-line account of a pod template's placement rules."""
    spec = template["spec"]
    rules = []
    for c in spec.get("topologySpreadConstraints", []):
        key = "zone" if c["topologyKey"] == ZONE else "hostname"
        mlk = " matchLabelKeys=[pod-template-hash]" if c.get("matchLabelKeys") else ""
        rules.append(f"{key} spread maxSkew {c['maxSkew']} {c['whenUnsatisfiable']}{mlk}")
    aff = spec.get("affinity", {})
    for kind, label in (("podAntiAffinity", "anti-affinity"), ("podAffinity", "pod affinity")):
        for when in ("required", "preferred"):
            for term in aff.get(kind, {}).get(f"{when}DuringSchedulingIgnoredDuringExecution", []):
                term = term.get("podAffinityTerm", term)
                key = "zone" if term["topologyKey"] == ZONE else "hostname"
                rules.append(f"{when} {label} ({key})")
    node_aff = aff.get("nodeAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    for term in (node_aff or {}).get("nodeSelectorTerms", []):
        for e in term.get("matchExpressions", []):
            if e["key"] == NODEGROUP:
                rules.append(f"node affinity {NODEGROUP} in {e['values']}")
    if spec.get("nodeSelector"):
        rules.append(f"nodeSelector {spec['nodeSelector']}")
    if any(t.get("key") == "dedicated" for t in spec.get("tolerations", [])):
        rules.append("tolerates dedicated=batch:NoSchedule")
    return rules


def replicas(cluster: ClusterState, kind: str) -> dict[str, int | None]:
    return {k: obj.spec.replicas for k, obj in cluster.objects(kind).items()}  # type: ignore[attr-defined]


def check(path: Path, checkout_file: Path, placeable: list[str], unplaceable: list[str]) -> None:
    """Load the dump back and check it is at rest and consistent with kubespread's scheduler:
    nothing moves, the placeable pending pods are placed and the others fail on topology
    spread; then the new workload of ``checkout_file`` fits. Prints what the dump holds."""
    manifests = load([path])
    assert not manifests.errors, [str(p) for p in manifests.errors]
    assert not manifests.warnings, [str(p) for p in manifests.warnings]
    cluster = cluster_from_manifests(manifests)
    before = {k: p.spec.node_name for k, p in cluster.pods.items()}
    sizes = (replicas(cluster, "ReplicaSet"), replicas(cluster, "Deployment"))
    zones = Counter(n.labels[ZONE] for n in cluster.nodes.values())
    sim = Simulation(cluster, seed=SEED)
    sim.run_until_quiet()
    after = {k: p.spec.node_name for k, p in sim.cluster.pods.items()}
    assert set(after) == set(before), ("pods created or deleted", set(after) ^ set(before))
    moved = [k for k, n in before.items() if n and after[k] != n]
    assert not moved, moved
    assert sorted(k for k, n in before.items() if not n) == sorted(placeable + unplaceable)
    for k in placeable:
        assert after[k], (k, sim.pending_reasons.get(k))
    for k in unplaceable:
        assert not after[k] and PTS_REASON in sim.pending_reasons.get(k, ""), (k, sim.pending_reasons.get(k))
    assert (replicas(sim.cluster, "ReplicaSet"), replicas(sim.cluster, "Deployment")) == sizes
    for k, rs in sim.cluster.objects("ReplicaSet").items():
        active = [p for p in sim.pods_of(rs.metadata.uid) if not p.is_terminating]
        assert len(active) == sizes[0][k], (k, len(active), sizes[0][k])
    checkout_zones = check_checkout(sim, checkout_file)
    print_summary(manifests, sim.cluster, zones, before)
    print_pending(manifests, sim, after, placeable, unplaceable)
    placed = sum(checkout_zones.values())
    print(f"checkout: all {placed} pods placed, by zone {dict(sorted(checkout_zones.items()))}")


def check_checkout(sim: Simulation, checkout_file: Path) -> Counter[str]:
    """Every pod of the new workload can be placed once the pending pods are: its pods by zone."""
    checkout = load([checkout_file])
    assert not checkout.problems, [str(p) for p in checkout.problems]
    for obj in checkout:
        out = sim.create(obj.copy())
        assert not isinstance(out, Rejection), out
    sim.run_until_quiet()
    dep = sim.cluster.get("Deployment", "shop/checkout")
    assert isinstance(dep, Deployment)
    mine = [p for p in sim.cluster.pods.values() if p.labels.get("app.kubernetes.io/name") == "checkout"]
    assert len(mine) == dep.spec.replicas and all(p.spec.node_name for p in mine), [
        (p.key, sim.pending_reasons.get(p.key)) for p in mine if not p.spec.node_name
    ]
    return Counter(sim.cluster.nodes[p.spec.node_name].labels[ZONE] for p in mine)


def print_summary(
    manifests: Manifests, cluster: ClusterState, zones: Counter[str], bound: dict[str, str]
) -> None:
    """The nodes, the pods and the workloads with their placement rules."""
    nodes = list(cluster.nodes.values())
    print(f"nodes: {len(nodes)} ({', '.join(f'{z} {n}' for z, n in sorted(zones.items()))})")
    groups = Counter((n.labels[ZONE], n.labels[NODEGROUP]) for n in nodes)
    for z in ZONES:
        print(f"  {z}: " + ", ".join(f"{g} {groups[(z, g)]}" for g in GROUPS))
    cordoned = [n.name for n in nodes if n.spec.unschedulable]
    print(f"  cordoned: {', '.join(cordoned)}; tainted dedicated=batch:NoSchedule: the batch group")
    print(
        f"pods: {len(bound)} ({sum(1 for n in bound.values() if n)} bound, "
        f"{sum(1 for n in bound.values() if not n)} pending)"
    )
    print("workloads:")
    for m in manifests.of_kind(Deployment):
        rss = [
            rs
            for rs in manifests.of_kind(ReplicaSet)
            if (ref := rs.metadata.controller_ref()) and ref.uid == m.metadata.uid and rs.spec.replicas
        ]
        sizes = " + ".join(
            f"{rs.spec.replicas} x {rs.spec.template.spec.containers[0].image.rsplit(':', 1)[1]}"
            for rs in sorted(rss, key=lambda rs: rs.metadata.creation_timestamp or "")
        )
        extra = " (paused mid-rollout)" if m.spec.paused else ""
        rules = "; ".join(rules_of(m.to_dict()["spec"]["template"])) or "no placement rules"
        print(f"  {m.key}: replicas {m.spec.replicas} [{sizes}]{extra}: {rules}")
    print(
        "  DaemonSet pods on every node (the DaemonSets are not in the dump): kube-system/kube-proxy, "
        "monitoring/fluent-bit"
    )


def print_pending(
    manifests: Manifests, sim: Simulation, after: dict[str, str], placeable: list[str], unplaceable: list[str]
) -> None:
    """The pending pods: the message in the dump, and where they go now (or why not)."""
    pods_by_key = {p.key: p for p in manifests.of_kind(Pod)}
    print("pending, placeable now (a node joined after they failed):")
    for k in placeable:
        print(f"  {k} -> {after[k]}\n    was: {pods_by_key[k].status.conditions[0].message}")
    print("pending, unplaceable:")
    for k in unplaceable:
        print(f"  {k}\n    dumped: {pods_by_key[k].status.conditions[0].message}")
        print(f"    now:    {sim.pending_reasons[k]}")


def check_cli(path: Path) -> None:
    """``kubespread get nodes|pods -f`` read the dump."""
    exe = Path(sys.executable).parent / "kubespread"
    for resource in ("nodes", "pods"):
        done = subprocess.run(
            [str(exe), "get", resource, "-f", str(path)], capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr
        print(f"kubespread get {resource} -f {shown(path)}: exit 0")
