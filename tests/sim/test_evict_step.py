"""The scenario's ``evict`` step: pods through the Eviction API in one wave; a
PodDisruptionBudget refuses what would break it (a rejection, not an error); the
controller's replacements are scheduled once the wave settles."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from kubespread.sim.run import simulate
from kubespread.sim.scenario import ScenarioError, load_scenario

CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""

APPS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec: {minAvailable: 2, selector: {matchLabels: {app: web}}}
"""


def _scenario(tmp_path: Path, steps: str) -> Path:
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    (tmp_path / "apps.yaml").write_text(APPS)
    path = tmp_path / "scenario.yaml"
    path.write_text(
        "apiVersion: kubespread.io/v1alpha1\nkind: Scenario\nmetadata: {name: evict}\n"
        "cluster: [cluster.yaml]\nsteps:\n- apply: apps.yaml\n" + textwrap.dedent(steps)
    )
    return path


def test_a_wave_evicts_what_the_budget_allows_and_the_rest_is_refused(tmp_path: Path) -> None:
    first = simulate(load_scenario(_scenario(tmp_path, "- advance: 1s\n")))
    pods = sorted(p.name for p in first.final.pods)
    assert len(pods) == 3
    steps = f"- evict: {{pods: [default/{pods[0]}, default/{pods[1]}]}}\n- advance: 60s\n"
    result = simulate(load_scenario(_scenario(tmp_path, steps)))
    wave = result.steps[1]
    # minAvailable 2 of 3 allows one disruption: the first is granted, the second refused
    assert [r.object for r in wave.rejections] == [f"Pod default/{pods[1]}"]
    assert "disruption budget" in wave.rejections[0].message
    assert wave.description.startswith("evict default/")
    names = sorted(p.name for p in result.final.pods)
    assert pods[0] not in names and pods[1] in names and len(names) == 3
    assert all(p.node for p in result.final.pods)  # the replacement was scheduled


def test_bad_evict_steps_are_located(tmp_path: Path) -> None:
    path = _scenario(tmp_path, "- evict: {pods: [web-1]}\n- evict: {pods: []}\n- evict: {pod: x}\n")
    with pytest.raises(ScenarioError) as e:
        load_scenario(path)
    text = str(e.value)
    assert "steps[1].evict.pods[0]: must be namespace/name, got 'web-1'" in text
    assert "steps[2].evict.pods: must be a non-empty list of namespace/name" in text
    assert "steps[3].evict" in text
