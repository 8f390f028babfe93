"""NodeAffinity: the pod's nodeSelector and node affinity, plus the plugin's addedAffinity."""

from kubespread.scheduler.plugins.nodeaffinity.common import RequiredNodeAffinity, required_node_affinity
from kubespread.scheduler.plugins.nodeaffinity.plugin import NodeAffinity

__all__ = ["NodeAffinity", "RequiredNodeAffinity", "required_node_affinity"]
