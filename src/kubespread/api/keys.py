"""Well-known label, annotation and taint keys used across kubespread."""

from collections.abc import Mapping
from typing import Final

LABEL_HOSTNAME: Final = "kubernetes.io/hostname"
LABEL_ZONE: Final = "topology.kubernetes.io/zone"
LABEL_REGION: Final = "topology.kubernetes.io/region"
LABEL_ZONE_LEGACY: Final = "failure-domain.beta.kubernetes.io/zone"
LABEL_REGION_LEGACY: Final = "failure-domain.beta.kubernetes.io/region"
LABEL_OS: Final = "kubernetes.io/os"
LABEL_ARCH: Final = "kubernetes.io/arch"
LABEL_INSTANCE_TYPE: Final = "node.kubernetes.io/instance-type"
LABEL_POD_TEMPLATE_HASH: Final = "pod-template-hash"
LABEL_NAMESPACE_NAME: Final = "kubernetes.io/metadata.name"

ANNOTATION_POD_DELETION_COST: Final = "controller.kubernetes.io/pod-deletion-cost"
ANNOTATION_WORKLOADSPREAD: Final = "apps.kruise.io/matched-workloadspread"

TAINT_NOT_READY: Final = "node.kubernetes.io/not-ready"
TAINT_UNREACHABLE: Final = "node.kubernetes.io/unreachable"
TAINT_UNSCHEDULABLE: Final = "node.kubernetes.io/unschedulable"

DEFAULT_SCHEDULER_NAME: Final = "default-scheduler"
#: the schedulerName ``kubespread scheduler`` serves by default (its --scheduler-name)
KUBESPREAD_SCHEDULER_NAME: Final = "kubespread"
DEFAULT_NAMESPACE: Final = "default"


def zone_of(labels: Mapping[str, str]) -> str | None:
    """A node's zone from its labels: the GA key, else the deprecated beta one still seen on
    older clusters."""
    return labels.get(LABEL_ZONE) or labels.get(LABEL_ZONE_LEGACY)
