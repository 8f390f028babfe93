"""live.source.read_cluster and the --kubeconfig/--context options of get, schedule, explain and
validate: the live objects (with their uid and creationTimestamp, so taken as existing) through
the FakeApi, and the user-facing errors (unreachable, missing kubeconfig, missing CRDs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kubespread.api.core import Node, Pod
from kubespread.cli.app import app
from kubespread.live.kube import KubeApi, LiveError
from kubespread.live.source import read_cluster
from live.fake_api import FakeApi
from placement_inputs import node, pod, write

ZONE = "topology.kubernetes.io/zone"


def live_cluster(**kw: Any) -> FakeApi:
    """n1 (zone a) and n2 (zone b); p1 bound to n1, p2 to n2 (app=web), one pending pod."""
    api = FakeApi(**kw)
    api.create(node("n1", "a"))
    api.create(node("n2", "b"))
    api.create(pod("p1", {"app": "web"}, node_name="n1"))
    api.create(pod("p2", {"app": "web"}, node_name="n2"))
    api.create(pod("waiting", {"app": "other"}))
    api.calls.clear()
    return api


class Live:
    """What KubeApi.connect answers (``api``, swappable) and the arguments it was called with."""

    def __init__(self) -> None:
        self.api = live_cluster()
        self.seen: list[tuple[Any, Any]] = []


@pytest.fixture
def live(monkeypatch: pytest.MonkeyPatch) -> Live:
    state = Live()

    def connect(cls: type, kubeconfig: Any = None, context: Any = None) -> FakeApi:
        state.seen.append((kubeconfig, context))
        return state.api

    monkeypatch.setattr(KubeApi, "connect", classmethod(connect))
    return state


def deployment(tmp_path: Path, replicas: int = 2) -> Path:
    tpl = {
        "metadata": {"labels": {"app": "web"}},
        "spec": {
            "containers": [{"name": "c", "image": "nginx"}],
            "topologySpreadConstraints": [
                {
                    "maxSkew": 1,
                    "topologyKey": ZONE,
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"app": "web"}},
                }
            ],
        },
    }
    dep = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}}, "template": tpl},
    }
    return write(tmp_path / "web.yaml", [dep])


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
    return result.exit_code, result.stdout, result.stderr


# --------------------------------------------------------------------------- read_cluster
def test_read_cluster_lists_every_kind_with_uids(live: Live) -> None:
    manifests = read_cluster(Path("cfg"), "ctx")
    assert live.seen == [(Path("cfg"), "ctx")]
    assert sorted(n.name for n in manifests.of_kind(Node)) == ["n1", "n2"]
    pods = {p.name: p for p in manifests.of_kind(Pod)}
    assert sorted(pods) == ["p1", "p2", "waiting"]
    assert all(p.metadata.uid and p.metadata.creation_timestamp for p in pods.values())
    assert manifests.sources == ["cluster fake"]
    assert not manifests.errors


def test_read_cluster_skips_kinds_whose_crd_is_missing(live: Live) -> None:
    api = live_cluster(missing_kinds=frozenset({"CloneSet", "WorkloadSpread"}))
    live.api = api
    manifests = read_cluster(None, None)
    assert len(manifests.of_kind(Pod)) == 3


def test_read_cluster_reports_a_refused_list(live: Live) -> None:
    api = live_cluster()
    api.fail_next(1, status=403, only="list Deployment")
    live.api = api
    with pytest.raises(LiveError) as e:
        read_cluster(None, None)
    assert str(e.value).startswith("cluster fake: listing Deployment: 403")


def test_a_missing_core_kind_is_an_error_not_skipped(live: Live) -> None:
    live.api = live_cluster(missing_kinds=frozenset({"Deployment"}))
    with pytest.raises(LiveError, match="listing Deployment: 404"):
        read_cluster(None, None)


# --------------------------------------------------------------------------- the commands
def test_get_pods_lists_the_live_pods(live: Live) -> None:
    code, stdout, stderr = invoke("get", "pods", "--kubeconfig", "x")
    assert code == 0, stderr
    lines = stdout.splitlines()
    assert lines[0].split()[:4] == ["NAMESPACE", "NAME", "STATUS", "NODE"]
    rows = {line.split()[1]: line.split() for line in lines[1:]}
    assert sorted(rows) == ["p1", "p2", "waiting"]
    assert rows["p1"][3:5] == ["n1", "a"]
    assert rows["waiting"][2:4] == ["Pending", "<none>"]
    assert live.seen == [(Path("x"), None)]


def test_get_nodes_with_a_context(live: Live) -> None:
    code, stdout, stderr = invoke("get", "nodes", "--context", "kind-dev", "-o", "json")
    assert code == 0, stderr
    doc = json.loads(stdout)
    assert [i["metadata"]["name"] for i in doc["items"]] == ["n1", "n2"]
    assert live.seen == [(None, "kind-dev")]


def test_get_merges_the_live_cluster_with_files(live: Live, tmp_path: Path) -> None:
    extra = write(tmp_path / "more.yaml", [node("n3", "c")])
    code, stdout, stderr = invoke("get", "nodes", "--kubeconfig", "x", "-f", str(extra), "-o", "yaml")
    assert code == 0, stderr
    assert [i["metadata"]["name"] for i in yaml.safe_load(stdout)["items"]] == ["n1", "n2", "n3"]


def test_schedule_places_a_new_deployment_beside_the_live_pods(live: Live, tmp_path: Path) -> None:
    code, stdout, stderr = invoke(
        "schedule", "--kubeconfig", "x", "-f", str(deployment(tmp_path)), "-o", "json", "--no-progress"
    )
    assert code == 0, stderr
    doc = json.loads(stdout)
    placed = {p["name"]: p for p in doc["placements"]}
    new = sorted(n for n in placed if n.startswith("web-"))
    assert len(new) == 2
    assert sorted(placed[n]["zone"] for n in new) == ["a", "b"]
    assert {"p1", "p2"}.isdisjoint(placed)  # bound pods stay where they are, not placed again
    assert placed["waiting"]["node"] in ("n1", "n2")  # the live pending pod is placed too
    kept = {(p["name"], p["node"]) for p in doc["final"]["pods"] if p["name"] in ("p1", "p2")}
    assert kept == {("p1", "n1"), ("p2", "n2")}
    # read-only: nothing was written to the cluster
    assert live.api.calls and all(c.startswith("list ") or c == "get /version" for c in live.api.calls)


def test_schedule_table_output(live: Live, tmp_path: Path) -> None:
    code, stdout, stderr = invoke(
        "schedule", "--kubeconfig", "x", "-f", str(deployment(tmp_path)), "--no-progress"
    )
    assert code == 0, stderr
    assert "placed 3 pod(s), 0 pending" in stdout


def test_an_unreachable_api_server_is_one_line_and_exit_1(live: Live, tmp_path: Path) -> None:
    api = live_cluster()
    api.unreachable = True
    live.api = api
    for args in (
        ["get", "pods", "--kubeconfig", "x"],
        ["schedule", "--kubeconfig", "x", "-f", str(deployment(tmp_path)), "--no-progress"],
    ):
        code, stdout, stderr = invoke(*args)
        assert code == 1
        assert stderr.startswith("error: cluster fake: cannot reach the API server: ")
        assert "Traceback" not in stderr + stdout
        assert len(stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_a_missing_kubeconfig_file_is_reported(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    code, stdout, stderr = invoke("get", "pods", "--kubeconfig", str(missing))
    assert code == 1
    assert f"{missing}: no such kubeconfig file" in stderr
    assert "Traceback" not in stderr + stdout


def test_explain_and_validate_read_the_live_cluster(live: Live) -> None:
    code, stdout, stderr = invoke("validate", "--kubeconfig", "x")
    assert code == 0, stderr
    code, stdout, stderr = invoke("explain", "--kubeconfig", "x", "default/waiting")
    assert code == 0, stderr + stdout
    assert "waiting" in stdout
