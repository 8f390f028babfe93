"""kubespread.api.validation.kruise: WorkloadSpread and CloneSet as Kruise's webhooks validate them.

Every case lists the errors expected, in order, as (field path, reason, message fragment)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from k8s_messages import SUBDOMAIN
from kubespread.api.kinds import class_for
from kubespread.api.kruise import CloneSet, WorkloadSpread
from kubespread.api.validation import UPDATE_VALIDATORS, VALIDATORS, validate, validate_update
from kubespread.api.validation.kruise import (
    UNSCHEDULABLE_RECOVERY_SECONDS,
    validate_clone_set,
    validate_workload_spread,
    validate_workload_spread_update,
)

INVALID, REQUIRED, FORBIDDEN = "FieldValueInvalid", "FieldValueRequired", "FieldValueForbidden"
NOT_SUPPORTED = "FieldValueNotSupported"
ZONE = "topology.kubernetes.io/zone"
S0, S1 = "spec.subsets[0]", "spec.subsets[1]"

Expected = list[tuple[str, str, str]]


# --- manifest builders ---------------------------------------------------------------------------------


def zone(z: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [z]}]}


def subset(name: str, z: str | None = None, **fields: Any) -> dict[str, Any]:
    s: dict[str, Any] = {"name": name}
    if z is not None:
        s["requiredNodeSelectorTerm"] = zone(z)
    s.update(fields)
    return s


def ws(
    *subsets: dict[str, Any],
    target: Any = "default",
    strategy: dict[str, Any] | None = None,
    name: str = "web-spread",
) -> dict[str, Any]:
    spec: dict[str, Any] = {"subsets": list(subsets)}
    if target == "default":
        spec["targetRef"] = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    elif target is not None:
        spec["targetRef"] = target
    if strategy is not None:
        spec["scheduleStrategy"] = strategy
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "WorkloadSpread",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def ref(api_version: str, kind: str, name: str = "web") -> dict[str, str]:
    return {"apiVersion": api_version, "kind": kind, "name": name}


def adaptive(seconds: int | None = 30, type_: str = "Adaptive") -> dict[str, Any]:
    a: dict[str, Any] = {"disableSimulationSchedule": False}
    if seconds is not None:
        a["rescheduleCriticalSeconds"] = seconds
    return {"type": type_, "adaptive": a}


def two(**first: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """subset-a (zone-a, with ``first``'s fields) and an unbounded subset-b (zone-b)."""
    return subset("subset-a", "zone-a", **first), subset("subset-b", "zone-b")


def cloneset(*, selector: Any = "default", labels: dict | None = None, **spec: Any) -> dict[str, Any]:
    s: dict[str, Any] = {
        "replicas": 3,
        "template": {
            "metadata": {"labels": {"app": "web"} if labels is None else labels},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
        },
    }
    if selector == "default":
        s["selector"] = {"matchLabels": {"app": "web"}}
    elif selector is not None:
        s["selector"] = selector
    s.update(spec)
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": s,
    }


def with_template_spec(m: dict[str, Any], **fields: Any) -> dict[str, Any]:
    m = copy.deepcopy(m)
    m["spec"]["template"]["spec"].update(fields)
    return m


# The proposal's example: subset-a in zone-a with at most 3 pods and a label patch, subset-b
# unbounded in zone-b, Adaptive with rescheduleCriticalSeconds 30.
PROPOSAL = ws(
    subset(
        "subset-a", "zone-a", maxReplicas=3, tolerations=[], patch={"metadata": {"labels": {"subset": "a"}}}
    ),
    subset("subset-b", "zone-b"),
    target=ref("apps/v1", "Deployment", "workload-xxx"),
    strategy=adaptive(30),
)

