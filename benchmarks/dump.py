#!/usr/bin/env python3
"""A big kubectl dump: loaded and settled, then ``kubespread schedule`` of one Deployment on it.

The dump is generated (never committed): ``kubectl get nodes,namespaces,deployments,
replicasets,pods -A -o json`` of ``--nodes`` nodes (default 5,000, over 10 zones, kubelet
labels, conditions, images) running ``--pods`` pods (default 100,000) of ``--deployments``
Deployments (default 500) in 20 namespaces, each with its ReplicaSet, the pods owned by it
with kube's defaulted spec (tolerations, DNS and restart policy, scheduler name, service
account...), a zone spread (maxSkew 1, matchLabelKeys pod-template-hash), and their status
(Running, conditions, IPs, container statuses). kubectl leaves managedFields out.

Measured, each ``--runs`` times (default 3) in a fresh process (``ru_maxrss`` is the peak
resident memory of that process alone):

* ``load+settle``: ``load`` (read, parse, decode, check) and ``settle`` (the cluster built,
  the controllers run until quiet) of the dump, as every command starts;
* ``schedule``: ``kubespread schedule -f DUMP -f checkout.yaml`` (a Deployment of 10
  replicas) as a command, end to end, output discarded.

Printed: per run wall seconds, CPU seconds and peak MiB, then the medians, with the
machine's 1-minute load average before and after each run.

    .venv/bin/python benchmarks/dump.py                      # 5,000 nodes, 100,000 pods
    .venv/bin/python benchmarks/dump.py --nodes 500 --pods 10000 --runs 3
    .venv/bin/python benchmarks/dump.py --dump /tmp/d.json   # written once, then reused

Side by side with another tree (its own venv), in the same minutes, on the same dump:
``--other /path/to/tree`` runs each measurement there too, alternating, and prints both.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
STAMP = "2026-11-20T10:00:00Z"


def _uid(kind: str, i: int) -> str:
    return f"{kind[:8].lower():0<8}-{i:04x}-4000-8000-{i:012x}"


def node(i: int) -> dict[str, Any]:
    name = f"ip-10-{i // 250}-{i % 250}-1.eu-west-1.compute.internal"
    zone = f"eu-west-1{'abcdefghij'[i % 10]}"
    labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/instance-type": "m6i.4xlarge",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        HOST: name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": "m6i.4xlarge",
        "topology.kubernetes.io/region": "eu-west-1",
        ZONE: zone,
    }
    resources = {"cpu": "16", "ephemeral-storage": "95Gi", "memory": "64Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
            "creationTimestamp": STAMP,
            "labels": labels,
            "name": name,
            "resourceVersion": str(1000 + i),
            "uid": _uid("node", i),
        },
        "spec": {"providerID": f"aws:///{zone}/i-{i:017x}"},
        "status": {
            "addresses": [
                {"address": f"10.{i // 250}.{i % 250}.1", "type": "InternalIP"},
                {"address": name, "type": "Hostname"},
            ],
            "allocatable": {**resources, "cpu": "15890m", "memory": "62Gi"},
            "capacity": resources,
            "conditions": [
                {
                    "lastHeartbeatTime": STAMP,
                    "lastTransitionTime": STAMP,
                    "message": message,
                    "reason": reason,
                    "status": status,
                    "type": kind,
                }
                for kind, status, reason, message in (
                    (
                        "MemoryPressure",
                        "False",
                        "KubeletHasSufficientMemory",
                        "kubelet has sufficient memory",
                    ),
                    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID"),
                    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
                )
            ],
            "nodeInfo": {
                "architecture": "amd64",
                "containerRuntimeVersion": "containerd://1.7.22",
                "kernelVersion": "6.1.112",
                "kubeletVersion": "v1.34.1",
                "operatingSystem": "linux",
                "osImage": "Amazon Linux 2023",
            },
        },
    }


def _template(app: str, hash_: str) -> dict[str, Any]:
    labels = {"app": app, "pod-template-hash": hash_}
    return {
        "metadata": {"labels": labels},
        "spec": {
            "containers": [
                {
                    "image": f"registry.example.com/{app}:1.0.0",
                    "imagePullPolicy": "IfNotPresent",
                    "name": "app",
                    "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                    "resources": {
                        "limits": {"memory": "256Mi"},
                        "requests": {"cpu": "100m", "memory": "256Mi"},
                    },
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                }
            ],
            "dnsPolicy": "ClusterFirst",
            "restartPolicy": "Always",
            "schedulerName": "default-scheduler",
            "securityContext": {},
            "terminationGracePeriodSeconds": 30,
            "topologySpreadConstraints": [
                {
                    "labelSelector": {"matchLabels": {"app": app}},
                    "matchLabelKeys": ["pod-template-hash"],
                    "maxSkew": 1,
                    "topologyKey": ZONE,
                    "whenUnsatisfiable": "ScheduleAnyway",
                }
            ],
        },
    }


def deployment(d: int, replicas: int) -> tuple[dict[str, Any], dict[str, Any], str, str]:
    app, ns, hash_ = f"app-{d:04d}", f"team-{d % 20:02d}", f"{d:08x}"[-10:]
    meta = {"creationTimestamp": STAMP, "namespace": ns, "resourceVersion": str(5000 + d)}
    template = _template(app, hash_)
    dep_template = {"metadata": {"labels": {"app": app}}, "spec": template["spec"]}
    dep = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {**meta, "generation": 1, "labels": {"app": app}, "name": app, "uid": _uid("deploy", d)},
        "spec": {
            "progressDeadlineSeconds": 600,
            "replicas": replicas,
            "revisionHistoryLimit": 10,
            "selector": {"matchLabels": {"app": app}},
            "strategy": {
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
                "type": "RollingUpdate",
            },
            "template": dep_template,
        },
        "status": {
            "availableReplicas": replicas,
            "observedGeneration": 1,
            "readyReplicas": replicas,
            "replicas": replicas,
            "updatedReplicas": replicas,
        },
    }
    rs_name = f"{app}-{hash_}"
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            **meta,
            "annotations": {
                "deployment.kubernetes.io/desired-replicas": str(replicas),
                "deployment.kubernetes.io/max-replicas": str(replicas + (replicas + 3) // 4),
                "deployment.kubernetes.io/revision": "1",
            },
            "generation": 1,
            "labels": template["metadata"]["labels"],
            "name": rs_name,
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "blockOwnerDeletion": True,
                    "controller": True,
                    "kind": "Deployment",
                    "name": app,
                    "uid": dep["metadata"]["uid"],
                }
            ],
            "uid": _uid("rs", d),
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": template["metadata"]["labels"]},
            "template": template,
        },
        "status": {
            "availableReplicas": replicas,
            "fullyLabeledReplicas": replicas,
            "observedGeneration": 1,
            "readyReplicas": replicas,
            "replicas": replicas,
        },
    }
    return dep, rs, rs_name, ns


def pod(i: int, rs: dict[str, Any], node_: dict[str, Any]) -> dict[str, Any]:
    meta = rs["metadata"]
    name = f"{meta['name']}-{i:05x}"
    spec = json.loads(json.dumps(rs["spec"]["template"]["spec"]))
    spec.update(
        {
            "enableServiceLinks": True,
            "nodeName": node_["metadata"]["name"],
            "preemptionPolicy": "PreemptLowerPriority",
            "priority": 0,
            "serviceAccount": "default",
            "serviceAccountName": "default",
            "tolerations": [
                {
                    "effect": "NoExecute",
                    "key": f"node.kubernetes.io/{t}",
                    "operator": "Exists",
                    "tolerationSeconds": 300,
                }
                for t in ("not-ready", "unreachable")
            ],
        }
    )
    spec["containers"][0]["volumeMounts"] = [
        {
            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
            "name": "kube-api-access",
            "readOnly": True,
        }
    ]
    spec["volumes"] = [
        {
            "name": "kube-api-access",
            "projected": {
                "defaultMode": 420,
                "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {
                        "configMap": {
                            "items": [{"key": "ca.crt", "path": "ca.crt"}],
                            "name": "kube-root-ca.crt",
                        }
                    },
                ],
            },
        }
    ]
    ip = f"10.{100 + i // 65536}.{i // 256 % 256}.{i % 256}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "creationTimestamp": STAMP,
            "generateName": f"{meta['name']}-",
            "labels": dict(meta["labels"]),
            "name": name,
            "namespace": meta["namespace"],
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "blockOwnerDeletion": True,
                    "controller": True,
                    "kind": "ReplicaSet",
                    "name": meta["name"],
                    "uid": meta["uid"],
                }
            ],
            "resourceVersion": str(100_000 + i),
            "uid": _uid("pod", i),
        },
        "spec": spec,
        "status": {
            "conditions": [
                {"lastProbeTime": None, "lastTransitionTime": STAMP, "status": "True", "type": t}
                for t in (
                    "PodReadyToStartContainers",
                    "Initialized",
                    "Ready",
                    "ContainersReady",
                    "PodScheduled",
                )
            ],
            "containerStatuses": [
                {
                    "containerID": f"containerd://{i:064x}",
                    "image": spec["containers"][0]["image"],
                    "imageID": "registry.example.com/app@sha256:" + "0" * 64,
                    "lastState": {},
                    "name": "app",
                    "ready": True,
                    "restartCount": 0,
                    "started": True,
                    "state": {"running": {"startedAt": STAMP}},
                }
            ],
            "hostIP": node_["status"]["addresses"][0]["address"],
            "phase": "Running",
            "podIP": ip,
            "podIPs": [{"ip": ip}],
            "qosClass": "Burstable",
            "startTime": STAMP,
        },
    }


def write_dump(path: Path, nodes: int, pods: int, deployments: int) -> None:
    """The dump as kubectl writes it: one List, written item by item (no second copy)."""
    node_objs = [node(i) for i in range(nodes)]
    per = pods // deployments
    with path.open("w") as f:
        f.write('{\n    "apiVersion": "v1",\n    "items": [\n')
        first = True

        def put(obj: dict[str, Any]) -> None:
            nonlocal first
            f.write(("" if first else ",\n") + json.dumps(obj, indent=4))
            first = False

        for n in node_objs:
            put(n)
        for k in range(20):
            put(
                {
                    "apiVersion": "v1",
                    "kind": "Namespace",
                    "metadata": {"creationTimestamp": STAMP, "name": f"team-{k:02d}", "uid": _uid("ns", k)},
                    "spec": {"finalizers": ["kubernetes"]},
                    "status": {"phase": "Active"},
                }
            )
        i = 0
        for d in range(deployments):
            dep, rs, _, _ = deployment(d, per)
            put(dep)
            put(rs)
            for _ in range(per):
                put(pod(i, rs, node_objs[(i * 7919) % nodes]))
                i += 1
        f.write('\n    ],\n    "kind": "List",\n    "metadata": {"resourceVersion": ""}\n}\n')


CHECKOUT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: checkout, namespace: team-00}
spec:
  replicas: 10
  selector: {matchLabels: {app: checkout}}
  template:
    metadata: {labels: {app: checkout}}
    spec:
      containers:
      - name: app
        image: registry.example.com/checkout:2.0.0
        resources: {requests: {cpu: 250m, memory: 512Mi}}
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
         labelSelector: {matchLabels: {app: checkout}}}
"""


