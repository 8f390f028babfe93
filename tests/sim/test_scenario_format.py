"""Scenario files: the documented syntax loads; every problem is reported with its place."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from kubespread.api.duration import parse_duration
from kubespread.sim.scenario import ScenarioError, load_scenario, parse_path

NODES = """\
apiVersion: v1
kind: Node
metadata: {name: node1, labels: {kubernetes.io/hostname: node1}}
"""


def write(tmp_path: Path, text: str, name: str = "scenario.yaml") -> Path:
    (tmp_path / "nodes.yaml").write_text(NODES)
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_the_documented_syntax_loads(tmp_path: Path) -> None:
    (tmp_path / "deployment.yaml").write_text(
        textwrap.dedent("""\
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web}
        spec:
          replicas: 2
          selector: {matchLabels: {app: web}}
          template:
            metadata: {labels: {app: web}}
            spec: {containers: [{name: c, image: nginx}]}
        """)
    )
    (tmp_path / "scheduler-config.yaml").write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    )
    path = write(
        tmp_path,
        """\
        apiVersion: kubespread.io/v1alpha1
        kind: Scenario
        metadata: {name: rollout}
        seed: 7
        scheduler: scheduler-config.yaml
        cluster: [nodes.yaml]
        steps:
        - apply: deployment.yaml
        - scale: {kind: Deployment, namespace: default, name: web, replicas: 6}
        - set: {kind: Deployment, namespace: default, name: web,
                path: "spec.template.spec.containers[0].image", value: "nginx:1.15.0"}
        - label: {kind: Pod, namespace: default, name: web-1, set: {tier: gold}, remove: [old]}
        - delete: {kind: Pod, namespace: default, name: web-1}
        - node: {name: node1, action: cordon}
        - advance: 90s
        """,
    )
    s = load_scenario(path)
    assert (s.name, s.seed) == ("rollout", 7)
    assert s.profiles is not None and "default-scheduler" in s.profiles
    assert [lo.obj.name for lo in s.cluster] == ["node1"]
    assert [st.action for st in s.steps] == ["apply", "scale", "set", "label", "delete", "node", "advance"]
    assert s.steps[0].objects[0].ref() == "Deployment default/web"
    assert s.steps[6].seconds == 90
    assert s.steps[1].describe() == "scale Deployment default/web to 6"
    assert s.steps[3].describe() == "label Pod default/web-1 tier=gold old-"


def test_every_problem_is_reported_with_its_place(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        apiVersion: kubespread.io/v1alpha1
        kind: Scenario
        cluster: [nodes.yaml, missing.yaml]
        steps:
        - scale: {kind: Deployment, name: web, replicas: -1}
        - node: {name: node1, action: explode}
        - advance: soon
        - apply:
            apiVersion: v1
            kind: Pod
            metadata: {name: p}
            spec:
              containers: [{name: c, image: i}]
              topologySpreadConstraints: [{maxSkew: 0, topologyKey: k, whenUnsatisfiable: DoNotSchedule}]
        - jump: 1
        """,
    )
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    problems = info.value.problems
    s = str(path)
    assert f"{s}: cluster[1]: no such file or directory: missing.yaml" in problems
    assert f"{s}: steps[0].scale.replicas: must be a non-negative integer, got -1" in problems
    assert any(p.startswith(f"{s}: steps[1].node.action: must be one of cordon") for p in problems)
    assert any(p.startswith(f"{s}: steps[2].advance: must be a duration") for p in problems)
    assert any(
        p.startswith(f"{s}: steps[3].apply: Pod default/p: spec.topologySpreadConstraints[0].maxSkew")
        for p in problems
    )
    assert any(p.startswith(f"{s}: steps[4]: unknown step 'jump'") for p in problems)
    assert len(problems) == 6


