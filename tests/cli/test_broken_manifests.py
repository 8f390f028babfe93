"""tests/data/broken: one realistic mistake per manifest (the file name says which), and the
exact ``field.path: message`` errors kube-apiserver would give, as kubespread.api.validation
gives them. The last few do not get as far as validation: they cannot be decoded or parsed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from k8s_messages import LABEL_KEY_3_PARTS, LABEL_VALUE, NAME_PART, SUBDOMAIN
from kubespread.api.errors import DecodeError
from kubespread.api.kinds import class_for
from kubespread.api.meta import KubeObject
from kubespread.api.validation import validate

BROKEN = Path(__file__).parents[1] / "data" / "broken"

NODE_TERM = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
POD_AFF = "spec.affinity.podAffinity"
ANTI_AFF = "spec.affinity.podAntiAffinity"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
TSC0 = "spec.topologySpreadConstraints[0]"
C0 = "spec.containers[0]"
NOT_STANDARD = 'Invalid value: "memroy": must be a standard resource type or fully qualified'
NOT_FOR_CONTAINERS = 'Invalid value: "memroy": must be a standard resource for containers'

EXPECTED: dict[str, list[str]] = {
    "pod-name-invalid.yaml": [f'metadata.name: Invalid value: "web_01": {SUBDOMAIN}'],
    "pod-label-value-invalid.yaml": [f'metadata.labels: Invalid value: "v1_": {LABEL_VALUE}'],
    "pod-label-key-invalid.yaml": [f'metadata.labels: Invalid value: "app/tier/x": {LABEL_KEY_3_PARTS}'],
    "container-name-invalid.yaml": [f'{C0}.name: Invalid value: "app.main": must not contain dots'],
    "container-dup-name.yaml": ['spec.containers[1].name: Duplicate value: "app"'],
    "container-image-missing.yaml": [f"{C0}.image: Required value"],
    "res-name-typo.yaml": [
        f"{C0}.resources.limits[memroy]: {NOT_STANDARD}",
        f"{C0}.resources.limits[memroy]: {NOT_FOR_CONTAINERS}",
        f"{C0}.resources.requests[memroy]: {NOT_STANDARD}",
        f"{C0}.resources.requests[memroy]: {NOT_FOR_CONTAINERS}",
    ],
    "res-negative.yaml": [
        f'{C0}.resources.requests[cpu]: Invalid value: "-100m": must be greater than or equal to 0'
    ],
    "res-requests-gt-limits.yaml": [
        f'{C0}.resources.requests: Invalid value: "1500m": must be less than or equal to cpu limit of 500m'
    ],
    "res-extended-not-integer.yaml": [
        f"{C0}.resources.limits[example.com/gpu]: Invalid value: 500m: must be an integer",
        f"{C0}.resources.requests[example.com/gpu]: Invalid value: 500m: must be an integer",
    ],
    "initcontainer-restartpolicy-never.yaml": [
        'spec.initContainers[0].restartPolicy: Unsupported value: "Never": supported values: "Always"'
    ],
    "tol-bad-operator.yaml": [
        'spec.tolerations[0].operator: Unsupported value: "In": supported values: "Equal", "Exists"'
    ],
    "tol-exists-with-value.yaml": [
        'spec.tolerations[0].operator: Invalid value: "infra": '
        "value must be empty when `operator` is 'Exists'"
    ],
    "tol-empty-key-equal.yaml": [
        'spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, '
        'which means "match all values and all keys"'
    ],
    "tol-seconds-without-noexecute.yaml": [
        "spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when "
        "`tolerationSeconds` is set"
    ],
    "tol-bad-effect.yaml": [
        'spec.tolerations[0].effect: Unsupported value: "NoExecution": supported values: "NoSchedule", '
        '"PreferNoSchedule", "NoExecute"'
    ],
    "nodeaff-no-terms.yaml": [f"{NODE_TERM}: Required value: must have at least one node selector term"],
    "nodeaff-operator-bogus.yaml": [
        f'{NODE_TERM}[0].matchExpressions[0].operator: Invalid value: "in": not a valid selector operator'
    ],
    "nodeaff-gt-two-values.yaml": [
        f"spec.affinity.nodeAffinity.{PREFERRED}[0].preference.matchExpressions[0].values: Required value: "
        "must be specified single value when `operator` is 'Lt' or 'Gt'"
    ],
    "nodeaff-exists-with-values.yaml": [
        f"{NODE_TERM}[0].matchExpressions[0].values: Forbidden: may not be specified when `operator` is "
        "'Exists' or 'DoesNotExist'"
    ],
    "podaff-topologykey-empty.yaml": [
        f"{POD_AFF}.{REQUIRED}[0].topologyKey: Required value: can not be empty",
        f'{POD_AFF}.{REQUIRED}[0].topologyKey: Invalid value: "": name part must be non-empty',
        f'{POD_AFF}.{REQUIRED}[0].topologyKey: Invalid value: "": {NAME_PART}',
    ],
    "podaff-topologykey-invalid.yaml": [
        f'{ANTI_AFF}.{REQUIRED}[0].topologyKey: Invalid value: "zone!": {NAME_PART}'
    ],
    "podaff-weight-out-of-range.yaml": [
        f"{ANTI_AFF}.{PREFERRED}[0].weight: Invalid value: 0: must be in the range 1-100"
    ],
    "podaff-namespace-invalid.yaml": [
        f'{POD_AFF}.{PREFERRED}[0].podAffinityTerm.namespace: Invalid value: "team-a.prod": '
        "must not contain dots"
    ],
    "podaff-mlk-without-selector.yaml": [
        f"{ANTI_AFF}.{REQUIRED}[0].matchLabelKeys: Forbidden: "
        "must not be specified when labelSelector is not set"
    ],
    "podaff-key-in-match-and-mismatch.yaml": [
        f'{POD_AFF}.{REQUIRED}[0].matchLabelKeys[0]: Invalid value: "version": exists in both matchLabelKeys '
        "and mismatchLabelKeys"
    ],
    "selector-in-without-values.yaml": [
        f"{TSC0}.labelSelector.matchExpressions[0].values: Required value: must be specified when `operator` "
        "is 'In' or 'NotIn'"
    ],
    "spread-maxskew-zero.yaml": [f"{TSC0}.maxSkew: Invalid value: 0: must be greater than zero"],
    "spread-mindomains-with-scheduleanyway.yaml": [
        f"{TSC0}.minDomains: Invalid value: 3: can only use minDomains if whenUnsatisfiable=DoNotSchedule, "
        "not ScheduleAnyway"
    ],
    "spread-when-unsatisfiable-bogus.yaml": [
        f'{TSC0}.whenUnsatisfiable: Unsupported value: "scheduleAnyway": supported values: "DoNotSchedule", '
        '"ScheduleAnyway"'
    ],
    "spread-topologykey-empty.yaml": [f"{TSC0}.topologyKey: Required value: can not be empty"],
    "spread-duplicate.yaml": [
        f'{TSC0}.{{topologyKey, whenUnsatisfiable}}: Duplicate value: "{{topology.kubernetes.io/zone, '
        'DoNotSchedule}"'
    ],
    "spread-policy-bogus.yaml": [
        f'{TSC0}.nodeAffinityPolicy: Unsupported value: "ignore": supported values: "Honor", "Ignore"'
    ],
    "spread-mlk-invalid-key.yaml": [
        f'{TSC0}.matchLabelKeys[0]: Invalid value: "pod template hash": {NAME_PART}'
    ],
    "node-taint-key-invalid.yaml": [
        f'metadata.taints[0].key: Invalid value: "example_com/dedicated": prefix part {SUBDOMAIN}'
    ],
    "node-taint-effect-missing.yaml": ["metadata.taints[0].effect: Required value"],
    "node-taint-duplicate.yaml": [
        'metadata.taints[1]: Duplicate value: {"key":"dedicated","value":"batch","effect":"NoSchedule"}: '
        "taints must be unique by key and effect pair"
    ],
    "deploy-replicas-negative.yaml": ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"],
    "deploy-selector-mismatch.yaml": [
        'spec.template.metadata.labels: Invalid value: {"app":"web"}: '
        "`selector` does not match template `labels`"
    ],
    "deploy-rollout-zero.yaml": [
        "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0"
    ],
    "deploy-maxunavailable-over-100.yaml": [
        'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "150%": must not be greater than 100%'
    ],
    "deploy-restartpolicy-never.yaml": [
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"'
    ],
    "deploy-template-label-invalid.yaml": [f'spec.template.labels: Invalid value: "-canary": {LABEL_VALUE}'],
    "job-restartpolicy-always.yaml": [
        'spec.template.spec.restartPolicy: Unsupported value: "Always": '
        'supported values: "OnFailure", "Never"'
    ],
    "priorityclass-system-prefix.yaml": [
        "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use "
        "only. error: system-important is not a known system priority class"
    ],
    "workloadspread-name-invalid.yaml": [f'metadata.name: Invalid value: "Web_Spread": {SUBDOMAIN}'],
}

# (exception, str(exception) or its start)
UNREADABLE: dict[str, tuple[type[Exception], str]] = {
    "decode-bad-quantity.yaml": (
        DecodeError,
        "spec.containers[0].resources.requests[cpu]: quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    ),
    "decode-string-for-integer.yaml": (
        DecodeError,
        "spec.topologySpreadConstraints[0].maxSkew: cannot unmarshal string into an integer field",
    ),
    "yaml-malformed.yaml": (yaml.YAMLError, "while parsing a flow mapping"),
}


def load(path: Path) -> KubeObject:
    """YAML, then the class for its apiVersion and kind, then the typed decoding."""
    data: Any = yaml.safe_load(path.read_text())
    cls = class_for(data["apiVersion"], data["kind"])
    assert cls is not None, f"{path.name}: kubespread does not model {data['kind']}"
    return cls.from_dict(data)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_broken_manifest_errors(name: str) -> None:
    errors = [str(e) for e in validate(load(BROKEN / name))]
    assert errors == EXPECTED[name]


@pytest.mark.parametrize("name", sorted(UNREADABLE))
def test_unreadable_manifest(name: str) -> None:
    exc_type, message = UNREADABLE[name]
    with pytest.raises(exc_type) as info:
        load(BROKEN / name)
    assert str(info.value).startswith(message)
    if name == "decode-bad-quantity.yaml":
        assert isinstance(info.value, DecodeError) and info.value.quantity


def test_every_file_is_covered_and_there_is_one_per_rule() -> None:
    files = {p.name for p in BROKEN.glob("*.yaml")}
    assert files == set(EXPECTED) | set(UNREADABLE)
    assert len(EXPECTED) >= 28
