"""--kube-version (and KUBESPREAD_KUBE_VERSION): one option, defined in cli/options.py, on
every command that admits, schedules or explains; live modes ask the API server's /version."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kubespread.api.features import KUBE_VERSION_ENV, KubeVersion, features_for
from kubespread.cli.app import app
from kubespread.cli.common import kube_features

POD = """
apiVersion: v1
kind: Pod
metadata: {name: p, labels: {app: web, rev: "2"}}
spec:
  containers: [{name: c, image: x}]
  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector: {matchLabels: {app: web}}
    matchLabelKeys: [rev]
"""


def _admitted_selector(*args: str, env: dict[str, str] | None = None) -> dict:
    result = CliRunner().invoke(app, ["admit", *args], input=POD, env=env)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["object"]["spec"]["topologySpreadConstraints"][0]["labelSelector"]


def test_admit_merges_match_label_keys_as_the_version_does() -> None:
    merged = {
        "matchLabels": {"app": "web"},
        "matchExpressions": [{"key": "rev", "operator": "In", "values": ["2"]}],
    }
    assert _admitted_selector("--kube-version", "1.35") == merged
    assert _admitted_selector("--kube-version", "1.33") == {"matchLabels": {"app": "web"}}
    assert _admitted_selector(env={KUBE_VERSION_ENV: "1.33"}) == {"matchLabels": {"app": "web"}}
    assert _admitted_selector() == merged  # the default: 1.35


@pytest.mark.parametrize("bad", ["1.32", "1.39", "latest"])
def test_a_version_outside_the_range_is_a_usage_error(bad: str) -> None:
    result = CliRunner().invoke(app, ["admit", "--kube-version", bad], input=POD)
    assert result.exit_code == 2
    assert "--kube-version" in result.stderr and "1.33" in result.stderr


def test_validate_judges_match_label_keys_as_the_version_does(tmp_path: Path) -> None:
    """A matchLabelKey the selector already names: v1.34+ merges first and reports the merged
    expression (``[0][0]``, ValidateMatchLabelKeysAndMismatchLabelKeys); v1.33 judges the
    unmerged constraint by the legacy rule, at ``matchLabelKeys[0]``."""
    f = tmp_path / "p.yaml"
    f.write_text(POD.replace("matchLabelKeys: [rev]", "matchLabelKeys: [app]"))
    where = {}
    for version in ("1.33", "1.35"):
        result = CliRunner().invoke(app, ["validate", "-f", str(f), "--kube-version", version])
        assert result.exit_code == 1, result.output
        assert "exists in both matchLabelKeys and labelSelector" in result.stdout
        where[version] = result.stdout.split(": ")[2]
    assert where == {
        "1.33": "spec.topologySpreadConstraints[0].matchLabelKeys[0]",
        "1.35": "spec.topologySpreadConstraints[0][0]",
    }


def test_live_modes_ask_the_api_server(monkeypatch: pytest.MonkeyPatch) -> None:
    import kubespread.live.source as source

    monkeypatch.delenv(KUBE_VERSION_ENV, raising=False)
    monkeypatch.setattr(source, "server_version", lambda kubeconfig, context: "1.36")
    assert kube_features(None, Path("kubeconfig")).version == KubeVersion(1, 36)
    assert kube_features(features_for("1.34"), Path("kubeconfig")).version == KubeVersion(1, 34)
    assert kube_features(None).version == KubeVersion(1, 35)  # not live
    monkeypatch.setattr(source, "server_version", lambda kubeconfig, context: "1.40")
    assert kube_features(None, None, "ctx").version == KubeVersion(1, 38)  # the nearest, warned


NODE = """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""
BIG = """
apiVersion: v1
kind: Pod
metadata: {name: big}
spec:
  resources: {requests: {cpu: "3"}}
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
"""


def test_capacity_counts_as_the_version_admits_the_template(tmp_path: Path) -> None:
    """PodLevelResources: v1.33's API server drops the template's pod-level 3 cpu, so four
    1-cpu replicas fit a 4-cpu node; from v1.34 each asks 3 cpu and one fits."""
    (tmp_path / "node.yaml").write_text(NODE)
    (tmp_path / "big.yaml").write_text(BIG)
    fits = {}
    for version in ("1.33", "1.34"):
        args = ["capacity", "-f", str(tmp_path / "node.yaml"), "-f", str(tmp_path / "big.yaml")]
        result = CliRunner().invoke(app, [*args, "-o", "json", "--kube-version", version])
        assert result.exit_code == 0, result.output
        doc = json.loads(result.stdout)
        fits[version] = doc["greedy"] if "greedy" in doc else doc["templates"][0]["greedy"]
    assert fits == {"1.33": 4, "1.34": 1}


@pytest.mark.parametrize(
    "command", ["admit", "validate", "evaluate", "bench", "capacity", "rebalance", "audit"]
)
def test_every_command_that_admits_or_schedules_takes_the_option(command: str) -> None:
    result = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200"})
    assert "--kube-version" in result.stdout


UPGRADE = """
apiVersion: v1
kind: Node
metadata: {name: a, labels: {kubernetes.io/hostname: a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: b, labels: {kubernetes.io/hostname: b}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: on-a, uid: u1, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  nodeName: a
  containers: [{name: c, image: x, resources: {requests: {cpu: "3", memory: 1Gi}}}]
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: on-b, uid: u2, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  nodeName: b
  containers: [{name: c, image: x, resources: {requests: {cpu: "2", memory: 6Gi}}}]
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: new}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: "1", memory: 1Gi}}}]
"""


def test_diff_against_shows_what_an_upgrade_changes(tmp_path: Path) -> None:
    """NodeResourcesBalancedAllocation's v1.36 score (kubernetes#135573) moves the new pod from
    b (v1.35) to a (v1.37): the same manifests, scheduled as each version."""
    f = tmp_path / "cluster.yaml"
    f.write_text(UPGRADE)
    args = [
        "diff",
        "-f",
        str(f),
        "--kube-version",
        "1.35",
        "--against",
        "1.37",
        "-o",
        "json",
        "--no-progress",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    moved = [p for p in json.loads(result.stdout)["pods"] if p["change"] == "moved"]
    assert [(p["before"]["name"], p["before"]["node"], p["after"]["node"]) for p in moved] == [
        ("new", "b", "a")
    ]
    same = CliRunner().invoke(app, ["diff", "-f", str(f), "--against", "1.35", "-o", "json", "--no-progress"])
    assert not [p for p in json.loads(same.stdout)["pods"] if p["change"] == "moved"]


@pytest.mark.parametrize("command", ["schedule", "explain", "simulate", "diff", "provision"])
def test_the_use_case_commands_take_the_option(command: str) -> None:
    result = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200"})
    assert "--kube-version" in result.stdout
