#!/usr/bin/env python3
"""The WorkloadSpread webhook under load on a real kube-apiserver: concurrent pod creations.

For each webhook replica count (``--replicas``, default 1 and 2) it starts that many
``kubespread webhook`` processes sharing one port (``--reuse-port``: the kernel spreads the
API server's connections among them, as a Service spreads them among pods) and one
``kubespread controller`` (it labels the namespace the webhooks are registered for), then for
each concurrency (``--concurrency``, default 50, 100, 200) creates that many pods of one
Deployment's ReplicaSet at once, one client thread and connection each, all through the
webhooks. The WorkloadSpread has subsets zone-a and zone-b bounded at 30 % of the pods each and
an unbounded rest. Prints, per run, p50/p99/max of the create calls, the failed calls and
whether every subset holds exactly its maxReplicas (never more).

Needs a disposable API server whose admin kubeconfig is ``--kubeconfig`` (the webhook
configurations it registers are scoped to the namespaces it creates, and removed after).

    .venv/bin/python benchmarks/webhook_load.py --kubeconfig /work/state-webhook/kubeconfig
    .venv/bin/python benchmarks/webhook_load.py --kubeconfig KC --concurrency 200 --replicas 2
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubespread.live.kube import ApiError, KubeApi

KUBESPREAD = str(Path(sys.executable).with_name("kubespread"))
ZONE = "topology.kubernetes.io/zone"
SUBSET_ANNOTATION = "apps.kruise.io/matched-workloadspread"
WS_LABEL = "kubespread.io/workloadspread"
RUN_LABEL = "kubespread-load/run"


# ------------------------------------------------------------------------------------------ plumbing
def wait_for(what: str, check: Callable[[], Any], timeout: float = 60.0, every: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(every)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def make_certs(d: Path) -> tuple[Path, Path, Path]:
    """A CA and a serving certificate for 127.0.0.1, made by the openssl command."""
    (d / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    for args in (
        "req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 1 -subj /CN=kubespread-load-ca",
        "req -newkey rsa:2048 -nodes -keyout tls.key -out tls.csr -subj /CN=127.0.0.1",
        "x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out tls.crt -extfile san.ext",
    ):
        subprocess.run(["openssl", *args.split()], check=True, capture_output=True, cwd=d)
    return d / "ca.crt", d / "tls.crt", d / "tls.key"


class Process:
    """A kubespread command in the background, its log in a file."""

    def __init__(self, args: list[str], log: Path) -> None:
        self.log_path = log
        self._file = log.open("w")
        if "--metrics-bind-address" not in args:
            # metrics on a free port: two replicas on this host (and other runs) never clash
            args = [*args, "--metrics-bind-address", "127.0.0.1:0"]
        self.proc = subprocess.Popen(args, stdout=self._file, stderr=subprocess.STDOUT)

    def log(self) -> str:
        return self.log_path.read_text()

    def cpu_seconds(self) -> float:
        """User + system CPU time the process has used (Linux /proc)."""
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def terminate(self, timeout: float = 20.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self._file.close()
        return code


# ------------------------------------------------------------------------------------------ the cluster
def ensure_crd(api: KubeApi) -> None:
    from kubespread.live.manifests import workload_spread_crd

    crd = workload_spread_crd()
    with contextlib.suppress(ApiError):
        api.create(crd)

    def established() -> bool:
        status = api.get("CustomResourceDefinition", crd["metadata"]["name"]).get("status") or {}
        return any(
            c["type"] == "Established" and c["status"] == "True" for c in status.get("conditions") or []
        )

    wait_for("the WorkloadSpread CRD to be established", established, 60)


def webhook_configurations(ca: Path, url: str, run: str) -> list[dict[str, Any]]:
    """The printed configurations, renamed for this run and scoped to its namespaces."""
    from kubespread.live.manifests import webhook_configurations as printed

    configs = printed(url=url, ca_bundle=ca.read_bytes())
    for c in configs:
        c["metadata"]["name"] = f"{c['metadata']['name']}-{run}"
        for hook in c["webhooks"]:
            hook["namespaceSelector"]["matchExpressions"].append(
                {"key": RUN_LABEL, "operator": "In", "values": [run]}
            )
    return configs


@contextlib.contextmanager
def webhooks_running(
    api: KubeApi, kubeconfig: str, replicas: int, workdir: Path, run: str
) -> Iterator[list[Process]]:
    """``replicas`` webhooks behind the proxy, the controller, and the configurations."""
    ca, cert, key = make_certs(workdir)
    port = free_port()
    procs = [
        Process(
            [
                KUBESPREAD,
                "webhook",
                "--kubeconfig",
                kubeconfig,
                "--tls-cert",
                str(cert),
                "--tls-key",
                str(key),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--reuse-port",
                "--log-level",
                "info",  # as deployed: one line per review
            ],
            workdir / f"webhook-{i}.log",
        )
        for i in range(replicas)
    ]
    controller = Process([KUBESPREAD, "controller", "--kubeconfig", kubeconfig], workdir / "controller.log")
    configs = webhook_configurations(ca, f"https://127.0.0.1:{port}", run)
    try:
        for proc in procs:
            wait_for("a webhook to listen", lambda p=proc: "serving admission reviews" in p.log(), 60)  # type: ignore[misc]
        wait_for("the controller to list the cluster", lambda: "watching" in controller.log(), 60)
        for c in configs:
            api.create(c)
        yield [*procs, controller]
    finally:
        for c in configs:
            with contextlib.suppress(ApiError):
                api.delete(c["kind"], c["metadata"]["name"])
        for p in [*procs, controller]:
            p.terminate()


# ------------------------------------------------------------------------------------------ one run
@dataclass
class Round:
    concurrency: int
    replicas: int
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    subsets: dict[str, int] = field(default_factory=dict)
    bounds: dict[str, int | None] = field(default_factory=dict)
    wall: float = 0.0
    #: CPU seconds the webhook processes used during the creations
    webhook_cpu: float = 0.0

    def quantile(self, q: float) -> float:
        if len(self.latencies) < 2:
            return self.latencies[0] if self.latencies else 0.0
        return statistics.quantiles(self.latencies, n=100, method="inclusive")[round(q * 100) - 1]

    @property
    def p50(self) -> float:
        return self.quantile(0.50)

    @property
    def p99(self) -> float:
        return self.quantile(0.99)

    @property
    def exact(self) -> bool:
        """Every bounded subset holds exactly its maxReplicas, every pod is in a subset."""
        if not self.replicas:
            return not self.subsets
        bounded = all(self.subsets.get(s, 0) == b for s, b in self.bounds.items() if b is not None)
        return bounded and sum(self.subsets.values()) == self.concurrency - len(self.errors)

    @property
    def over(self) -> list[str]:
        return [s for s, b in self.bounds.items() if b is not None and self.subsets.get(s, 0) > b]


def workload(
    api: KubeApi, namespace: str, n: int, *, spread: bool = True
) -> tuple[dict[str, Any], dict[str, int | None]]:
    """Deployment web, its ReplicaSet (the pods' owner) and (``spread``) the WorkloadSpread;
    the pod to create and the subsets' bounds."""
    labels = {"app": "web"}
    template = {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "pause"}]}}
    spec = {"replicas": n, "selector": {"matchLabels": labels}, "template": template}
    dep = api.create(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": namespace},
            "spec": spec,
        }
    )
    owner = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": dep["metadata"]["uid"]}
    rs = api.create(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": "web-5d8f6c",
                "namespace": namespace,
                "labels": labels,
                "ownerReferences": [{**owner, "controller": True}],
            },
            "spec": spec,
        }
    )
    bounds: dict[str, int | None] = {"zone-a": round(n * 0.3), "zone-b": round(n * 0.3), "rest": None}

    def zone(name: str, op: str, values: list[str], bound: int | None) -> dict[str, Any]:
        s: dict[str, Any] = {
            "name": name,
            "requiredNodeSelectorTerm": {
                "matchExpressions": [{"key": ZONE, "operator": op, "values": values}]
            },
        }
        if bound is not None:
            s["maxReplicas"] = bound
        return s

    if not spread:
        bounds = {}
    else:
        create_spread(api, namespace, bounds, zone)
    pod_owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs["metadata"]["name"]}
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "generateName": "web-5d8f6c-",
            "namespace": namespace,
            "labels": labels,
            "ownerReferences": [{**pod_owner, "uid": rs["metadata"]["uid"], "controller": True}],
        },
        "spec": template["spec"],
    }
    return pod, bounds


