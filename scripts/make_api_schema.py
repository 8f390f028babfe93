"""Regenerate src/kubespread/api/schema.json: the field names and value types of every kind
kubespread reads, for strict decoding (unknown and duplicate fields, int32/int64 widths).

The Kubernetes kinds come from a real kube-apiserver's OpenAPI v3 documents (``/openapi/v3/
api/v1``, ``/apis/apps/v1``, ...), so the field set is the server's, including every field
kubespread does not model. OpenKruise's kinds follow its CRDs (apps.kruise.io v1alpha1), and
KubeSchedulerConfiguration follows kube-scheduler's config/v1 types; both are written below,
since no API server serves them.

Run from the repository root, with an API server (see ../shared/apiserver)::

    .venv/bin/python scripts/make_api_schema.py --kubeconfig STATE/kubeconfig
    .venv/bin/python scripts/make_api_schema.py --openapi-dir DIR   # saved documents

The output is sorted and stable: regenerating against the same server gives the same bytes.
"""

from __future__ import annotations

import argparse
import json
import ssl
import urllib.request
from pathlib import Path
from typing import Any

import yaml

GROUPS = ["api/v1", "apis/apps/v1", "apis/batch/v1", "apis/scheduling.k8s.io/v1", "apis/policy/v1"]
#: kind → OpenAPI definition, for the kinds kubespread loads
KINDS = {
    "Pod": "io.k8s.api.core.v1.Pod",
    "Node": "io.k8s.api.core.v1.Node",
    "Namespace": "io.k8s.api.core.v1.Namespace",
    "Service": "io.k8s.api.core.v1.Service",
    "ReplicationController": "io.k8s.api.core.v1.ReplicationController",
    "Deployment": "io.k8s.api.apps.v1.Deployment",
    "ReplicaSet": "io.k8s.api.apps.v1.ReplicaSet",
    "StatefulSet": "io.k8s.api.apps.v1.StatefulSet",
    "DaemonSet": "io.k8s.api.apps.v1.DaemonSet",
    "Job": "io.k8s.api.batch.v1.Job",
    "PriorityClass": "io.k8s.api.scheduling.v1.PriorityClass",
    "PodDisruptionBudget": "io.k8s.api.policy.v1.PodDisruptionBudget",
}
PREFIXES = {"io.k8s.api.": "", "io.k8s.apimachinery.pkg.apis.": "", "io.k8s.apimachinery.pkg.": ""}
SPECIAL = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity": "quantity",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "intstr",
    "io.k8s.apimachinery.pkg.runtime.RawExtension": "any",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1": "any",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": "string",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": "string",
}


def short(name: str) -> str:
    for prefix, repl in PREFIXES.items():
        if name.startswith(prefix):
            return repl + name[len(prefix) :]
    return name


class Converter:
    def __init__(self, defs: dict[str, Any]) -> None:
        self.defs = defs
        self.types: dict[str, dict[str, str]] = {}

    @staticmethod
    def props(s: dict[str, Any]) -> dict[str, Any]:
        return s.get("SchemaProps", s)

    def ref(self, s: dict[str, Any]) -> str:
        """The compact reference of one schema: a primitive, ``[]X``, ``{}X`` or a type name."""
        target = s.get("$ref") or self.props(s).get("$ref")
        p = self.props(s)
        if target is None and p.get("allOf"):
            target = p["allOf"][0].get("$ref") or self.props(p["allOf"][0]).get("$ref")
        if target:
            return self.named(target.rsplit("/", 1)[-1])
        if (s.get("ArbitraryKeys") or {}).get("x-kubernetes-preserve-unknown-fields"):
            return "any"
        t = p.get("type")
        if t == "integer":
            return "int32" if p.get("format") == "int32" else "int64"
        if t == "number":
            return "number"
        if t in ("string", "boolean"):
            return t
        if t == "array":
            return "[]" + self.ref(p["items"])
        if t == "object":
            if p.get("additionalProperties"):
                return "{}" + self.ref(p["additionalProperties"])
            return "any"
        return "any"

    def named(self, name: str) -> str:
        if name in SPECIAL:
            return SPECIAL[name]
        key = short(name)
        if key in self.types:
            return key
        p = self.props(self.defs[name])
        if not p.get("properties"):
            return self.ref(self.defs[name])
        self.types[key] = {}  # placeholder: recursive types (JSONSchemaProps) refer back
        self.types[key] = {f: self.ref(v) for f, v in sorted(p["properties"].items())}
        return key


# --- kinds no API server serves: OpenKruise's CRDs and kube-scheduler's configuration ---------

