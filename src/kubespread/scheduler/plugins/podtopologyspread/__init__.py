"""PodTopologySpread: spread pods evenly over topology domains (KEP-895, kube-scheduler v1.35)."""

from kubespread.scheduler.plugins.podtopologyspread.plugin import PodTopologySpread

__all__ = ["PodTopologySpread"]