def create_spread(
    api: KubeApi,
    namespace: str,
    bounds: dict[str, int | None],
    zone: Callable[[str, str, list[str], int | None], dict[str, Any]],
) -> None:
    api.create(
        {
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "WorkloadSpread",
            "metadata": {"name": "web-spread", "namespace": namespace},
            "spec": {
                "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "subsets": [
                    zone("zone-a", "In", ["zone-a"], bounds["zone-a"]),
                    zone("zone-b", "In", ["zone-b"], bounds["zone-b"]),
                    zone("rest", "NotIn", ["zone-a", "zone-b"], None),
                ],
            },
        }
    )


def create_namespace(api: KubeApi, name: str, run: str) -> None:
    api.create(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": {RUN_LABEL: run}}}
    )
    # no controller manager: the ServiceAccount admission plugin needs the default account
    api.create(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": name}}
    )


def delete_namespace(api: KubeApi, name: str) -> None:
    """Its pods at once, its workloads and WorkloadSpreads, then the namespace. Why each kind:
    without a namespace controller the namespace never empties itself, and a read of the
    cluster (``schedule --kubeconfig``) would recreate the ReplicaSets' pods."""
    with contextlib.suppress(ApiError):
        api.request(
            "DELETE",
            f"/api/v1/namespaces/{name}/pods",
            body={"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0},
        )
    for kind in ("WorkloadSpread", "Deployment", "ReplicaSet"):
        with contextlib.suppress(ApiError):
            for obj in api.list(kind, name)[0]:
                api.delete(kind, f"{name}/{obj['metadata']['name']}")
    with contextlib.suppress(ApiError):
        api.delete("Namespace", name)


def one_round(
    api: KubeApi, clients: list[KubeApi], concurrency: int, replicas: int, run: str, webhooks: list[Process]
) -> Round:
    """``concurrency`` creations at once; ``replicas`` 0: the same pods without a
    WorkloadSpread, in a namespace no webhook is registered for (the API server alone)."""
    namespace = f"load-{uuid.uuid4().hex[:6]}"
    create_namespace(api, namespace, run if replicas else "none")
    result = Round(concurrency, replicas)
    try:
        pod, result.bounds = workload(api, namespace, concurrency, spread=replicas > 0)
        if replicas:
            wait_for(
                "the controller to label the namespace",
                lambda: (
                    (api.get("Namespace", namespace)["metadata"].get("labels") or {}).get(WS_LABEL) == "true"
                ),
                30,
            )
            time.sleep(1.0)  # the webhooks' watches see the WorkloadSpread
        barrier = threading.Barrier(concurrency)
        lock = threading.Lock()

        def create(client: KubeApi) -> None:
            barrier.wait()
            started = time.perf_counter()
            try:
                client.create(pod)
            except ApiError as e:
                with lock:
                    result.errors.append(str(e)[:200])
                return
            with lock:
                result.latencies.append(time.perf_counter() - started)

        threads = [threading.Thread(target=create, args=(c,)) for c in clients[:concurrency]]
        cpu = sum(w.cpu_seconds() for w in webhooks)
        started = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        result.wall = time.perf_counter() - started
        result.webhook_cpu = sum(w.cpu_seconds() for w in webhooks) - cpu
        items = api.list("Pod", namespace)[0]
        result.subsets = dict(
            Counter(
                json.loads(p["metadata"]["annotations"][SUBSET_ANNOTATION])["subset"]
                for p in items
                if SUBSET_ANNOTATION in (p["metadata"].get("annotations") or {})
            )
        )
    finally:
        delete_namespace(api, namespace)
    return result


def run_load(
    kubeconfig: str, concurrencies: list[int], replicas_list: list[int], workdir: Path
) -> list[Round]:
    api = KubeApi.connect(kubeconfig)
    ensure_crd(api)
    # one client (one connection pool) per thread, made before any clock starts
    clients = [KubeApi.connect(kubeconfig) for _ in range(max(concurrencies))]
    rounds = [one_round(api, clients, max(concurrencies), 0, "", [])]  # warm-up, not reported
    rounds = [one_round(api, clients, c, 0, "", []) for c in concurrencies]
    for replicas in replicas_list:
        run = uuid.uuid4().hex[:8]
        folder = workdir / f"replicas-{replicas}"
        folder.mkdir(parents=True, exist_ok=True)
        with webhooks_running(api, kubeconfig, replicas, folder, run) as procs:
            webhooks = procs[:replicas]
            one_round(api, clients, max(concurrencies), replicas, run, webhooks)  # warm-up, not reported
            for concurrency in concurrencies:
                rounds.append(one_round(api, clients, concurrency, replicas, run, webhooks))
    return rounds


def table(rounds: list[Round]) -> str:
    lines = [
        f"{'creates':>7} {'replicas':>8} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} {'failed':>6} "
        f"{'wall s':>6} {'cpu ms/pod':>10}  subsets (zone-a, zone-b bounded)",
    ]
    for r in rounds:
        fill = "exact" if r.exact and not r.over else f"NOT EXACT (over: {r.over})"
        if not r.replicas:
            lines.append(
                f"{r.concurrency:>7} {'none':>8} {r.p50 * 1000:>7.0f} {r.p99 * 1000:>7.0f} "
                f"{max(r.latencies, default=0) * 1000:>7.0f} {len(r.errors):>6} {r.wall:>6.2f} "
                f"{'-':>10}  no webhook called (the API server alone)"
            )
            continue
        counts = ", ".join(
            f"{s}={r.subsets.get(s, 0)}/{b if b is not None else '-'}" for s, b in r.bounds.items()
        )
        lines.append(
            f"{r.concurrency:>7} {r.replicas:>8} {r.p50 * 1000:>7.0f} {r.p99 * 1000:>7.0f} "
            f"{max(r.latencies, default=0) * 1000:>7.0f} {len(r.errors):>6} {r.wall:>6.2f} "
            f"{r.webhook_cpu * 1000 / r.concurrency:>10.1f}  {counts}: {fill}"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kubeconfig", required=True, help="a disposable API server's admin kubeconfig")
    parser.add_argument("--concurrency", default="50,100,200", help="pods created at once, comma-separated")
    parser.add_argument("--replicas", default="1,2", help="webhook processes, comma-separated")
    parser.add_argument(
        "--logs", metavar="DIR", help="keep the webhooks' and controller's logs (at info) here"
    )
    args = parser.parse_args()
    try:
        concurrencies = [int(c) for c in args.concurrency.split(",")]
        replicas = [int(r) for r in args.replicas.split(",")]
    except ValueError:
        parser.error("--concurrency and --replicas take comma-separated integers")
    if not Path(args.kubeconfig).is_file():
        parser.error(f"--kubeconfig {args.kubeconfig}: no such file")
    with tempfile.TemporaryDirectory() as tmp:
        rounds = run_load(args.kubeconfig, concurrencies, replicas, Path(args.logs or tmp))
    print(table(rounds))
    for r in rounds:
        for e in sorted(set(r.errors))[:3]:
            print(f"  {r.concurrency}x{r.replicas} failed: {e}")
    return 0 if all(r.exact and not r.over and not r.errors for r in rounds) else 1


if __name__ == "__main__":
    sys.exit(main())
