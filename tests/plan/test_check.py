"""``plan.check``: each check on real manifests (tests/data/check), the rollout deadlock's
suggested strategy proven by rolling out with it, and the policy file's located errors."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from kubespread.api.apps import Deployment
from kubespread.io import load
from kubespread.plan.check import (
    ADMISSION,
    CAPACITY,
    ERROR,
    FAILURE,
    PLACEMENT,
    ROLLOUT,
    WARNING,
    CheckError,
    CheckRequest,
    CheckResult,
    check,
    short_reason,
)
from kubespread.plan.policy import CheckPolicy, PolicyError, parse_policy

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "check"
NODES_2 = ROOT / "examples" / "scenarios" / "nodes-2.yaml"
NODES_3_ZONES = ROOT / "examples" / "scenarios" / "nodes-3-zones.yaml"


def _objects(*paths: Path) -> tuple:
    manifests = load([str(p) for p in paths])
    assert not manifests.errors, manifests.errors
    return tuple(manifests.objects)


def run(cluster: list[Path], changes: list[Path], **kw) -> CheckResult:
    return check(CheckRequest(_objects(*cluster), _objects(*changes), **kw))


def failing(result: CheckResult, name: str) -> list:
    return [f for f in result.findings if f.check == name and result.fails(f)]


def test_changes_that_pass_give_one_passing_case_per_check_and_object() -> None:
    result = run([NODES_3_ZONES], [DATA / "spread.yaml", DATA / "spread-pdb.yaml"])
    assert not result.failed and result.findings == []
    assert {(c.check, c.object) for c in result.cases} == {
        (ADMISSION, "Deployment default/spread"),
        (ADMISSION, "PodDisruptionBudget default/spread"),
        (PLACEMENT, "Deployment default/spread"),
        (FAILURE, "Deployment default/spread"),
        (FAILURE, "PodDisruptionBudget default/spread"),
    }
    case = next(c for c in result.cases if c.check == PLACEMENT)
    assert (case.file, case.line) == (str(DATA / "spread.yaml"), 1)


def test_a_rollout_deadlocked_by_required_anti_affinity_is_described_and_a_strategy_suggested() -> None:
    result = run([NODES_2, DATA / "anti-v1.yaml"], [DATA / "anti-v2.yaml"], domains="kubernetes.io/hostname")
    assert result.failed
    (stuck,) = failing(result, ROLLOUT)
    assert stuck.object == "Deployment default/anti" and stuck.severity == ERROR
    assert "stuck at step 1 of 2: new pod default/anti-" in stuck.message
    assert "didn't match pod anti-affinity rules" in stuck.message
    assert "old pods cannot go because maxUnavailable is 0" in stuck.message
    s = stuck.suggestion
    assert s is not None and s.max_unavailable >= 1 and s.trials >= 1
    assert f"maxSurge {s.max_surge}, maxUnavailable {s.max_unavailable} completes" in stuck.message


def test_the_suggested_strategy_completes_when_the_change_uses_it() -> None:
    """The proof: the same change with the suggested maxSurge/maxUnavailable rolls through,
    in a run of its own."""
    cluster = _objects(NODES_2, DATA / "anti-v1.yaml")
    (change,) = _objects(DATA / "anti-v2.yaml")
    first = check(CheckRequest(cluster, (change,), domains="kubernetes.io/hostname"))
    (stuck,) = failing(first, ROLLOUT)
    s = stuck.suggestion
    assert s is not None
    fixed = change.obj.copy()
    assert isinstance(fixed, Deployment)
    fixed.spec.strategy = Deployment.from_dict(
        {
            "spec": {
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": s.max_surge, "maxUnavailable": s.max_unavailable},
                }
            }
        }
    ).spec.strategy
    second = check(CheckRequest(cluster, (replace(change, obj=fixed),), domains="kubernetes.io/hostname"))
    rollout = [c for c in second.cases if c.check == ROLLOUT]
    assert len(rollout) == 1 and rollout[0].findings == ()
    assert failing(second, PLACEMENT) == []


def test_no_search_when_the_policy_turns_it_off() -> None:
    policy = CheckPolicy(rollout=replace(CheckPolicy().rollout, suggest=False))
    result = run([NODES_2, DATA / "anti-v1.yaml"], [DATA / "anti-v2.yaml"], policy=policy)
    assert [f.message for f in result.findings if f.check == FAILURE] == [
        "no node carries the label topology.kubernetes.io/zone: no domain loss was simulated"
    ]
    (stuck,) = failing(result, ROLLOUT)
    assert stuck.suggestion is None and "completes" not in stuck.message


def test_a_zone_loss_that_breaks_a_budget_fails_at_the_budget() -> None:
    result = run([NODES_3_ZONES], [DATA / "ha.yaml", DATA / "ha-pdb.yaml"])
    (broken,) = failing(result, FAILURE)
    assert broken.object == "PodDisruptionBudget default/ha"
    assert broken.message == (
        "losing topology.kubernetes.io/zone=zone-a, zone-b or zone-c leaves 4 healthy pod(s) where the "
        "budget needs 5"
    )
    assert broken.file == str(DATA / "ha-pdb.yaml") and broken.line == 1
    # the replicas the loss leaves pending are warnings (they fail only a strict gate)
    pending = [f for f in result.findings if f.check == FAILURE and f.severity == WARNING]
    assert {f.object for f in pending} == {"Deployment default/ha"}


def test_pending_after_a_loss_fails_only_a_strict_gate() -> None:
    policy = CheckPolicy(failure=replace(CheckPolicy().failure, min_available=None))
    lenient = run([NODES_3_ZONES], [DATA / "ha.yaml"], policy=policy)
    assert not lenient.failed and any(f.severity == WARNING for f in lenient.findings)
    strict = run([NODES_3_ZONES], [DATA / "ha.yaml"], policy=policy, strict=True)
    assert strict.failed


def test_the_policy_minimum_share_of_a_changed_workload() -> None:
    policy = CheckPolicy(failure=replace(CheckPolicy().failure, min_available="80%"))
    result = run([NODES_3_ZONES], [DATA / "ha.yaml"], policy=policy)
    short = failing(result, FAILURE)
    assert short and all(
        "leaves 4 of 6 replica(s) running; the policy's minAvailable 80% needs 5" in f.message for f in short
    )


def test_a_deployment_that_can_create_no_pod_fails_placement() -> None:
    result = run([NODES_3_ZONES], [DATA / "typo-priority.yaml"])
    (f,) = failing(result, PLACEMENT)
    assert f.object == "Deployment default/urgent"
    assert "cannot create pods" in f.message and "no PriorityClass with name hgih-priority" in f.message


def test_an_invalid_change_fails_admission_at_the_field_and_is_not_applied() -> None:
    result = run([NODES_3_ZONES], [DATA / "bad-skew.yaml"])
    (f,) = failing(result, ADMISSION)
    assert f.line == 12 and "maxSkew: Invalid value: 0" in f.message
    assert [c.check for c in result.cases] == [ADMISSION]  # nothing else to judge


def test_a_statefulset_rollout_that_completes_passes() -> None:
    result = run([NODES_3_ZONES, DATA / "db-v1.yaml"], [DATA / "db-v2.yaml"])
    rollout = [c for c in result.cases if c.check == ROLLOUT]
    assert len(rollout) == 1 and rollout[0].findings == ()
    assert not result.failed


def test_capacity_headroom_when_the_policy_asks() -> None:
    policy = CheckPolicy(capacity=replace(CheckPolicy().capacity, enabled=True, min_spare_replicas=1))
    result = run([NODES_3_ZONES], [DATA / "ha.yaml"], policy=policy)
    (f,) = failing(result, CAPACITY)  # one per node already: a seventh fits nowhere
    assert "only 0 more replica(s) fit; the policy's minSpareReplicas is 1" in f.message
    roomy = run([NODES_3_ZONES], [DATA / "spread.yaml"], policy=policy)
    assert [c.findings for c in roomy.cases if c.check == CAPACITY] == [()]


def test_a_cluster_that_does_not_settle_is_an_input_error() -> None:
    with pytest.raises(CheckError) as e:
        run([NODES_3_ZONES, DATA / "bad-skew.yaml"], [DATA / "spread.yaml"])
    assert any("bad-skew.yaml:12" in p for p in e.value.problems)


def test_the_json_document() -> None:
    doc = run([NODES_3_ZONES], [DATA / "typo-priority.yaml"]).to_dict()
    assert doc["passed"] is False
    assert doc["summary"] == {"cases": 3, "failed": 1, "errors": 1, "warnings": 0}
    assert set(doc["findings"][0]) == {"check", "severity", "object", "file", "line", "message", "suggestion"}


def test_short_reason_keeps_the_filters_verdict() -> None:
    message = (
        "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules. no new claims to "
        "deallocate, preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    )
    assert short_reason(message) == "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules"


# ------------------------------------------------------------------ the policy file


def test_a_policy_file_sets_every_check() -> None:
    text = """\
