"""Placements equal the real kube-scheduler's: node sampling, visiting order and the score
heap's pick, against ``Scheduler.SchedulePod`` of kube-scheduler v1.35.4 itself.

tests/data/realsched/ holds, per case, what ../shared/oracle/realsched (``k8sreal -parallelism
1``) placed; cases.json holds the parameters scripts/make_realsched_cases.py regenerates each
input from (shuffled node lists, uneven and unlabelled zones, a late zone, infeasible nodes,
spread, anti-affinity, preferred affinity, ties everywhere; 50 to 600 nodes; adaptive, 30%,
50% and 100% sampling; sequence and evaluate modes). Each input is rebuilt, checked against
its recorded digest, and answered through the conformance interface.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubespread.harness.evaluate import EvaluateError, evaluate
from shared_corpus import load_script

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "realsched"
CASES: list[dict[str, Any]] = json.loads((DATA / "cases.json").read_text())["cases"]


GENERATOR = load_script(ROOT / "scripts" / "make_realsched_cases.py")


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_every_pod_lands_where_kube_scheduler_puts_it(case: dict[str, Any]) -> None:
    doc = GENERATOR.generate(
        case["name"], case["seed"], case["nodes"], case["workload"], case["pct"], case["mode"], case["pods"]
    )
    assert GENERATOR.digest(doc) == case["inputSha256"], "the generator no longer writes the recorded input"
    expected: dict[str, str | None] = json.loads((DATA / case["placements"]).read_text())
    results = evaluate(doc)["results"]
    got = {r["pod"]: r.get("selectedNode") for r in results}
    wrong = {k: (got.get(k), v) for k, v in expected.items() if got.get(k) != v}
    assert not wrong, (
        f"{len(wrong)} of {len(expected)} differ (ours, kube's): {dict(list(wrong.items())[:5])}"
    )
    # the figures kube's ScheduleResult reports, averaged over the scheduled pods
    scheduled = [r for r in results if r["scheduled"]]
    evaluated = sum(r["sampling"]["processed"] for r in scheduled) / len(scheduled)
    feasible = sum(len(r["feasibleNodes"]) for r in scheduled) / len(scheduled)
    assert evaluated == pytest.approx(case["k8sreal"]["meanEvaluatedNodes"])
    assert feasible == pytest.approx(case["k8sreal"]["meanFeasibleNodes"])


def test_without_the_sampling_keys_the_answer_is_the_corpus_cycle_and_parallelism_is_said() -> None:
    case = CASES[0]
    doc = GENERATOR.generate(
        case["name"], case["seed"], case["nodes"], case["workload"], case["pct"], case["mode"], 5
    )
    corpus = dict(doc, config={"plugins": "default"})
    results = evaluate(corpus)["results"]
    assert all("sampling" not in r for r in results)
    assert all(len(r["nodes"]) == case["nodes"] for r in results)
    racing = dict(doc, config={"plugins": "default", "parallelism": 16})
    answer = evaluate(racing)
    assert "parallelism 16" in answer["note"] and "kubespread answers as parallelism 1" in answer["note"]
    assert [r["selectedNode"] for r in answer["results"]] == [
        r["selectedNode"] for r in evaluate(doc)["results"]
    ]
    with pytest.raises(EvaluateError, match=r"config\.percentageOfNodesToScore: must be an integer in"):
        evaluate(dict(doc, config={"percentageOfNodesToScore": 101}))