EXTRA_TYPES: dict[str, dict[str, str]] = {
    "kruise.v1alpha1.WorkloadSpread": {
        "apiVersion": "string",
        "kind": "string",
        "metadata": "meta.v1.ObjectMeta",
        "spec": "kruise.v1alpha1.WorkloadSpreadSpec",
        "status": "any",
    },
    "kruise.v1alpha1.WorkloadSpreadSpec": {
        "targetRef": "kruise.v1alpha1.TargetReference",
        "targetFilter": "kruise.v1alpha1.TargetFilter",
        "subsets": "[]kruise.v1alpha1.WorkloadSpreadSubset",
        "scheduleStrategy": "kruise.v1alpha1.WorkloadSpreadScheduleStrategy",
    },
    "kruise.v1alpha1.TargetReference": {"apiVersion": "string", "kind": "string", "name": "string"},
    "kruise.v1alpha1.TargetFilter": {"selector": "meta.v1.LabelSelector", "replicasPathList": "[]string"},
    "kruise.v1alpha1.WorkloadSpreadSubset": {
        "name": "string",
        "requiredNodeSelectorTerm": "core.v1.NodeSelectorTerm",
        "preferredNodeSelectorTerms": "[]core.v1.PreferredSchedulingTerm",
        "tolerations": "[]core.v1.Toleration",
        "maxReplicas": "intstr",
        "patch": "any",
    },
    "kruise.v1alpha1.WorkloadSpreadScheduleStrategy": {
        "type": "string",
        "adaptive": "kruise.v1alpha1.AdaptiveWorkloadSpreadStrategy",
    },
    "kruise.v1alpha1.AdaptiveWorkloadSpreadStrategy": {
        "disableSimulationSchedule": "boolean",
        "rescheduleCriticalSeconds": "int32",
    },
    # the CloneSet CRD keeps its pod template's unknown fields (x-kubernetes-preserve-unknown-
    # fields), but Kruise's webhook decodes it as a core PodTemplateSpec: checked as one here
    "kruise.v1alpha1.CloneSet": {
        "apiVersion": "string",
        "kind": "string",
        "metadata": "meta.v1.ObjectMeta",
        "spec": "kruise.v1alpha1.CloneSetSpec",
        "status": "any",
    },
    "kruise.v1alpha1.CloneSetSpec": {
        "replicas": "int32",
        "selector": "meta.v1.LabelSelector",
        "template": "core.v1.PodTemplateSpec",
        "volumeClaimTemplates": "[]any",
        "scaleStrategy": "any",
        "updateStrategy": "any",
        "revisionHistoryLimit": "int32",
        "minReadySeconds": "int32",
        "lifecycle": "any",
    },
    "config.v1.KubeSchedulerConfiguration": {
        "apiVersion": "string",
        "kind": "string",
        "parallelism": "int32",
        "leaderElection": "any",
        "clientConnection": "any",
        "healthzBindAddress": "string",
        "metricsBindAddress": "string",
        "enableProfiling": "boolean",
        "enableContentionProfiling": "boolean",
        "percentageOfNodesToScore": "int32",
        "podInitialBackoffSeconds": "int64",
        "podMaxBackoffSeconds": "int64",
        "profiles": "[]config.v1.KubeSchedulerProfile",
        "extenders": "[]any",
        "delayCacheUntilActive": "boolean",
    },
    "config.v1.KubeSchedulerProfile": {
        "schedulerName": "string",
        "percentageOfNodesToScore": "int32",
        "plugins": "config.v1.Plugins",
        "pluginConfig": "[]config.v1.PluginConfig",
    },
    "config.v1.Plugins": {
        p: "config.v1.PluginSet"
        for p in [
            "preEnqueue",
            "queueSort",
            "preFilter",
            "filter",
            "postFilter",
            "preScore",
            "score",
            "reserve",
            "permit",
            "preBind",
            "bind",
            "postBind",
            "multiPoint",
        ]
    },
    "config.v1.PluginSet": {"enabled": "[]config.v1.Plugin", "disabled": "[]config.v1.Plugin"},
    "config.v1.Plugin": {"name": "string", "weight": "int32"},
    # args are a RawExtension: checked by scheduler.config against the plugin's args type
    "config.v1.PluginConfig": {"name": "string", "args": "any"},
    "config.v1.PodTopologySpreadArgs": {
        "apiVersion": "string",
        "kind": "string",
        "defaultConstraints": "[]core.v1.TopologySpreadConstraint",
        "defaultingType": "string",
    },
    "config.v1.InterPodAffinityArgs": {
        "apiVersion": "string",
        "kind": "string",
        "hardPodAffinityWeight": "int32",
        "ignorePreferredTermsOfExistingPods": "boolean",
        # kubespread's extensions (the inter-pod affinity design's co-existing with daemons)
        "daemonCoexistence": "boolean",
        "daemonNamespaces": "[]string",
    },
    "config.v1.NodeAffinityArgs": {
        "apiVersion": "string",
        "kind": "string",
        "addedAffinity": "core.v1.NodeAffinity",
    },
    "config.v1.NodeResourcesFitArgs": {
        "apiVersion": "string",
        "kind": "string",
        "ignoredResources": "[]string",
        "ignoredResourceGroups": "[]string",
        "scoringStrategy": "config.v1.ScoringStrategy",
    },
    "config.v1.NodeResourcesBalancedAllocationArgs": {
        "apiVersion": "string",
        "kind": "string",
        "resources": "[]config.v1.ResourceSpec",
    },
    "config.v1.DefaultPreemptionArgs": {
        "apiVersion": "string",
        "kind": "string",
        "minCandidateNodesPercentage": "int32",
        "minCandidateNodesAbsolute": "int32",
    },
    "config.v1.ScoringStrategy": {
        "type": "string",
        "resources": "[]config.v1.ResourceSpec",
        "requestedToCapacityRatio": "config.v1.RequestedToCapacityRatioParam",
    },
    "config.v1.ResourceSpec": {"name": "string", "weight": "int64"},
    "config.v1.RequestedToCapacityRatioParam": {"shape": "[]config.v1.UtilizationShapePoint"},
    "config.v1.UtilizationShapePoint": {"utilization": "int32", "score": "int32"},
}
#: fields kubespread reads beyond the API: the inter-pod affinity design's
#: RequiredDuringExecution terms (../shared/spec), which the simulator enforces by eviction
EXTENSIONS: dict[str, dict[str, str]] = {
    "core.v1.NodeAffinity": {"requiredDuringSchedulingRequiredDuringExecution": "core.v1.NodeSelector"},
    "core.v1.PodAffinity": {"requiredDuringSchedulingRequiredDuringExecution": "[]core.v1.PodAffinityTerm"},
    "core.v1.PodAntiAffinity": {
        "requiredDuringSchedulingRequiredDuringExecution": "[]core.v1.PodAffinityTerm"
    },
}
EXTRA_KINDS = {
    "WorkloadSpread": "kruise.v1alpha1.WorkloadSpread",
    "CloneSet": "kruise.v1alpha1.CloneSet",
    "KubeSchedulerConfiguration": "config.v1.KubeSchedulerConfiguration",
    "PodTopologySpreadArgs": "config.v1.PodTopologySpreadArgs",
    "InterPodAffinityArgs": "config.v1.InterPodAffinityArgs",
    "NodeAffinityArgs": "config.v1.NodeAffinityArgs",
    "NodeResourcesFitArgs": "config.v1.NodeResourcesFitArgs",
    "NodeResourcesBalancedAllocationArgs": "config.v1.NodeResourcesBalancedAllocationArgs",
    "DefaultPreemptionArgs": "config.v1.DefaultPreemptionArgs",
}


