"""``kubespread admit --hard-anti-affinity-limit`` / ``--limit-pod-hard-anti-affinity-topology``:
off by default (kube-apiserver's answer), each switching on its rule."""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from kubespread.cli.app import app

runner = CliRunner()


def manifest(topology_key: str, all_namespaces: bool) -> str:
    term = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": topology_key}
    if all_namespaces:
        term["namespaceSelector"] = {}
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {
                "containers": [{"name": "c", "image": "nginx"}],
                "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
            },
        }
    )


ZONE = "topology.kubernetes.io/zone"

# (flags, topology key, all namespaces, accepted)
CASES = [
    ((), ZONE, True, True),
    (("--hard-anti-affinity-limit",), ZONE, True, False),
    (("--hard-anti-affinity-limit",), ZONE, False, True),
    (("--hard-anti-affinity-limit",), "kubernetes.io/hostname", True, True),
    (("--limit-pod-hard-anti-affinity-topology",), ZONE, False, False),
    (("--limit-pod-hard-anti-affinity-topology",), "kubernetes.io/hostname", False, True),
]


@pytest.mark.slow
@pytest.mark.parametrize(("flags", "key", "all_ns", "accepted"), CASES)
def test_flags_switch_the_rules_on(flags: tuple[str, ...], key: str, all_ns: bool, accepted: bool) -> None:
    r = runner.invoke(app, ["admit", *flags], input=manifest(key, all_ns))
    assert r.exit_code == 0, r.output
    answer = json.loads(r.stdout)
    assert answer["accepted"] is accepted
    if not accepted:
        assert answer["code"] == 403 and answer["reason"] == "Forbidden"
        path = "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey"
        assert answer["message"].startswith(f'pods "web" is forbidden: {path}: ')
