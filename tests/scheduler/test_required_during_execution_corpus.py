"""RequiredDuringExecution rules schedule exactly as IgnoredDuringExecution ones: every case of
shared/conformance that uses a required rule, rewritten so that the rules (of incoming and
existing pods alike) move partly or wholly to the RequiredDuringExecution form, must still get
kube-scheduler's recorded answer (compare.py's diff_case).

The rewrite keeps the meaning: required pod (anti-)affinity terms are ANDed, so the list is
split between the two forms; a node selector's terms are ORed, so it moves whole, except that
a selector of one term with several requirements (ANDed) is split requirement-wise between the
forms, which a node must then both satisfy."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from kubespread.harness.evaluate import evaluate
from shared_corpus import SHARED, load_script

IDE = "requiredDuringSchedulingIgnoredDuringExecution"
RDE = "requiredDuringSchedulingRequiredDuringExecution"
CORPUS = SHARED / "conformance"
CASES = sorted(c for c in (CORPUS / "cases").rglob("*.input.json") if IDE in c.read_text())


def _split_pod_terms(rule: dict[str, Any]) -> bool:
    terms = rule.get(IDE)
    if not terms:
        return False
    keep = len(terms) // 2  # one term moves whole; of two or more, the second half moves
    rule[RDE] = terms[keep:]
    if keep:
        rule[IDE] = terms[:keep]
    else:
        del rule[IDE]
    return True


def _split_node_selector(na: dict[str, Any]) -> bool:
    sel = na.get(IDE)
    if sel is None:
        return False
    terms = sel.get("nodeSelectorTerms") or []
    if len(terms) == 1:
        reqs = [("matchExpressions", r) for r in terms[0].get("matchExpressions") or []]
        reqs += [("matchFields", r) for r in terms[0].get("matchFields") or []]
        if len(reqs) >= 2:
            first: dict[str, list[Any]] = {}
            rest: dict[str, list[Any]] = {}
            for i, (kind, r) in enumerate(reqs):
                (first if i == 0 else rest).setdefault(kind, []).append(r)
            na[IDE] = {"nodeSelectorTerms": [first]}
            na[RDE] = {"nodeSelectorTerms": [rest]}
            return True
    na[RDE] = na.pop(IDE)
    return True


def _rewrite_pod(pod: dict[str, Any]) -> bool:
    aff = pod.get("spec", {}).get("affinity") or {}
    changed = False
    for kind in ("podAffinity", "podAntiAffinity"):
        if aff.get(kind):
            changed |= _split_pod_terms(aff[kind])
    if aff.get("nodeAffinity"):
        changed |= _split_node_selector(aff["nodeAffinity"])
    return changed


def rewritten(doc: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """The document with every pod's required rules moved as described; how many pods changed."""
    doc = copy.deepcopy(doc)
    changed = sum(_rewrite_pod(p) for key in ("pods", "incoming") for p in doc.get(key) or [])
    return doc, changed


def _expected(case: Path) -> dict:
    return json.loads(case.with_name(case.name.replace(".input.json", ".expected.json")).read_text())


def test_the_corpus_has_cases_with_required_rules() -> None:
    assert len(CASES) >= 100


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.name.removesuffix(".input.json") for c in CASES])
def test_rde_form_gets_kube_schedulers_answer(case: Path) -> None:
    doc, changed = rewritten(json.loads(case.read_text()))
    if not changed:
        pytest.skip("the required rule is outside the pods (scheduler configuration)")
    assert RDE in json.dumps(doc)
    problems = load_script(CORPUS / "compare.py").diff_case(_expected(case), evaluate(doc))
    assert not problems, "\n".join(problems)


def test_the_rewrite_splits_and_moves() -> None:
    """The rewrite itself: terms split, a one-term multi-requirement selector split."""
    pod = {
        "spec": {
            "affinity": {
                "podAntiAffinity": {IDE: [{"topologyKey": "a"}, {"topologyKey": "b"}, {"topologyKey": "c"}]},
                "podAffinity": {IDE: [{"topologyKey": "z"}]},
                "nodeAffinity": {
                    IDE: {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [{"key": "x", "operator": "Exists"}],
                                "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}],
                            }
                        ]
                    }
                },
            }
        }
    }
    assert _rewrite_pod(pod)
    aff = pod["spec"]["affinity"]
    assert aff["podAntiAffinity"] == {
        IDE: [{"topologyKey": "a"}],
        RDE: [{"topologyKey": "b"}, {"topologyKey": "c"}],
    }
    assert aff["podAffinity"] == {RDE: [{"topologyKey": "z"}]}
    assert aff["nodeAffinity"] == {
        IDE: {"nodeSelectorTerms": [{"matchExpressions": [{"key": "x", "operator": "Exists"}]}]},
        RDE: {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
            ]
        },
    }
