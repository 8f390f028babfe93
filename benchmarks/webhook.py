#!/usr/bin/env python3
"""The admission webhook under concurrent load: latency of /mutate-pods over real TLS.

Starts ``kubespread.live.webhook_server.WebhookServer`` on 127.0.0.1 with a throw-away certificate
(made by the ``openssl`` command in a temporary folder), then ``--clients`` threads each send
``--requests`` AdmissionReviews of a pod with a zone spread, a matchLabelKeys term and a
required anti-affinity (merge on, hard anti-affinity limit on), each on a fresh TLS
connection as the API server's webhook client may. Prints the latency percentiles, the
slowest answer against the API server's 10 s timeout, and reviews per second.

    .venv/bin/python benchmarks/webhook.py
    .venv/bin/python benchmarks/webhook.py --clients 50 --requests 40
"""

from __future__ import annotations

import argparse
import http.client
import json
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from kubespread.admission.framework import AdmissionOptions
from kubespread.live.webhook import AdmissionHandlers
from kubespread.live.webhook_server import WebhookServer

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web-0", "namespace": "shop", "labels": {"app": "web", "pod-template-hash": "7d9f"}},
    "spec": {
        "containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}],
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "web"}},
                "matchLabelKeys": ["pod-template-hash"],
            }
        ],
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "topologyKey": "kubernetes.io/hostname",
                        "labelSelector": {"matchLabels": {"app": "web"}},
                    }
                ]
            }
        },
    },
}


def review(uid: str) -> bytes:
    return json.dumps(
        {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": uid,
                "kind": {"group": "", "version": "v1", "kind": "Pod"},
                "resource": {"group": "", "version": "v1", "resource": "pods"},
                "namespace": "shop",
                "operation": "CREATE",
                "object": POD,
            },
        }
    ).encode()


def certificate(d: Path) -> tuple[Path, Path]:
    (d / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "tls.key", "-out", "tls.crt",
         "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True, cwd=d,
    )  # fmt: skip
    return d / "tls.crt", d / "tls.key"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=20, help="per client")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cert, key = certificate(Path(tmp))
        handlers = AdmissionHandlers(
            None, options=AdmissionOptions(hard_anti_affinity_limit=True), merge_match_label_keys=True
        )
        server = WebhookServer(handlers, cert=cert, key=key, host="127.0.0.1", port=0)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        context = ssl.create_default_context(cafile=str(cert))

        def one() -> float:
            uid = str(uuid.uuid4())
            started = time.perf_counter()
            conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=context, timeout=10)
            conn.request("POST", "/mutate-pods", review(uid), {"Content-Type": "application/json"})
            resp = conn.getresponse()
            body = json.loads(resp.read())
            conn.close()
            if resp.status != 200 or body["response"]["uid"] != uid or "patch" not in body["response"]:
                raise RuntimeError(f"unexpected answer {resp.status}: {body}")
            return time.perf_counter() - started

        def client(_: int) -> list[float]:
            return [one() for _ in range(args.requests)]

        started = time.perf_counter()
        with ThreadPoolExecutor(args.clients) as pool:
            latencies = sorted(t for ts in pool.map(client, range(args.clients)) for t in ts)
        wall = time.perf_counter() - started
        server.shutdown()
    n = len(latencies)
    q = statistics.quantiles(latencies, n=100)
    print(f"{n} reviews from {args.clients} concurrent clients over TLS (a new connection each)")
    print(
        f"latency ms: p50 {q[49] * 1000:.1f}  p95 {q[94] * 1000:.1f}  p99 {q[98] * 1000:.1f}  "
        f"max {latencies[-1] * 1000:.1f}  (the API server waits at most 10000)"
    )
    print(f"throughput: {n / wall:.0f} reviews/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