apiVersion: kubespread.io/v1alpha1
kind: CheckPolicy
metadata: {name: gate}
checks:
  admission: {enabled: false}
  placement: {scheduleAnyway: ignore}
  rollout: {suggest: false, maxTrials: 3, timeoutSeconds: 120}
  failureSurvival: {domains: kubernetes.io/hostname, afterSeconds: 300, minAvailable: 50%}
  capacity: {minSpareReplicas: 2}
strict: true
"""
    p = parse_policy(text, "gate.yaml")
    assert (p.admission, p.placement.schedule_anyway, p.strict, p.name) == (False, "ignore", True, "gate")
    assert (p.rollout.suggest, p.rollout.max_trials, p.rollout.timeout_seconds) == (False, 3, 120.0)
    assert (p.failure.domains, p.failure.after_seconds, p.failure.min_available) == (
        "kubernetes.io/hostname",
        300.0,
        "50%",
    )
    assert (p.capacity.enabled, p.capacity.min_spare_replicas) == (True, 2)  # its section turns it on
    assert parse_policy("apiVersion: kubespread.io/v1alpha1\nkind: CheckPolicy\n") == replace(
        CheckPolicy(), source="<policy>"
    )


def test_a_policy_file_is_validated_strictly_with_every_problem_located() -> None:
    text = """\
