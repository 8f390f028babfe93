"""The WorkloadSpread CustomResourceDefinition that ``kubespread manifests`` prints: kubespread's
own OpenAPI schema, written from :mod:`kubespread.api.kruise` (in a cluster that already runs
OpenKruise, keep Kruise's CRD and leave this one out).

Apart from :mod:`kubespread.live.manifests` because the schema is its own concern (the shape
of one API type), not how the components are deployed.
"""

from __future__ import annotations

import copy
from typing import Any, Final

__all__ = ["CRD_NAME", "KRUISE_GROUP", "definition"]

CRD_NAME: Final = "workloadspreads.apps.kruise.io"
KRUISE_GROUP: Final = "apps.kruise.io"

_STRING: Final = {"type": "string"}
_INT32: Final = {"type": "integer", "format": "int32"}
_INT64: Final = {"type": "integer", "format": "int64"}
_STRING_MAP: Final = {"type": "object", "additionalProperties": {"type": "string"}}


def _obj(properties: dict[str, Any], required: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    out.update(extra)
    return out


def _array(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


def _node_selector_term() -> dict[str, Any]:
    requirement = _obj(
        {"key": dict(_STRING), "operator": dict(_STRING), "values": _array(dict(_STRING))},
        ["key", "operator"],
    )
    return _obj({"matchExpressions": _array(requirement), "matchFields": _array(requirement)})


def _toleration() -> dict[str, Any]:
    return _obj(
        {
            "key": dict(_STRING),
            "operator": dict(_STRING),
            "value": dict(_STRING),
            "effect": dict(_STRING),
            "tolerationSeconds": dict(_INT64),
        }
    )


def _subset(
    required: str = "requiredNodeSelectorTerm", preferred: str = "preferredNodeSelectorTerms"
) -> dict[str, Any]:
    """A subset's schema; v1beta1 names the two selectors requiredNodeSelector and
    preferredNodeSelector (kruise#2466)."""
    return _obj(
        {
            "name": dict(_STRING),
            required: _node_selector_term(),
            preferred: _array(
                _obj({"weight": dict(_INT32), "preference": _node_selector_term()}, ["weight", "preference"])
            ),
            "tolerations": _array(_toleration()),
            # a strategic merge patch of the pod: any shape a pod has
            "patch": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "maxReplicas": {
                "anyOf": [{"type": "integer"}, {"type": "string"}],
                "x-kubernetes-int-or-string": True,
            },
        },
        ["name"],
    )


def _spec(subset: dict[str, Any] | None = None) -> dict[str, Any]:
    target = _obj(
        {"apiVersion": dict(_STRING), "kind": dict(_STRING), "name": dict(_STRING)},
        ["apiVersion", "kind", "name"],
    )
    strategy = _obj(
        {
            "type": {"type": "string", "enum": ["Fixed", "Adaptive"]},
            "adaptive": _obj(
                {"rescheduleCriticalSeconds": dict(_INT32), "disableSimulationSchedule": {"type": "boolean"}}
            ),
        }
    )
    requirement = _obj(
        {"key": dict(_STRING), "operator": dict(_STRING), "values": _array(dict(_STRING))},
        ["key", "operator"],
    )
    selector = _obj({"matchLabels": dict(_STRING_MAP), "matchExpressions": _array(requirement)})
    # which of the target's pods are managed, and where the workload keeps their number
    target_filter = _obj({"selector": selector, "replicasPathList": _array(dict(_STRING))})
    return _obj(
        {
            "targetRef": target,
            "targetFilter": target_filter,
            "subsets": _array(subset or _subset()),
            "scheduleStrategy": strategy,
        },
        ["targetRef", "subsets"],
    )


def _status() -> dict[str, Any]:
    # nothing required: the webhook writes only the fields that differ from their defaults
    condition = _obj(
        {
            "type": dict(_STRING),
            "status": dict(_STRING),
            "lastTransitionTime": dict(_STRING),
            "reason": dict(_STRING),
            "message": dict(_STRING),
        }
    )
    unscheduled = _obj(
        {"unschedulable": {"type": "boolean"}, "unscheduledTime": dict(_STRING), "failedCount": dict(_INT32)}
    )
    subset_status = _obj(
        {
            "name": dict(_STRING),
            "missingReplicas": dict(_INT32),
            "replicas": dict(_INT32),
            "creatingPods": dict(_STRING_MAP),
            "deletingPods": dict(_STRING_MAP),
            "subsetUnscheduledStatus": unscheduled,
            "conditions": _array(condition),
        }
    )
    return _obj({"observedGeneration": dict(_INT64), "subsetStatuses": _array(subset_status)})


def definition(metadata: dict[str, Any], converter: dict[str, Any] | None = None) -> dict[str, Any]:
    """The CustomResourceDefinition of apps.kruise.io WorkloadSpread with this ``metadata``:
    v1alpha1 (stored), and v1beta1 as well when ``converter`` (the webhook's clientConfig) can
    convert between them (/convert-workloadspreads)."""
    schema = _obj({"apiVersion": dict(_STRING), "kind": dict(_STRING), "metadata": {"type": "object"}})
    schema["properties"].update({"spec": _spec(), "status": _status()})
    crd: dict[str, Any] = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": metadata,
        "spec": {
            "group": KRUISE_GROUP,
            "names": {
                "kind": "WorkloadSpread",
                "listKind": "WorkloadSpreadList",
                "plural": "workloadspreads",
                "singular": "workloadspread",
                "shortNames": ["ws"],
            },
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1alpha1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": [
                        {"name": "Workload-Kind", "type": "string", "jsonPath": ".spec.targetRef.kind"},
                        {"name": "Workload-Name", "type": "string", "jsonPath": ".spec.targetRef.name"},
                        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                    ],
                }
            ],
        },
    }
    if converter is not None:
        beta = copy.deepcopy(crd["spec"]["versions"][0])
        beta_schema = beta["schema"]["openAPIV3Schema"]
        beta_schema["properties"]["spec"] = _spec(_subset("requiredNodeSelector", "preferredNodeSelector"))
        beta.update({"name": "v1beta1", "storage": False})
        crd["spec"]["versions"].append(beta)
        crd["spec"]["conversion"] = {
            "strategy": "Webhook",
            "webhook": {"clientConfig": converter, "conversionReviewVersions": ["v1"]},
        }
    return crd