# (id, manifest, expected)
CASES: list[tuple[str, dict[str, Any], Expected]] = [
    # --- accepted --------------------------------------------------------------------------------------
    ("proposal-example", PROPOSAL, []),
    (
        "percent-20-30-unbounded",
        ws(subset("a", "zone-a", maxReplicas="20%"), subset("b", "zone-b", maxReplicas="30%"), subset("c")),
        [],
    ),
    ("percent-sum-exactly-100", ws(subset("a", maxReplicas="40%"), subset("b", maxReplicas="60%")), []),
    ("ints-zero-allowed", ws(subset("a", maxReplicas=0), subset("b", maxReplicas=5)), []),
    ("percent-zero-then-unbounded", ws(subset("a", maxReplicas="0%"), subset("b")), []),
    ("target-cloneset", ws(*two(), target=ref("apps.kruise.io/v1alpha1", "CloneSet")), []),
    ("target-replicaset", ws(*two(), target=ref("apps/v1", "ReplicaSet")), []),
    ("target-job", ws(*two(), target=ref("batch/v1", "Job")), []),
    ("target-statefulset-apps", ws(*two(maxReplicas=2), target=ref("apps/v1", "StatefulSet")), []),
    ("target-statefulset-kruise", ws(*two(), target=ref("apps.kruise.io/v1beta1", "StatefulSet")), []),
    ("single-subset-no-selector", ws(subset("only")), []),
    ("strategy-fixed", ws(*two(maxReplicas=3), strategy={"type": "Fixed"}), []),
    ("strategy-empty-type", ws(*two(), strategy={"type": ""}), []),
    ("reschedule-zero", ws(*two(), strategy=adaptive(0)), []),
    ("reschedule-at-limit-2-subsets", ws(*two(), strategy=adaptive(595)), []),
    ("reschedule-at-limit-3-subsets", ws(subset("a"), subset("b"), subset("c"), strategy=adaptive(297)), []),
    ("reschedule-unset", ws(*two(), strategy=adaptive(None)), []),
    # one subset: the last-subset rule and the window do not apply
    ("adaptive-one-subset", ws(subset("a", maxReplicas=3), strategy=adaptive(100_000)), []),
    (
        "preferred-terms",
        ws(
            subset(
                "a",
                preferredNodeSelectorTerms=[
                    {"weight": 100, "preference": zone("zone-a")},
                    # values of a preference are not checked, as for a pod's preferred affinity
                    {"weight": 1, "preference": zone("not a label value!")},
                ],
            )
        ),
        [],
    ),
    (
        "tolerations",
        ws(subset("a", tolerations=[{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}])),
        [],
    ),
    (
        "patch-deletes-a-label-and-uses-directives",
        ws(
            subset(
                "a",
                patch={
                    "metadata": {
                        "labels": {"old": None, "subset": "a"},
                        "annotations": {"$patch": "replace", "example.com/x": "1"},
                    },
                    "spec": {"containers": [{"name": "main", "resources": {"limits": {"cpu": "2"}}}]},
                },
            )
        ),
        [],
    ),
    # --- metadata --------------------------------------------------------------------------------------
    ("name", ws(*two(), name="Web_Spread"), [("metadata.name", INVALID, SUBDOMAIN)]),
    # --- targetRef -------------------------------------------------------------------------------------
    (
        "target-missing",
        ws(*two(), target=None),
        [("spec.targetRef", REQUIRED, "no targetRef defined in WorkloadSpread")],
    ),
    (
        "target-empty-name",
        ws(*two(), target=ref("apps/v1", "Deployment", "")),
        [("spec.targetRef", INVALID, "empty TargetReference is not valid for WorkloadSpread.")],
    ),
    (
        "target-empty-api-version",
        ws(*two(), target={"kind": "Deployment", "name": "web"}),
        [
            (
                "spec.targetRef",
                INVALID,
                '"apiVersion":"","kind":"Deployment","name":"web"}: empty TargetReference',
            )
        ],
    ),
    (
        "target-deployment-wrong-group",
        ws(*two(), target=ref("apps.kruise.io/v1alpha1", "Deployment")),
        [("spec.targetRef", INVALID, "TargetReference is not valid for Deployment.")],
    ),
    (
        "target-cloneset-wrong-group",
        ws(*two(), target=ref("apps/v1", "CloneSet")),
        [("spec.targetRef", INVALID, "TargetReference is not valid for CloneSet.")],
    ),
    (
        "target-job-wrong-group",
        ws(*two(), target=ref("apps/v1", "Job")),
        [("spec.targetRef", INVALID, "TargetReference is not valid for Job.")],
    ),
    (
        "target-replicaset-extensions",
        ws(*two(), target=ref("extensions/v1beta1", "ReplicaSet")),
        [("spec.targetRef", INVALID, "TargetReference is not valid for ReplicaSet.")],
    ),
    (
        "target-statefulset-batch",
        ws(*two(), target=ref("batch/v1", "StatefulSet")),
        [("spec.targetRef", INVALID, "TargetReference is not valid for StatefulSet.")],
    ),
    (
        "target-api-version-unparsable",
        ws(*two(), target=ref("apps/v1/x", "Deployment")),
        [("spec.targetRef", INVALID, "TargetReference is not valid for Deployment.")],
    ),
    (
        "target-kind-not-permitted",
        ws(*two(), target=ref("apps/v1", "DaemonSet")),
        [
            (
                "spec.targetRef",
                INVALID,
                '"kind":"DaemonSet","name":"web"}: TargetReference\'s GroupKind is not permitted.',
            )
        ],
    ),
    # --- subsets: names and selectors ------------------------------------------------------------------
    ("no-subsets", ws(), [("spec.subsets", REQUIRED, "subsets number must >= 1 in WorkloadSpread")]),
    ("subset-name-empty", ws(subset("", "zone-a")), [(f"{S0}.name", INVALID, 'Invalid value: ""')]),
    (
        "subset-names-duplicated",
        ws(subset("a", "zone-a"), subset("a", "zone-b")),
        [(f"{S1}.name", INVALID, 'Invalid value: "a": duplicated subset name a')],
    ),
    (
        "required-term-bad-operator",
        ws(
            subset(
                "a",
                requiredNodeSelectorTerm={
                    "matchExpressions": [{"key": ZONE, "operator": "Near", "values": ["a"]}]
                },
            )
        ),
        [
            (
                f"{S0}.requiredNodeSelectorTerm.matchExpressions[0].operator",
                INVALID,
                "not a valid selector operator",
            )
        ],
    ),
    (
        "required-term-values-checked",
        ws(subset("a", "zone a")),
        [(f"{S0}.requiredNodeSelectorTerm.matchExpressions[0].values[0]", INVALID, "a valid label must be")],
    ),
    (
        "required-term-in-without-values",
        ws(subset("a", requiredNodeSelectorTerm={"matchExpressions": [{"key": ZONE, "operator": "In"}]})),
        [(f"{S0}.requiredNodeSelectorTerm.matchExpressions[0].values", REQUIRED, "must be specified when")],
    ),
    (
        "preferred-weight-0",
        ws(subset("a", preferredNodeSelectorTerms=[{"weight": 0, "preference": zone("zone-a")}])),
        [(f"{S0}.preferredNodeSelectorTerms[0].weight", INVALID, "must be in the range 1-100")],
    ),
    (
        "preferred-weight-101-and-bad-operator",
        ws(
            subset(
                "a",
                preferredNodeSelectorTerms=[
                    {"weight": 10, "preference": zone("zone-a")},
                    {"weight": 101, "preference": {"matchExpressions": [{"key": ZONE, "operator": "Near"}]}},
                ],
            )
        ),
        [
            (f"{S0}.preferredNodeSelectorTerms[1].weight", INVALID, "must be in the range 1-100"),
            (
                f"{S0}.preferredNodeSelectorTerms[1].preference.matchExpressions[0].operator",
                INVALID,
                "not a valid selector operator",
            ),
        ],
    ),
    (
        "toleration-exists-with-value",
        ws(subset("a", tolerations=[{"key": "spot", "operator": "Exists", "value": "yes"}])),
        [(f"{S0}.tolerations[0].operator", INVALID, "value must be empty when `operator` is 'Exists'")],
    ),
    (
        "toleration-bad-effect",
        ws(subset("a", tolerations=[{"key": "spot", "operator": "Exists", "effect": "NoRun"}])),
        [(f"{S0}.tolerations[0].effect", NOT_SUPPORTED, '"NoRun": supported values')],
    ),
    # --- subsets: patch --------------------------------------------------------------------------------
    (
        "patch-not-an-object",
        ws(subset("a", patch=["metadata"])),
        [(f"{S0}.patch", INVALID, '["metadata"]: must be an object')],
    ),
    (
        "patch-string",
        ws(subset("a", patch="metadata: {}")),
        [(f"{S0}.patch", INVALID, "must be an object")],
    ),
    (
        "patch-metadata-not-an-object",
        ws(subset("a", patch={"metadata": "x"})),
        [(f"{S0}.patch.metadata", INVALID, "must be an object")],
    ),
    (
        "patch-label-key",
        ws(subset("a", patch={"metadata": {"labels": {"bad key": "x"}}})),
        [(f"{S0}.patch.metadata.labels", INVALID, '"bad key": name part must consist of')],
    ),
    (
        "patch-label-value",
        ws(subset("a", patch={"metadata": {"labels": {"subset": "a b"}}})),
        [(f"{S0}.patch.metadata.labels", INVALID, '"a b": a valid label must be')],
    ),
    (
        "patch-label-value-not-a-string",
        ws(subset("a", patch={"metadata": {"labels": {"replicas": 3}}})),
        [(f"{S0}.patch.metadata.labels[replicas]", INVALID, "must be a string")],
    ),
    (
        "patch-annotations-not-a-map",
        ws(subset("a", patch={"metadata": {"annotations": ["x"]}})),
        [(f"{S0}.patch.metadata.annotations", INVALID, "must be a map")],
    ),
    (
        "patch-annotation-key",
        ws(subset("a", patch={"metadata": {"annotations": {"a/b/c": "x"}}})),
        [(f"{S0}.patch.metadata.annotations", INVALID, '"a/b/c": a qualified name must consist of')],
    ),
    # --- subsets: maxReplicas --------------------------------------------------------------------------
    (
        "max-replicas-negative",
        ws(subset("a", maxReplicas=-1), subset("b")),
        [(f"{S0}.maxReplicas", INVALID, "Invalid value: -1: maxReplicas is not valid for subset")],
    ),
    (
        "max-replicas-not-a-percent",
        ws(subset("a", maxReplicas="3"), subset("b")),
        [
            (
                f"{S0}.maxReplicas",
                INVALID,
                '"3": maxReplicas is not valid for subset: a valid percent string must',
            )
        ],
    ),
    (
        "max-replicas-negative-percent",
        ws(subset("a", maxReplicas="-5%"), subset("b")),
        [(f"{S0}.maxReplicas", INVALID, '"-5%": maxReplicas is not valid for subset')],
    ),
    (
        "max-replicas-mixed-types",
        ws(subset("a", maxReplicas=3), subset("b", maxReplicas="50%")),
        [(f"{S1}.maxReplicas", INVALID, '"50%": the maxReplicas type of all subsets must be the same')],
    ),
    (
        "max-replicas-mixed-types-unbounded-between",
        ws(subset("a", maxReplicas="50%"), subset("b"), subset("c", maxReplicas=2)),
        [("spec.subsets[2].maxReplicas", INVALID, "Invalid value: 2: the maxReplicas type of all subsets")],
    ),
    (
        "max-replicas-percent-over-100",
        ws(subset("a", maxReplicas="60%"), subset("b", maxReplicas="50%")),
        [(f"{S1}.maxReplicas", INVALID, "the sum of all subset's maxReplicas exceeds 100% is not permitted")],
    ),
    (
        "max-replicas-percent-over-100-reported-where-first-exceeded",
        ws(subset("a", maxReplicas="101%"), subset("b", maxReplicas="0%"), subset("c")),
        [(f"{S0}.maxReplicas", INVALID, '"101%": the sum of all subset')],
    ),
    (
        "max-replicas-percent-under-100-last-bounded",
        ws(subset("a", maxReplicas="20%"), subset("b", maxReplicas="30%")),
        [
            (
                f"{S0}.maxReplicas",
                INVALID,
                '"20%": maxReplicas sum of all subsets must equal 100% when type is',
            )
        ],
    ),
    (
        "max-replicas-percent-under-100-first-unbounded",
        ws(subset("a"), subset("b", maxReplicas="30%")),
        [
            (
                f"{S0}.maxReplicas",
                INVALID,
                "Invalid value: null: maxReplicas sum of all subsets must equal 100%",
            )
        ],
    ),
    (
        "max-replicas-statefulset-percent",
        ws(subset("a", maxReplicas="50%"), subset("b"), target=ref("apps/v1", "StatefulSet")),
        [(f"{S0}.maxReplicas", INVALID, "the maxReplicas type must be Int for StatefulSet")],
    ),
    (
        "max-replicas-checks-stop-at-the-first-but-other-fields-go-on",
        ws(subset("a", maxReplicas=-1), subset("a", maxReplicas=-2)),
        [
            (f"{S0}.maxReplicas", INVALID, "maxReplicas is not valid for subset"),
            (f"{S1}.name", INVALID, "duplicated subset name a"),
        ],
    ),
    # --- scheduleStrategy ------------------------------------------------------------------------------
    (
        "strategy-type-unsupported",
        ws(*two(), strategy={"type": "Random"}),
        [("spec.scheduleStrategy.type", NOT_SUPPORTED, '"Random": supported values: "Fixed", "Adaptive"')],
    ),
    (
        "adaptive-needs-type-adaptive",
        ws(*two(), strategy=adaptive(30, type_="Fixed")),
        [
            (
                "spec.scheduleStrategy.type",
                INVALID,
                "the scheduleStrategy's type must be adaptive when using adaptive",
            )
        ],
    ),
    (
        "adaptive-without-type",
        ws(*two(), strategy={"adaptive": {"rescheduleCriticalSeconds": 10}}),
        [
            (
                "spec.scheduleStrategy.type",
                INVALID,
                "Invalid value: 10: the scheduleStrategy's type must be adaptive",
            )
        ],
    ),
    (
        "adaptive-last-subset-bounded",
        ws(subset("a", maxReplicas=3), subset("b", maxReplicas=2), strategy=adaptive(30)),
        [
            (
                "spec.scheduleStrategy.adaptive",
                INVALID,
                "the last subset's maxReplicas must be not specified when using adaptive",
            )
        ],
    ),
    (
        "reschedule-negative",
        ws(*two(), strategy=adaptive(-1)),
        [
            (
                "spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds",
                INVALID,
                "Invalid value: -1: rescheduleCriticalSeconds < 0 or rescheduleCriticalSeconds > 595 is not "
                "permitted",
            )
        ],
    ),
    (
        "reschedule-over-limit-2-subsets",
        ws(*two(), strategy=adaptive(596)),
        [("spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds", INVALID, "> 595 is not permitted")],
    ),
    (
        "reschedule-over-limit-3-subsets",
        ws(subset("a"), subset("b"), subset("c"), strategy=adaptive(298)),
        [("spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds", INVALID, "> 297 is not permitted")],
    ),
    # --- CloneSet --------------------------------------------------------------------------------------
    ("cloneset-valid", cloneset(), []),
    ("cloneset-replicas-unset", cloneset(replicas=None), []),
    ("cloneset-name", {**cloneset(), "metadata": {"name": "cs."}}, [("metadata.name", INVALID, SUBDOMAIN)]),
    (
        "cloneset-replicas-negative",
        cloneset(replicas=-1),
        [("spec.replicas", INVALID, "must be greater than or equal to 0")],
    ),
    (
        "cloneset-selector-missing",
        cloneset(selector=None),
        [
            ("spec.selector", REQUIRED, "Required value"),
            ("spec.template.metadata.labels", INVALID, "`selector` does not match template `labels`"),
        ],
    ),
    (
        "cloneset-selector-empty",
        cloneset(selector={}),
        [("spec.selector", INVALID, "Invalid value: {}: empty selector is invalid for cloneset")],
    ),
    (
        "cloneset-selector-does-not-match",
        cloneset(labels={"app": "api"}),
        [
            (
                "spec.template.metadata.labels",
                INVALID,
                '{"app":"api"}: `selector` does not match template `labels`',
            )
        ],
    ),
    (
        "cloneset-selector-bad-operator",
        cloneset(selector={"matchExpressions": [{"key": "app", "operator": "Near"}]}),
        [
            ("spec.selector.matchExpressions[0].operator", INVALID, "not a valid selector operator"),
            ("spec.selector", INVALID, '{"matchExpressions":[{"key":"app","operator":"Near"}]}'),
        ],
    ),
    (
        "cloneset-template-validated",
        with_template_spec(cloneset(), containers=[{"name": "app"}]),
        [("spec.template.spec.containers[0].image", REQUIRED, "Required value")],
    ),
    (
        "cloneset-restart-policy",
        with_template_spec(cloneset(), restartPolicy="Never"),
        [("spec.template.spec.restartPolicy", NOT_SUPPORTED, '"Never": supported values: "Always"')],
    ),
    (
        "cloneset-active-deadline",
        with_template_spec(cloneset(), activeDeadlineSeconds=60),
        [
            (
                "spec.template.spec.activeDeadlineSeconds",
                FORBIDDEN,
                "activeDeadlineSeconds in cloneset is not Supported",
            )
        ],
    ),
]