def _settle_child(path: str) -> None:
    """In a fresh process: load and settle the dump, print wall, CPU and peak MiB as JSON."""
    started, cpu = time.perf_counter(), time.process_time()
    from kubespread.api.model import collect_less
    from kubespread.io import load
    from kubespread.sim.baseline import settle

    collect_less()  # as the executables do first: a command's collector and freezing policy

    manifests = load([Path(path)])
    assert not manifests.errors, manifests.errors[:3]
    loaded = time.perf_counter()
    base = settle(manifests)
    done = time.perf_counter()
    pods = len(base.sim.cluster.pods)
    out = {
        "load": loaded - started,
        "settle": done - loaded,
        "wall": done - started,
        "cpu": time.process_time() - cpu,
        "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "pods": pods,
    }
    print(json.dumps(out))
    gc.freeze()  # as the executables do on leaving: the interpreter's exit walks none of it


def tree_python(tree: Path) -> Path:
    """The tree's own interpreter (its .venv), else this one."""
    py = tree / ".venv" / "bin" / "python"
    return py if tree != REPO and py.exists() else Path(sys.executable)


def tree_kubespread(tree: Path = REPO) -> list[str]:
    """The tree's own ``kubespread`` executable (its .venv), else ``python -m kubespread``."""
    exe = tree_python(tree).with_name("kubespread")
    return [str(exe)] if exe.exists() else [str(tree_python(tree)), "-m", "kubespread"]


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed kubespread has its bytecode
    return env


