"""The scheduler: kube-scheduler's framework and in-tree plugins over a ClusterState."""

from kubespread.scheduler.config import ConfigError, build_profile, default_profile
from kubespread.scheduler.framework import Code, CycleState, Status
from kubespread.scheduler.profile import Profile
from kubespread.scheduler.scheduler import Decision, Rejection, Scheduler, schedule_one

__all__ = [
    "Code",
    "ConfigError",
    "CycleState",
    "Decision",
    "Profile",
    "Rejection",
    "Scheduler",
    "Status",
    "build_profile",
    "default_profile",
    "schedule_one",
]
