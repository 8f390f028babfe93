"""Controllers: what reacts to the cluster over time, one module per controller.

Each is a :class:`~kubespread.controllers.host.Controller`: ``start(host)`` subscribes to
the cluster's events and ``sync(key)`` reconciles one object, changing the cluster only
through the :class:`~kubespread.controllers.host.ControllerHost`'s verbs
(create/update/delete/evict), so one controller runs on the simulation and on a live cluster.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kubespread.controllers.host import Cancellable, Controller, ControllerHost

if TYPE_CHECKING:
    from kubespread.admission.chain import AdmissionChain
    from kubespread.controllers.workloadspread.options import WorkloadSpreadOptions

__all__ = [
    "Cancellable",
    "Controller",
    "ControllerHost",
    "default_admission_chain",
    "default_controllers",
]


def default_controllers(
    *,
    affinity_grace_seconds: float | None = None,
    workloadspread: WorkloadSpreadOptions | None = None,
) -> list[Controller]:
    """The controllers a simulation runs unless told otherwise, in the order they react.
    ``affinity_grace_seconds``: how long a broken RequiredDuringExecution pod affinity may last;
    ``workloadspread``: which WorkloadSpread behaviour to follow (the proposal's by default)."""
    from kubespread.controllers.cloneset import CloneSetController
    from kubespread.controllers.deployment import DeploymentController
    from kubespread.controllers.disruption import DisruptionController
    from kubespread.controllers.job import JobController
    from kubespread.controllers.nodelifecycle import NodeLifecycleController
    from kubespread.controllers.replicaset import ReplicaSetController
    from kubespread.controllers.required_during_execution import RequiredDuringExecutionController
    from kubespread.controllers.statefulset import StatefulSetController
    from kubespread.controllers.workloadspread import WorkloadSpreadController

    return [
        WorkloadSpreadController(workloadspread),
        DeploymentController(),
        ReplicaSetController(),
        StatefulSetController(),
        JobController(),
        CloneSetController(),
        DisruptionController(),
        NodeLifecycleController(),
        RequiredDuringExecutionController()
        if affinity_grace_seconds is None
        else RequiredDuringExecutionController(affinity_grace_seconds=affinity_grace_seconds),
    ]


def default_admission_chain(host: ControllerHost, controllers: Sequence[Controller]) -> AdmissionChain:
    """kube-apiserver's plugins, then the webhooks of the host's ``controllers``: the
    WorkloadSpread webhook (with its controller's options) when a WorkloadSpread controller runs."""
    from kubespread.admission.chain import DEFAULT_CHAIN
    from kubespread.controllers.workloadspread import (
        SimulationClient,
        WorkloadSpreadController,
        WorkloadSpreadWebhook,
    )

    for controller in controllers:
        if isinstance(controller, WorkloadSpreadController):
            webhook = WorkloadSpreadWebhook(SimulationClient(host), controller.options)
            return DEFAULT_CHAIN.extended(mutating=(webhook,), validating=(webhook,))
    return DEFAULT_CHAIN
