"""A scenario whose ``cluster`` is a live cluster: ``{kubeconfig: FILE, context: NAME}`` is
parsed into ``Scenario.live`` (the command reads it; sim never connects), its path relative to
the scenario file; anything else in that mapping is a located problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubespread.sim.scenario import API_VERSION, LiveSource, ScenarioError, parse_scenario


def doc(cluster: object) -> dict[str, object]:
    return {"apiVersion": API_VERSION, "kind": "Scenario", "cluster": cluster, "steps": [{"advance": "1s"}]}


def test_a_live_cluster_is_named_not_read(tmp_path: Path) -> None:
    scenario = parse_scenario(
        doc({"kubeconfig": "kc.yaml", "context": "prod"}), source="s.yaml", base=tmp_path
    )
    assert scenario.live == LiveSource(tmp_path / "kc.yaml", "prod")
    assert scenario.cluster == []
    default = parse_scenario(doc({"context": "prod"}), source="s.yaml", base=tmp_path)
    assert default.live == LiveSource(None, "prod")


def test_files_and_objects_are_no_live_source(tmp_path: Path) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
    scenario = parse_scenario(doc([node]), source="s.yaml", base=tmp_path)
    assert scenario.live is None and len(scenario.cluster) == 1
    assert parse_scenario(doc(node), source="s.yaml", base=tmp_path).live is None


@pytest.mark.parametrize(
    ("cluster", "said"),
    [
        ({"kubeconfig": "kc.yaml", "server": "x"}, "s.yaml: cluster.server: unknown field"),
        ({"kubeconfig": 3}, "s.yaml: cluster.kubeconfig: must be a path"),
        ({"context": ""}, "s.yaml: cluster.context: must be a context name"),
    ],
)
def test_a_bad_live_source_is_located(tmp_path: Path, cluster: object, said: str) -> None:
    with pytest.raises(ScenarioError) as e:
        parse_scenario(doc(cluster), source="s.yaml", base=tmp_path)
    assert any(p.startswith(said) for p in e.value.problems), e.value.problems