def _errors(manifest: dict[str, Any]) -> list[tuple[str, str, str]]:
    cls = class_for(manifest["apiVersion"], manifest["kind"])
    assert cls is not None
    return [(e.field, e.reason, e.body()) for e in validate(cls.from_dict(manifest))]


@pytest.mark.parametrize(("manifest", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rule(manifest: dict[str, Any], expected: Expected) -> None:
    got = _errors(manifest)
    assert [(f, r) for f, r, _ in got] == [(f, r) for f, r, _ in expected], got
    for (_, _, body), (_, _, fragment) in zip(got, expected, strict=True):
        assert fragment in body


def test_case_ids_are_unique() -> None:
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids))


def test_validate_dispatches_to_the_kruise_validators() -> None:
    assert VALIDATORS[WorkloadSpread] is validate_workload_spread
    assert VALIDATORS[CloneSet] is validate_clone_set
    bad = WorkloadSpread.from_dict(ws(subset("a", maxReplicas=-1)))
    assert [str(e) for e in validate(bad)] == [str(e) for e in validate_workload_spread(bad)] != []
    cs = CloneSet.from_dict(cloneset(replicas=-1))
    assert [str(e) for e in validate(cs)] == [str(e) for e in validate_clone_set(cs)] != []


def test_the_reschedule_limit_follows_the_unschedulable_window() -> None:
    """Every subset but the last must be tried within the window, less 5 s of reconcile time."""
    for n in (2, 3, 7):
        limit = (UNSCHEDULABLE_RECOVERY_SECONDS - 5) // (n - 1)
        subsets = [subset(f"s{i}") for i in range(n)]
        assert _errors(ws(*subsets, strategy=adaptive(limit))) == []
        [(field, _, body)] = _errors(ws(*subsets, strategy=adaptive(limit + 1)))
        assert field == "spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds"
        assert f"> {limit} is not permitted" in body