def fetch(kubeconfig: Path) -> dict[str, Any]:
    cfg = yaml.safe_load(kubeconfig.read_text())
    cluster = cfg["clusters"][0]["cluster"]
    user = cfg["users"][0]["user"]
    ca = cluster.get("certificate-authority")
    ctx = ssl.create_default_context(cafile=str(kubeconfig.parent / ca) if ca else None)
    if ca is None:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    defs: dict[str, Any] = {}
    for group in GROUPS:
        req = urllib.request.Request(
            f"{cluster['server']}/openapi/v3/{group}",
            headers={"Authorization": f"Bearer {user['token']}", "Accept": "application/json"},
        )
        with urllib.request.urlopen(req, context=ctx) as resp:
            defs.update(json.load(resp)["components"]["schemas"])
    return defs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--kubeconfig", type=Path, help="read the OpenAPI documents from this API server")
    src.add_argument("--openapi-dir", type=Path, help="read saved OpenAPI v3 documents (*.json)")
    ap.add_argument("--out", type=Path, default=Path("src/kubespread/api/schema.json"))
    args = ap.parse_args()
    if args.kubeconfig:
        defs = fetch(args.kubeconfig)
    else:
        defs = {}
        for f in sorted(args.openapi_dir.glob("*.json")):
            defs.update(json.loads(f.read_text())["components"]["schemas"])
    conv = Converter(defs)
    kinds = {kind: conv.named(name) for kind, name in KINDS.items()}
    types = dict(conv.types)
    types.update(EXTRA_TYPES)
    for name, more in EXTENSIONS.items():
        types[name] = dict(sorted({**types[name], **more}.items()))
    kinds.update(EXTRA_KINDS)
    missing = {r.lstrip("[]{}") for t in types.values() for r in t.values()} - set(types)
    missing -= {"string", "boolean", "int32", "int64", "number", "quantity", "intstr", "any"}
    if missing:
        raise SystemExit(f"unresolved types: {sorted(missing)}")
    doc = {"kinds": dict(sorted(kinds.items())), "types": dict(sorted(types.items()))}
    args.out.write_text(json.dumps(doc, indent=0, sort_keys=False, separators=(",", ":")) + "\n")
    print(f"{args.out}: {len(kinds)} kinds, {len(types)} types, {args.out.stat().st_size} bytes")


if __name__ == "__main__":
    main()
