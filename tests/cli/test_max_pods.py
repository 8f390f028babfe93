"""Issue 18, runaway work: ``--max-pods`` bounds the pods a run may hold. A workload asking for
more is refused at once with its field path; several that only together exceed the limit, or a
scenario step that scales past it, stop the run with a located error. Never hours of work."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from kubespread.api.core import Pod
from kubespread.cli.app import app
from kubespread.cluster.errors import PodLimitExceeded
from kubespread.io.loader import load_text
from kubespread.sim.placement import PlacementError, place

ROOT = Path(__file__).resolve().parents[2]
NODES = ROOT / "examples" / "scenarios" / "nodes-3-zones.yaml"
runner = CliRunner()


def deployment(name: str, replicas: int) -> str:
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers: [{{name: app, image: nginx}}]
"""


def run(*args: str):
    result = runner.invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def test_a_billion_replicas_is_refused_at_once_with_the_field(tmp_path: Path) -> None:
    f = tmp_path / "big.yaml"
    f.write_text(deployment("web", 1_000_000_000))
    for command in ("schedule", "explain"):
        args = [command, "default/x"] if command == "explain" else [command]
        r = run(*args, "-f", str(NODES), "-f", str(f))
        assert r.exit_code == 1, r.output
        assert "Deployment default/web: spec.replicas: Invalid value: 1000000000" in r.output
        assert "--max-pods 200,000" in r.output


def test_the_limit_is_the_users_to_set(tmp_path: Path) -> None:
    f = tmp_path / "web.yaml"
    f.write_text(deployment("web", 12))
    assert run("schedule", "-f", str(NODES), "-f", str(f), "--max-pods", "12", "-o", "json").exit_code == 0
    r = run("schedule", "-f", str(NODES), "-f", str(f), "--max-pods", "11")
    assert r.exit_code == 1
    assert "spec.replicas: Invalid value: 12" in r.output
    assert run("schedule", "-f", str(NODES), "-f", str(f), "--max-pods", "0").exit_code == 2


def test_workloads_over_the_limit_only_together_stop_the_run_where_it_happens(tmp_path: Path) -> None:
    f = tmp_path / "two.yaml"
    f.write_text(deployment("a", 6) + "---\n" + deployment("b", 6))
    r = run("schedule", "-f", str(NODES), "-f", str(f), "--max-pods", "10")
    assert r.exit_code == 1, r.output
    assert "Deployment default/b: more than 10 pods would exist at once" in r.output

    manifests = load_text(NODES.read_text() + "---\n" + f.read_text(), "in")
    try:
        place(manifests, max_pods=10)
    except PlacementError as e:
        assert "Deployment default/b" in e.problems[0]
    else:
        raise AssertionError("placed 12 pods with max_pods=10")
    result = place(manifests, max_pods=12)
    assert sum(isinstance(p, Pod) for p in result.sim.cluster.pods.values()) == 12


def test_a_scenario_scaling_past_the_limit(tmp_path: Path) -> None:
    (tmp_path / "nodes.yaml").write_text(NODES.read_text())
    (tmp_path / "web.yaml").write_text(deployment("web", 3))
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "apiVersion: kubespread.io/v1alpha1\nkind: Scenario\nmetadata: {name: s}\n"
        "cluster: [nodes.yaml]\nsteps:\n- apply: web.yaml\n"
        "- scale: {kind: Deployment, namespace: default, name: web, replicas: 1000000000}\n"
    )
    r = run("simulate", str(scenario))
    assert r.exit_code == 1, r.output
    assert "steps[1].scale: replicas: Invalid value: 1000000000" in r.output

    # a `set` step is only known while running: the run's own guard stops it, located
    scenario.write_text(
        "apiVersion: kubespread.io/v1alpha1\nkind: Scenario\nmetadata: {name: s}\n"
        "cluster: [nodes.yaml]\nsteps:\n- apply: web.yaml\n"
        "- set: {kind: Deployment, namespace: default, name: web, path: spec.replicas, value: 40}\n"
    )
    r = run("simulate", str(scenario), "--max-pods", "20")
    assert r.exit_code == 1, r.output
    assert "steps[1].set: more than 20 pods would exist at once" in r.output
    assert run("simulate", str(scenario), "--max-pods", "40", "-o", "json").exit_code == 0


def test_the_guard_is_the_api_servers_create() -> None:
    from kubespread.sim.engine import Simulation

    sim = Simulation(max_pods=1)
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c, image: i}]}\n"
    pod = load_text(text, "p")
    first = pod.objects[0].obj
    assert not hasattr(sim.create(first.copy()), "code")
    second = first.copy()
    second.metadata.name = "b"
    try:
        sim.create(second)
    except PodLimitExceeded as e:
        assert e.limit == 1
    else:
        raise AssertionError("a second pod was created with max_pods=1")
    assert list(sim.cluster.pods) == ["default/a"]


def test_a_long_step_reports_its_pods_as_they_are_placed() -> None:
    manifests = load_text(NODES.read_text() + "---\n" + deployment("web", 150), "in")
    seen: list[str] = []
    place(manifests, on_step=lambda done, total, what: seen.append(what))
    assert "create Deployment default/web: 100 pods placed" in seen
    assert seen[-1] == "done"