def test_errors_are_reported_in_webhook_order() -> None:
    """metadata, targetRef, each subset in turn, then scheduleStrategy."""
    manifest = ws(
        subset("a", maxReplicas="50%", tolerations=[{"operator": "Equal", "value": "x"}]),
        subset("a", maxReplicas=3),
        target=ref("apps/v1", "CronJob"),
        strategy={"type": "Sometimes"},
        name="Bad",
    )
    assert [f for f, _, _ in _errors(manifest)] == [
        "metadata.name",
        "spec.targetRef",
        f"{S0}.tolerations[0].operator",
        f"{S1}.name",
        f"{S1}.maxReplicas",
        "spec.scheduleStrategy.type",
    ]


def test_validation_does_not_change_the_object() -> None:
    obj = WorkloadSpread.from_dict(PROPOSAL)
    before = copy.deepcopy(obj.to_dict())
    validate(obj)
    assert obj.to_dict() == before == PROPOSAL


# --- WorkloadSpread updates: spec.targetRef is immutable ---------------------------------------------------


def _update_errors(target: dict[str, str] | None, old_target: dict[str, str] | None) -> list[str]:
    new = WorkloadSpread.from_dict(ws(*two(), target=target))
    old = WorkloadSpread.from_dict(ws(*two(), target=old_target))
    return [str(e) for e in validate_workload_spread_update(new, old)]