def _run(cmd: list[str]) -> tuple[float, float, float, str]:
    """``cmd`` in a fresh process, its own rusage (wait4 on a Popen that is not yet reaped)."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env(), text=True)
    assert proc.stdout is not None and proc.stderr is not None
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out


def _load() -> float:
    return os.getloadavg()[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=5_000)
    ap.add_argument("--pods", type=int, default=100_000)
    ap.add_argument("--deployments", type=int, default=500)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dump", type=Path, help="the dump's path: written when missing, else reused")
    ap.add_argument("--other", type=Path, help="another tree (with its .venv) measured alternately")
    ap.add_argument("--settle-child", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.settle_child:
        _settle_child(a.settle_child)
        return 0
    with tempfile.TemporaryDirectory(prefix="kubespread-dump-") as tmp:
        dump, checkout = a.dump or Path(tmp) / "dump.json", Path(tmp) / "checkout.yaml"
        started = time.perf_counter()
        if not dump.exists():
            write_dump(dump, a.nodes, a.pods, a.deployments)
        checkout.write_text(CHECKOUT)
        mib = dump.stat().st_size / 2**20
        print(
            f"dump: {dump} ({a.nodes:,} nodes, {a.pods:,} pods, {a.deployments} Deployments unless reused): "
            f"{mib:,.0f} MiB JSON (ready in {time.perf_counter() - started:.1f} s)"
        )
        trees = {"this": REPO} | ({"other": a.other.resolve()} if a.other else {})
        for tree in trees.values():
            _run([*tree_kubespread(tree), "--version"])  # bytecode written before anything is timed
        rows: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
        print(f"{'what':<12} {'tree':<6} {'run':>3} {'wall s':>7} {'cpu s':>7} {'peak MiB':>9}  load")
        for r in range(a.runs):
            for name, tree in trees.items():
                before = _load()
                script = tree / "benchmarks" / "dump.py"
                cmd = [str(tree_python(tree)), str(script), "--settle-child", str(dump)]
                wall, cpu, peak, out = _run(cmd)
                got = json.loads(out)
                rows.setdefault(("load+settle", name), []).append((wall, cpu, peak))
                print(
                    f"{'load+settle':<12} {name:<6} {r + 1:>3} {wall:>7.1f} {cpu:>7.1f} {peak:>9.0f}"
                    f"  {before:.2f}/{_load():.2f}"
                    f"  (load {got['load']:.1f} s, settle {got['settle']:.1f} s, {got['pods']:,} pods)"
                )
            for name, tree in trees.items():
                before = _load()
                cmd = [*tree_kubespread(tree), "schedule", "-f", str(dump), "-f", str(checkout)]
                wall, cpu, peak, out = _run(cmd)
                rows.setdefault(("schedule", name), []).append((wall, cpu, peak))
                placed = sum(1 for line in out.splitlines() if "checkout-" in line)
                print(
                    f"{'schedule':<12} {name:<6} {r + 1:>3} {wall:>7.1f} {cpu:>7.1f} {peak:>9.0f}"
                    f"  {before:.2f}/{_load():.2f}"
                    f"  ({placed} output lines name a checkout pod)"
                )
        print(f"medians of {a.runs} runs:")
        for (what, name), runs in rows.items():
            wall, cpu, peak = (statistics.median(x) for x in zip(*runs, strict=True))
            print(f"  {what:<12} {name:<6} wall {wall:.1f} s, cpu {cpu:.1f} s, peak {peak:,.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