def test_unquoted_brackets_in_a_flow_mapping_get_a_hint(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        apiVersion: kubespread.io/v1alpha1
        kind: Scenario
        steps:
        - set: {kind: Deployment, name: web, path: spec.template.spec.containers[0].image, value: x}
        """,
    )
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert "malformed YAML" in info.value.problems[0]
    assert 'quote a path such as path: "spec.template.spec.containers[0].image"' in info.value.problems[0]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90), ("5m", 300), ("1h30m", 5400), ("250ms", 0.25), (45, 45), ("1.5m", 90)],
)
def test_durations(text: object, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "5 minutes", "m5", -3, True, "1h 30m"])
def test_bad_durations(text: object) -> None:
    assert parse_duration(text) is None


def test_field_paths() -> None:
    assert parse_path("spec.template.spec.containers[0].image") == [
        "spec",
        "template",
        "spec",
        "containers",
        0,
        "image",
    ]
    assert parse_path("metadata.labels.app") == ["metadata", "labels", "app"]
    assert parse_path("spec..replicas") is None


def test_a_node_step_may_name_its_nodes_by_label_selector(tmp_path: Path) -> None:
    """``node: {selector: ..., action: ...}`` acts on every node the selector matches, in one
    step (a zone fails at once); a selector that does not parse, or one given with a name, is
    a located problem."""
    from kubespread.controllers import default_controllers
    from kubespread.sim.run import simulate

    (tmp_path / "zones.yaml").write_text(
        "---\n".join(
            f"apiVersion: v1\nkind: Node\nmetadata: {{name: {n}, labels: {{kubernetes.io/hostname: {n}, "
            f"topology.kubernetes.io/zone: {z}}}}}\n"
            "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n"
            for n, z in (("a1", "a"), ("a2", "a"), ("b1", "b"))
        )
    )
    path = write(
        tmp_path,
        """\
        apiVersion: kubespread.io/v1alpha1
        kind: Scenario
        cluster: [zones.yaml]
        steps:
        - node: {selector: "topology.kubernetes.io/zone=a", action: cordon}
        """,
    )
    scenario = load_scenario(path)
    assert scenario.steps[0].describe() == "cordon nodes topology.kubernetes.io/zone=a"
    result = simulate(scenario, controllers=default_controllers())
    assert result.sim is not None
    nodes = result.sim.cluster.nodes
    assert [n for n in sorted(nodes) if nodes[n].spec.unschedulable] == ["a1", "a2"]

    bad = write(
        tmp_path,
        """\
        apiVersion: kubespread.io/v1alpha1
        kind: Scenario
        cluster: [zones.yaml]
        steps:
        - node: {selector: "zone in (a", action: fail}
        - node: {selector: "zone=a", name: a1, action: fail}
        """,
        name="bad.yaml",
    )
    with pytest.raises(ScenarioError) as info:
        load_scenario(bad)
    problems = info.value.problems
    assert any(p.startswith(f"{bad}: steps[0].node.selector: invalid label selector") for p in problems)
    assert f"{bad}: steps[1].node: give name or selector, not both" in problems
    assert len(problems) == 2


def test_a_node_step_taints_and_untaints_nodes(tmp_path: Path) -> None:
    """``action: taint`` sets the step's taint on every node named or matched (a NoExecute
    one evicts the pods that do not tolerate it); ``untaint`` removes it by key (and effect);
    a bad taint is a located problem, as the API server words it."""
    from kubespread.controllers import default_controllers
    from kubespread.sim.run import simulate

    (tmp_path / "zones.yaml").write_text(
        "---\n".join(
            f"apiVersion: v1\nkind: Node\nmetadata: {{name: {n}, labels: {{kubernetes.io/hostname: {n}, "
            f"topology.kubernetes.io/zone: {z}}}}}\n"
            "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n"
            for n, z in (("a1", "a"), ("a2", "a"), ("b1", "b"))
        )
    )
    pods = "".join(
        f"- apply: {{apiVersion: v1, kind: Pod, metadata: {{name: p-{n}}},\n"
        f"          spec: {{nodeName: {n}, containers: [{{name: c, image: i}}]}}}}\n"
        for n in ("a1", "a2", "b1")
    )
    steps = textwrap.dedent(
        """\
        - node: {selector: "topology.kubernetes.io/zone=a", action: taint,
                 taint: {key: maintenance, value: "true", effect: NoExecute}}
        - node: {name: b1, action: taint, taint: {key: dedicated, value: gpu, effect: NoSchedule}}
        - node: {name: a1, action: untaint, taint: {key: maintenance, effect: NoExecute}}
        - advance: 60s
        """
    )
    head = "apiVersion: kubespread.io/v1alpha1\nkind: Scenario\ncluster: [zones.yaml]\nsteps:\n"
    path = write(tmp_path, head + pods + steps)
    scenario = load_scenario(path)
    assert (
        scenario.steps[3].describe() == "taint nodes topology.kubernetes.io/zone=a maintenance=true:NoExecute"
    )
    assert scenario.steps[5].describe() == "untaint node a1 maintenance:NoExecute-"
    result = simulate(scenario, controllers=default_controllers())
    assert result.sim is not None
    nodes = result.sim.cluster.nodes
    taints = {n: [(t.key, t.value, t.effect) for t in nodes[n].spec.taints] for n in sorted(nodes)}
    assert taints == {
        "a1": [],
        "a2": [("maintenance", "true", "NoExecute")],
        "b1": [("dedicated", "gpu", "NoSchedule")],
    }
    assert nodes["a2"].spec.taints[0].time_added  # a NoExecute taint says when it came
    # the bare pods on zone a did not tolerate the NoExecute taint: gone; b1's stays (NoSchedule)
    assert sorted(result.sim.cluster.pods) == ["default/p-b1"]

    bad = write(
        tmp_path,
        """\
        apiVersion: kubespread.io/v1alpha1
        kind: Scenario
        cluster: [zones.yaml]
        steps:
        - node: {name: a1, action: taint, taint: {key: "bad key", effect: Sometimes}}
        - node: {name: a1, action: untaint, taint: {value: x}}
        - node: {name: a1, action: cordon, taint: {key: x, effect: NoSchedule}}
        - node: {name: a1, action: taint}
        """,
        name="bad.yaml",
    )
    with pytest.raises(ScenarioError) as info:
        load_scenario(bad)
    problems = info.value.problems
    assert any(p.startswith(f'{bad}: steps[0].node.taint.key: Invalid value: "bad key"') for p in problems)
    assert any(
        p.startswith(f'{bad}: steps[0].node.taint.effect: Unsupported value: "Sometimes"') for p in problems
    )
    assert f"{bad}: steps[1].node.taint.value: unknown field (allowed: key, effect)" in problems
    assert f"{bad}: steps[1].node.taint.key: required" in problems
    assert f"{bad}: steps[2].node.taint: only with action taint or untaint" in problems
    assert any(p.startswith(f"{bad}: steps[3].node.taint: required") for p in problems)
    assert len(problems) == 6


def test_untainting_a_taint_the_node_does_not_have_is_a_located_error(tmp_path: Path) -> None:
    from kubespread.controllers import default_controllers
    from kubespread.sim.run import simulate

    (tmp_path / "n.yaml").write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: a1}\nstatus: {allocatable: {cpu: '1', pods: '10'}}\n"
    )
    path = write(
        tmp_path,
        """\
        apiVersion: kubespread.io/v1alpha1
        kind: Scenario
        cluster: [n.yaml]
        steps:
        - node: {name: a1, action: untaint, taint: {key: maintenance}}
        """,
    )
    with pytest.raises(ScenarioError) as info:
        simulate(load_scenario(path), controllers=default_controllers())
    assert info.value.problems == [f"{path}: steps[0].node: taint maintenance not found on node a1"]


def _deployment(name: str) -> str:
    return textwrap.dedent(f"""\
        apiVersion: apps/v1
        kind: Deployment
        metadata: {{name: {name}}}
        spec:
          replicas: 1
          selector: {{matchLabels: {{app: {name}}}}}
          template:
            metadata: {{labels: {{app: {name}}}}}
            spec: {{containers: [{{name: c, image: nginx}}]}}
        """)


def test_a_directory_is_read_for_its_own_files_only_and_only_under_the_scenarios_folder(
    tmp_path: Path,
) -> None:
    """`apply: ..` once made `validate` read every manifest under the parent folder (27 s, and
    90 s where /tmp held large JSON lists): a scenario reads a directory only under its own
    folder and, like `kubectl apply -f DIR`, only the directory's own files."""
    (tmp_path / "s" / "manifests" / "deep").mkdir(parents=True)
    (tmp_path / "s" / "manifests" / "top.yaml").write_text(_deployment("top"))
    (tmp_path / "s" / "manifests" / "deep" / "nested.yaml").write_text(_deployment("nested"))
    (tmp_path / "s" / "empty").mkdir()
    (tmp_path / "beside.yaml").write_text(_deployment("beside"))
    path = write(
        tmp_path / "s",
        """\
        apiVersion: kubespread.io/v1alpha1
        kind: Scenario
        metadata: {name: dirs}
        cluster: [nodes.yaml]
        steps:
        - apply: manifests
        - apply: ../beside.yaml
        """,
    )
    s = load_scenario(path)
    assert [o.ref() for o in s.steps[0].objects] == ["Deployment default/top"]
    assert [o.ref() for o in s.steps[1].objects] == ["Deployment default/beside"]  # a file: anywhere

    outside = write(
        tmp_path / "s",
        """\
        apiVersion: kubespread.io/v1alpha1
        kind: Scenario
        metadata: {name: dirs}
        cluster: [nodes.yaml]
        steps:
        - apply: ..
        - apply: empty
        """,
        name="outside.yaml",
    )
    with pytest.raises(ScenarioError) as e:
        load_scenario(outside)
    assert "steps[0].apply: directory .. is outside the scenario's folder" in str(e.value)
    assert "steps[1].apply: no *.yaml, *.yml or *.json files in directory empty" in str(e.value)


def test_a_path_the_file_system_cannot_take_is_a_located_error(tmp_path: Path) -> None:
    """A mutated `apply:` holding a whole list as one string raised ENAMETOOLONG from
    Path.exists() as a traceback; it is a located problem like a missing file."""
    long_name = "[{'apiVersion': 'v1', 'kind': 'Pod'}" + "x" * 300 + "]"
    path = write(
        tmp_path,
        f"""\
        apiVersion: kubespread.io/v1alpha1
        kind: Scenario
        metadata: {{name: long}}
        cluster: [nodes.yaml]
        steps:
        - apply: "{long_name}"
        - apply: missing.yaml
        """,
    )
    with pytest.raises(ScenarioError) as e:
        load_scenario(path)
    (first, second) = e.value.problems
    assert (
        first.startswith(f"{path}: steps[0].apply: cannot read [{{'apiVersion'")
        and "File name too long" in first
    )
    assert len(first) < 250
    assert second == f"{path}: steps[1].apply: no such file or directory: missing.yaml"
