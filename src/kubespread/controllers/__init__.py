"""Controllers: what reacts to the cluster over time, one module per controller.

Each is a :class:`kubespread.sim.engine.Controller`: ``start(sim)`` subscribes to the
cluster's events and ``sync(key)`` reconciles one object, changing the cluster only through
the simulation's create/update/delete/evict.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kubespread.sim.engine import Controller

__all__ = ["default_controllers"]


def default_controllers(*, affinity_grace_seconds: float | None = None) -> list[Controller]:
    """The controllers a simulation runs unless told otherwise, in the order they react.
    ``affinity_grace_seconds``: how long a broken RequiredDuringExecution pod affinity may last."""
    from kubespread.controllers.deployment import DeploymentController
    from kubespread.controllers.job import JobController
    from kubespread.controllers.nodelifecycle import NodeLifecycleController
    from kubespread.controllers.replicaset import ReplicaSetController
    from kubespread.controllers.required_during_execution import RequiredDuringExecutionController
    from kubespread.controllers.statefulset import StatefulSetController

    return [
        DeploymentController(),
        ReplicaSetController(),
        StatefulSetController(),
        JobController(),
        NodeLifecycleController(),
        RequiredDuringExecutionController()
        if affinity_grace_seconds is None
        else RequiredDuringExecutionController(affinity_grace_seconds=affinity_grace_seconds),
    ]
