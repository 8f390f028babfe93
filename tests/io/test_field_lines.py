"""Problems point at the field's own line (``web.yaml:18:``), in every command that locates
them: loading, ``validate``, ``capacity``'s template, ``explain POD.yaml`` and
``--scheduler-config``."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from kubespread.api.documents import FieldLines
from kubespread.cli.app import app
from kubespread.io import load, load_text

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app.kubernetes.io/name: web}
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx
        resources:
          requests:
            cpu: 500m
      topologySpreadConstraints:
      - maxSkew: 1
        topologyKey: zone
        whenUnsatisfiable: DoNotSchedule
"""


def test_paths_resolve_to_the_line_of_their_deepest_written_part() -> None:
    lines = FieldLines(DEPLOYMENT)
    assert lines.line(1, "spec.replicas") == 7
    assert lines.line(1, "spec.template.spec.containers[0].resources.requests[cpu]") == 19
    assert lines.line(1, "metadata.labels[app.kubernetes.io/name]") == 5
    assert lines.line(1, "spec.template.spec.topologySpreadConstraints[0].maxSkew") == 21
    assert lines.line(1, "spec.template.spec.containers[0].ports[0]") == 15  # missing: the container
    assert lines.line(1, "spec.template.spec.containers[3]") == 14  # past the end: the list
    assert lines.line(2, "spec.replicas") is None  # no object starts on line 2


def test_objects_of_a_list_and_of_later_documents_are_found_by_their_first_line() -> None:
    text = "apiVersion: v1\nkind: List\nitems:\n- kind: Pod\n  spec:\n    nodeName: a\n---\n" + DEPLOYMENT
    lines = FieldLines(text)
    assert lines.line(4, "spec.nodeName") == 6
    assert lines.line(8, "spec.replicas") == 14


def test_a_load_problem_is_located_at_its_field(tmp_path: Path) -> None:
    f = tmp_path / "web.yaml"
    f.write_text(DEPLOYMENT.replace("cpu: 500m", "cpu: lots").replace("    resources:", "    resoures:"))
    messages = [str(p) for p in load([str(f)]).errors]
    assert messages == [
        f"{f}:17: Deployment default/web: spec.template.spec.containers[0].resoures: "
        'unknown field "resoures" (did you mean "resources"?)'
    ]
    (bad_cpu,) = load_text(DEPLOYMENT.replace("cpu: 500m", "cpu: lots"), "w.yaml").errors
    assert str(bad_cpu).startswith("w.yaml:19: Deployment default/web: spec.template.spec.containers[0]")


def test_a_loaded_object_locates_its_fields_after_loading(tmp_path: Path) -> None:
    f = tmp_path / "web.yaml"
    f.write_text(DEPLOYMENT)
    (lo,) = load([str(f)]).objects
    assert lo.where() == f"{f}:1"
    assert lo.where("spec.template.spec.topologySpreadConstraints[0].topologyKey") == f"{f}:22"
    assert lo.line_of("spec.nothing.here") == 6  # the nearest written part: spec


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, [*args])
    return result.exit_code, result.stdout + result.stderr


def test_every_command_gives_the_fields_line(tmp_path: Path) -> None:
    f = tmp_path / "web.yaml"
    f.write_text(DEPLOYMENT.replace("maxSkew: 1", "maxSkew: 0"))
    skew = "spec.template.spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0"
    code, text = run("validate", "-f", str(f))
    assert code == 1 and f"{f}:21: Deployment default/web: {skew}" in text
    code, text = run("capacity", "-f", str(EXAMPLES / "cluster"), "-f", str(f))
    assert code == 1 and f"error: {f}:21: Deployment default/web: the API server would refuse" in text
    pod = tmp_path / "pod.yaml"
    pod.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: i}]\n"
        "  topologySpreadConstraints:\n"
        "  - {maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n"
    )
    code, text = run("explain", str(pod), "-f", str(EXAMPLES / "cluster"), "--no-progress")
    assert code == 1 and f"error: {pod}:7: Pod default/p: the API server would refuse it" in text
    config = tmp_path / "sched.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "percentageOfNodesToScore: 120\n"
    )
    code, text = run("schedule", "-f", str(EXAMPLES / "cluster"), "--scheduler-config", str(config))
    assert code == 1 and f"{config}:3: percentageOfNodesToScore: Invalid value: 120" in text
