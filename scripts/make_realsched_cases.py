#!/usr/bin/env python3
"""Write inputs for checking which node we pick against the REAL kube-scheduler's node selection.

The conformance corpus scores every node and breaks ties by name; a default-configured
kube-scheduler v1.35 does neither. It filters nodes in its cache's node-tree order (zones round
robin in the order each zone's first node was added), starting where the previous cycle stopped
(nextStartNodeIndex), stops once ``percentageOfNodesToScore`` worth of feasible nodes are found
(0 = adaptive), and takes whichever tied node its score heap pops first. Those choices depend on
the node list's order, zone sizes, unlabelled nodes and infeasible nodes, so this script writes
seeded, reproducible clusters that vary them. The reference answers come from the harness
../shared/oracle/realsched (``k8sreal -i INPUT -parallelism 1 -pct P -placements OUT``); the small
suite's answers are tests/data/realsched/NAME.placements.json, and tests/data/realsched/cases.json
lists each case's parameters so a test can regenerate its input here. Inputs are not committed.

    python scripts/make_realsched_cases.py NAME --seed S --nodes N --workload W --pct P \\
        --mode sequence -o NAME.input.json
    python scripts/make_realsched_cases.py --list
    python scripts/make_realsched_cases.py --suite small -o DIR   # DIR/NAME.input.json per case

The input is the conformance schema; ``config`` carries ``percentageOfNodesToScore`` and
``parallelism: 1`` (k8sreal takes them as -pct and -parallelism). Every pod has the same (zero)
priority, so no preemption is involved. Plain pods never fill a node, so kube-scheduler's
opportunistic batching (which k8sreal never triggers) gives no hint either.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
WORKLOADS = ("plain", "spread", "spread-soft", "anti", "pref", "mixed", "combo")
MODES = ("sequence", "evaluate")
SIZES = {  # pool → allocatable; "small" fits none of the incoming pods' requests
    "general": {"cpu": "16", "memory": "64Gi", "pods": "110"},
    "big": {"cpu": "32", "memory": "128Gi", "pods": "110"},
    "gpu": {"cpu": "16", "memory": "64Gi", "pods": "110", "nvidia.com/gpu": "4"},
    "small": {"cpu": "50m", "memory": "64Mi", "pods": "110"},
}
PREFIX = {"general": "worker", "big": "m5x", "gpu": "gpu", "small": "edge"}

# name → (seed, nodes, workload, pct, mode, pods or None for a seeded default)
SUITES: dict[str, dict[str, tuple[int, int, str, int, str, int | None]]] = {
    "small": {
        "plain-ties-adaptive-300": (101, 300, "plain", 0, "sequence", 120),
        "spread-adaptive-600": (102, 600, "spread", 0, "sequence", 150),
        "anti-pct30-250": (103, 250, "anti", 30, "sequence", 100),
        "pref-pct100-180": (104, 180, "pref", 100, "sequence", 80),
        "mixed-adaptive-450": (105, 450, "mixed", 0, "sequence", 120),
        "spread-soft-50": (106, 50, "spread-soft", 0, "sequence", 40),
        "combo-pct50-400": (107, 400, "combo", 50, "sequence", 150),
        "spread-evaluate-350": (108, 350, "spread", 0, "evaluate", 60),
        "anti-adaptive-120": (109, 120, "anti", 0, "sequence", 110),
    },
    "large": {
        "spread-adaptive-1000": (201, 1000, "spread", 0, "sequence", 300),
        "plain-adaptive-2500": (202, 2500, "plain", 0, "sequence", 300),
        "anti-adaptive-3000": (203, 3000, "anti", 0, "sequence", 250),
        "pref-adaptive-4000": (204, 4000, "pref", 0, "sequence", 250),
        "mixed-pct20-5000": (205, 5000, "mixed", 20, "sequence", 300),
        "combo-adaptive-6000": (206, 6000, "combo", 0, "sequence", 300),
        "spread-soft-evaluate-1500": (207, 1500, "spread-soft", 0, "evaluate", 200),
    },
}


def _node(name: str, labels: dict[str, str], pool: str, taints: list[dict[str, str]], cordoned: bool):
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if cordoned:
        spec["unschedulable"] = True
    alloc = SIZES[pool]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
        "status": {"allocatable": alloc, "capacity": alloc},
    }


def _nodes(rng: random.Random, n: int, workload: str) -> tuple[list[dict[str, Any]], str]:
    """The nodes, in the (shuffled) order they are added; and the selector mode for the pods."""
    nzones = rng.choice([2, 3, 3, 4, 5])
    if nzones == 3 and rng.random() < 0.5:
        weights = [0.5, 0.3, 0.2]
    else:
        weights = [rng.uniform(1, 6) for _ in range(nzones)]
    letters = rng.sample("abcdefgh", nzones + 1)
    zones = [f"eu-west-1{c}" for c in letters[:nzones]]
    late_zone = f"eu-west-1{letters[nzones]}" if rng.random() < 0.8 else None
    region_mode = rng.choice(["none", "all", "some"])
    regions = {z: rng.choice(["eu-west-1", "eu-west-2"]) for z in [*zones, late_zone or ""]}
    some_region = set(rng.sample(zones, 1))
    selector = rng.choice(["none", "nodeSelector", "affinity-notin", "affinity-in"])
    f_nolabel = rng.uniform(0.01, 0.05)
    f_beta = rng.uniform(0.01, 0.03) if rng.random() < 0.3 else 0.0
    f_late = rng.uniform(0.03, 0.08) if late_zone else 0.0
    f_taint = rng.uniform(0.03, 0.1)
    f_soft = 0.1 if workload == "mixed" else (rng.uniform(0, 0.1) if rng.random() < 0.4 else 0.0)
    f_cordon = rng.uniform(0.01, 0.04)
    f_small = rng.uniform(0.02, 0.06)
    f_gpu = rng.uniform(0.05, 0.15) if selector != "none" or rng.random() < 0.3 else 0.0
    f_big = rng.uniform(0.1, 0.3)
    ids = rng.sample(range(10 * n), n)
    late: list[dict[str, Any]] = []
    early: list[dict[str, Any]] = []
    for i in range(n):
        r = rng.random()
        pool = (
            "small"
            if r < f_small
            else "gpu"
            if r < f_small + f_gpu
            else "big"
            if r < f_small + f_gpu + f_big
            else "general"
        )
        name = f"{PREFIX[pool]}-{ids[i]:05d}"
        labels = {
            HOST: name,
            "kubernetes.io/os": "linux",
            "node-class": "gpu" if pool == "gpu" else "general",
            "disk": "ssd" if rng.random() < 1 / 3 else "hdd",
        }
        r = rng.random()
        is_late = False
        if r < f_nolabel:
            if region_mode != "none" and rng.random() < 0.5:
                labels[REGION] = rng.choice(["eu-west-1", "eu-west-2"])
        elif r < f_nolabel + f_beta:
            labels[BETA_ZONE] = rng.choice(zones)
        elif r < f_nolabel + f_beta + f_late:
            labels[ZONE], is_late = late_zone or zones[0], True
        else:
            labels[ZONE] = rng.choices(zones, weights)[0]
        zone = labels.get(ZONE)
        if zone and (
            region_mode == "all" or (region_mode == "some" and zone in some_region and rng.random() < 0.6)
        ):
            labels[REGION] = regions[zone]
        taints = []
        r = rng.random()
        if r < f_taint:
            taints.append({"key": "dedicated", "value": "infra", "effect": "NoSchedule"})
        elif r < f_taint + f_soft:
            taints.append({"key": "spot", "value": "true", "effect": "PreferNoSchedule"})
        node = _node(name, labels, pool, taints, rng.random() < f_cordon)
        (late if is_late else early).append(node)
    rng.shuffle(early)
    # the late zone's nodes all come within the last 15% of the list
    cut = len(early) - max(1, len(early) * 15 // 100)
    tail = early[cut:] + late
    rng.shuffle(tail)
    return early[:cut] + tail, selector


def _pod(
    name: str,
    app: str,
    workload: str,
    req: tuple[str, str],
    selector: str,
    ns: str = "default",
    node: str | None = None,
) -> dict[str, Any]:
    sel = {"matchLabels": {"app": app}}
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "app",
                "image": "registry.example/app:1.0",
                "resources": {"requests": {"cpu": req[0], "memory": req[1]}},
            }
        ]
    }
    affinity: dict[str, Any] = {}
    if workload in ("spread", "mixed"):
        spec["topologySpreadConstraints"] = [
            {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": sel}
        ]
        if workload == "spread":
            spec["topologySpreadConstraints"].append(
                {
                    "maxSkew": 1,
                    "topologyKey": HOST,
                    "whenUnsatisfiable": "ScheduleAnyway",
                    "labelSelector": sel,
                }
            )
    elif workload == "spread-soft":
        spec["topologySpreadConstraints"] = [
            {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": sel},
            {"maxSkew": 2, "topologyKey": HOST, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": sel},
        ]
    elif workload == "anti":
        affinity["podAntiAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": sel, "topologyKey": HOST}]
        }
    elif workload == "pref":
        affinity["podAffinity"] = {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "podAffinityTerm": {"labelSelector": sel, "topologyKey": ZONE}}
            ]
        }
    if workload == "mixed":
        affinity["podAntiAffinity"] = {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 50, "podAffinityTerm": {"labelSelector": sel, "topologyKey": HOST}}
            ]
        }
        affinity["nodeAffinity"] = {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 20,
                    "preference": {
                        "matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]
                    },
                }
            ]
        }
    if selector == "nodeSelector":
        spec["nodeSelector"] = {"node-class": "general"}
    elif selector.startswith("affinity-"):
        op, values = ("NotIn", ["gpu"]) if selector == "affinity-notin" else ("In", ["general"])
        affinity.setdefault("nodeAffinity", {})["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "node-class", "operator": op, "values": values}]}
            ]
        }
    if affinity:
        spec["affinity"] = affinity
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": app}, "uid": f"uid-{ns}-{name}"},
        "spec": spec,
        "status": {"phase": "Running" if node else "Pending"},
    }


CPU = ["100m", "200m", "250m", "500m"]
MEM = ["128Mi", "256Mi", "512Mi", "1Gi"]


def generate(
    name: str, seed: int, nodes: int, workload: str, pct: int, mode: str, pods: int | None = None
) -> dict[str, Any]:
    """The input document for one case; the same arguments always give the same document."""
    if workload not in WORKLOADS or mode not in MODES or not 0 <= pct <= 100 or nodes < 1:
        raise ValueError(f"bad parameters: {workload=} {mode=} {pct=} {nodes=}")
    rng = random.Random(seed)
    node_list, selector = _nodes(rng, nodes, workload)
    if pods is None:
        pods = rng.randint(30, min(300, max(60, nodes)))
    apps = {"web": "spread", "db": "anti", "batch": "plain"} if workload == "combo" else {"app": workload}
    reqs = {app: (rng.choice(CPU), rng.choice(MEM)) for app in apps}
    hosts = [nd["metadata"]["name"] for nd in node_list if "unschedulable" not in nd["spec"]]
    hot = rng.sample(hosts, max(1, len(hosts) // 5))
    existing = []
    for i in range(rng.randint(0, nodes * 3 // 2)):  # other apps, 70% of them on a fifth of the nodes
        node = rng.choice(hot if rng.random() < 0.7 else hosts)
        existing.append(
            _pod(
                f"other-{i:05d}",
                f"other-{i % 17}",
                "plain",
                (rng.choice(CPU), rng.choice(MEM)),
                "none",
                rng.choice(["default", "batch"]),
                node,
            )
        )
    for app, w in apps.items():  # a few of the incoming apps' own pods, most in one zone
        zone_hosts = [
            nd["metadata"]["name"]
            for nd in node_list
            if nd["metadata"]["labels"].get(ZONE) == node_list[0]["metadata"]["labels"].get(ZONE)
        ]
        for i in range(rng.randint(0, max(1, nodes // 20))):
            node = rng.choice(zone_hosts if zone_hosts and rng.random() < 0.8 else hosts)
            ns = "default" if rng.random() < 0.8 else "batch"
            existing.append(_pod(f"{app}-old-{i:04d}", app, w, reqs[app], selector, ns, node))
    names = list(apps)
    incoming = []
    for i in range(pods):
        app = names[0] if len(names) == 1 else rng.choice(names)
        incoming.append(_pod(f"{app}-{i:04d}", app, apps[app], reqs[app], selector))
    return {
        "id": name,
        "mode": mode,
        "config": {"plugins": "default", "percentageOfNodesToScore": pct, "parallelism": 1},
        "namespaces": [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}} for ns in ("default", "batch")
        ],
        "nodes": node_list,
        "pods": existing,
        "incoming": incoming,
    }


def digest(doc: dict[str, Any]) -> str:
    """sha256 of the document's canonical JSON (sorted keys, no spaces): a regenerated input's identity."""
    return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def params(suite: str, name: str) -> dict[str, Any]:
    seed, nodes, workload, pct, mode, pods = SUITES[suite][name]
    return {
        "name": name,
        "seed": seed,
        "nodes": nodes,
        "workload": workload,
        "pct": pct,
        "mode": mode,
        "pods": pods,
    }


def _write(doc: dict[str, Any], path: str) -> None:
    text = json.dumps(doc, separators=(",", ":")) + "\n"
    if path == "-":
        sys.stdout.write(text)
    else:
        Path(path).write_text(text)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("name", nargs="?", help="the case's id (the input's \"id\")")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--nodes", type=int, default=300)
    ap.add_argument("--workload", choices=WORKLOADS, default="spread")
    ap.add_argument("--pct", type=int, default=0, help="percentageOfNodesToScore (0 = adaptive)")
    ap.add_argument("--mode", choices=MODES, default="sequence")
    ap.add_argument("--pods", type=int, help="incoming pods (default: seeded, 30 to 300)")
    ap.add_argument("--list", action="store_true", help="print every suite's cases as JSON lines")
    ap.add_argument("--suite", choices=sorted(SUITES), help="write each case of a suite into the folder -o")
    ap.add_argument("-o", "--output", default="-", help="file (or, with --suite, folder); - = stdout")
    a = ap.parse_args(argv)
    if a.list:
        for suite in [a.suite] if a.suite else SUITES:
            for name in SUITES[suite]:
                print(json.dumps({"suite": suite, **params(suite, name)}))
        return
    if a.suite:
        folder = Path("." if a.output == "-" else a.output)
        folder.mkdir(parents=True, exist_ok=True)
        for name in SUITES[a.suite]:
            p = params(a.suite, name)
            _write(generate(**p), str(folder / f"{name}.input.json"))
        return
    if not a.name:
        ap.error("give a case NAME, --suite or --list")
    _write(generate(a.name, a.seed, a.nodes, a.workload, a.pct, a.mode, a.pods), a.output)


if __name__ == "__main__":
    main()