DEPLOYMENT_WEB = ref("apps/v1", "Deployment")


@pytest.mark.parametrize(
    "changed",
    [
        # OpenKruise's TestValidateWorkloadSpreadTargetRefUpdate: group, kind, name
        ref("apps.kruise.io/v1alpha1", "Deployment"),
        ref("apps/v1", "ReplicaSet"),
        ref("apps/v1", "Deployment", "deploy-1"),
        ref("v1", "Deployment"),  # the core group
    ],
    ids=["group", "kind", "name", "core-group"],
)
def test_an_update_may_not_change_the_target_refs_group_kind_or_name(changed: dict[str, str]) -> None:
    value = json.dumps(changed, separators=(",", ":"))
    assert _update_errors(changed, DEPLOYMENT_WEB) == [
        f"spec.targetRef: Invalid value: {value}: change TargetReference is not permitted for WorkloadSpread"
    ]


@pytest.mark.parametrize(
    ("target", "old_target"),
    [
        (DEPLOYMENT_WEB, DEPLOYMENT_WEB),
        (ref("apps/v1beta2", "Deployment"), DEPLOYMENT_WEB),  # the version is not compared
        (None, DEPLOYMENT_WEB),  # removed: the create rules refuse it (Required)
        (DEPLOYMENT_WEB, None),  # set where there was none
        (ref("a/b/c", "Deployment"), ref("", "Deployment")),  # unparsable counts as the core group
    ],
)
def test_an_update_keeping_the_target_refs_group_kind_and_name_passes(
    target: dict[str, str] | None, old_target: dict[str, str] | None
) -> None:
    assert _update_errors(target, old_target) == []


def test_validate_update_adds_the_update_rules_to_the_new_objects_own() -> None:
    assert UPDATE_VALIDATORS[WorkloadSpread] is validate_workload_spread_update
    old = WorkloadSpread.from_dict(ws(*two()))
    new = WorkloadSpread.from_dict(ws(subset("a", maxReplicas=-1), target=ref("apps/v1", "ReplicaSet", "rs")))
    assert [e.field for e in validate_update(new, old)] == ["spec.subsets[0].maxReplicas", "spec.targetRef"]
    assert [str(e) for e in validate_update(new, new)] == [str(e) for e in validate(new)]
    # kinds without update rules, or an old object of another kind: validate alone
    cs = CloneSet.from_dict(cloneset(replicas=-1))
    assert [str(e) for e in validate_update(cs, cs)] == [str(e) for e in validate(cs)]
    assert [str(e) for e in validate_update(new, cs)] == [str(e) for e in validate(new)]
