"""``settle_errors``: what stops a run. A stored pod (a dump's) is judged only in what a run
reads of it, as creating it would judge those fields; everything else is judged whole."""

from __future__ import annotations

from typing import Any

import pytest

from kubespread.admission.apiserver import creation_errors, settle_errors
from kubespread.api.core import Pod

STORED = {"uid": "0b0e6f5e-1111-4a4a-9c9c-000000000001", "creationTimestamp": "2026-11-06T17:40:31Z"}


def _pod(spec: dict[str, Any], container: dict[str, Any] | None = None, **meta: Any) -> Pod:
    c = {"name": "app", "image": "nginx", **(container or {})}
    return Pod.from_dict(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}, **meta},
            "spec": {"containers": [c], **spec},
        }
    )


READ = {
    "spread": {
        "topologySpreadConstraints": [{"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "Maybe"}]
    },
    "anti-affinity": {
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "topologyKey": "",
                        "labelSelector": {"matchExpressions": [{"key": "a", "operator": "Near"}]},
                    }
                ]
            }
        }
    },
    "tolerations": {"tolerations": [{"key": "k", "operator": "Exists", "value": "v", "effect": "Sometimes"}]},
    "nodeSelector": {"nodeSelector": {"bad key!": "x"}},
    "preemptionPolicy": {"preemptionPolicy": "Always"},
}


@pytest.mark.parametrize("spec", READ.values(), ids=READ.keys())
def test_what_a_run_reads_of_a_stored_pod_is_judged_as_a_create_judges_it(spec: dict[str, Any]) -> None:
    stored = _pod(spec, **STORED)
    errors = [str(e) for e in settle_errors(stored)]
    assert errors
    assert errors == [str(e) for e in creation_errors(stored)]


def test_negative_requests_of_a_stored_pod_are_judged() -> None:
    stored = _pod({}, {"resources": {"requests": {"cpu": "-1"}}}, **STORED)
    assert [str(e) for e in settle_errors(stored)] == [str(e) for e in creation_errors(stored)] != []


def test_what_no_command_reads_of_a_stored_pod_is_left_to_the_api_server() -> None:
    stored = _pod({"restartPolicy": "Sometimes"}, {"name": "Not_A_Label"}, **STORED)
    assert creation_errors(stored)
    assert settle_errors(stored) == []
    new = _pod({"restartPolicy": "Sometimes"}, {"name": "Not_A_Label"})
    assert [str(e) for e in settle_errors(new)] == [str(e) for e in creation_errors(new)] != []


def test_one_owners_pods_judged_once_say_what_each_pod_judged_alone_says() -> None:
    """StoredPodChecks: a ReplicaSet's replicas with the same constraints are judged once, and
    every pod still gets exactly validate_stored_pod's errors (its own name's too); one whose
    fields differ, even only in how a quantity is written, is judged anew."""
    from kubespread.api.validation.pod import StoredPodChecks, validate_stored_pod

    owner = {
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "rs-1"}]
    }
    other = {
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "db", "uid": "rs-2"}]
    }
    bad_spread = READ["spread"]
    pods = [
        _pod(bad_spread, **STORED, **owner),
        _pod(bad_spread, **STORED, **owner),
        _pod(bad_spread, **{**STORED, "name": ""}, **owner),  # the name is the pod's own
        _pod({}, {"resources": {"requests": {"cpu": "-1"}}}, **STORED, **owner),
        _pod({}, {"resources": {"requests": {"cpu": "-1000m"}}}, **STORED, **owner),  # same amount
        _pod({}, {"resources": {"requests": {"cpu": "-1000m"}}}, **STORED, **owner),
        _pod(READ["tolerations"], **STORED, **other),
        _pod({}, **STORED, **other),
        _pod(READ["nodeSelector"], **STORED),  # no owner
    ]
    checks = StoredPodChecks()
    got = [[str(e) for e in checks(p)] for p in pods]
    assert got == [[str(e) for e in validate_stored_pod(p)] for p in pods]
    assert all(got[i] for i in (0, 2, 3, 4, 6, 8)) and not got[7]