apiVersion: kubespread.io/v1alpha1
kind: CheckPolicy
checks:
  rollout:
    suggets: true
    maxTrials: 0
  failureSurvival:
    minAvailable: 150%
  placement: {enabled: "yes"}
  zones: {}
"""
    with pytest.raises(PolicyError) as e:
        parse_policy(text, "gate.yaml")
    assert e.value.problems == [
        'gate.yaml:5: checks.rollout.suggets: unknown field "suggets" (known: enabled, suggest, maxTrials, '
        "timeoutSeconds)",
        "gate.yaml:6: checks.rollout.maxTrials: must be at least 1, got 0",
        "gate.yaml:8: checks.failureSurvival.minAvailable: must be a count or a percentage from 0% to "
        "100% (\"50%\"), got '150%'",
        "gate.yaml:9: checks.placement.enabled: must be true or false, got a string",
        'gate.yaml:10: checks.zones: unknown field "zones" (known: admission, placement, rollout, '
        "failureSurvival, capacity)",
    ]


def test_a_policy_of_another_kind_is_refused() -> None:
    with pytest.raises(PolicyError) as e:
        parse_policy("apiVersion: v1\nkind: ConfigMap\n", "p.yaml")
    assert e.value.problems == [
        "p.yaml:1: apiVersion: must be kubespread.io/v1alpha1, got 'v1'",
        "p.yaml:2: kind: must be CheckPolicy, got 'ConfigMap'",
    ]


def test_a_change_asking_for_more_pods_than_a_run_holds_is_refused_before_anything_runs(
    tmp_path: Path,
) -> None:
    huge = tmp_path / "huge.yaml"
    huge.write_text((DATA / "spread.yaml").read_text().replace("replicas: 3", "replicas: 1000000000"))
    with pytest.raises(CheckError) as e:
        run([NODES_3_ZONES], [huge])
    assert e.value.problems == [
        f"{huge}:5: Deployment default/spread: spec.replicas: Invalid value: 1000000000: more pods than the "
        "run may hold (--max-pods 200,000)"
    ]
