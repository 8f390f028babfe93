"""The live components' plain-HTTP metrics ports, in a module free of the live extra's
libraries: the CLI's defaults, the manifests and :mod:`kubespread.live.metrics` read them.

10251 and 10252 were kube-scheduler's and kube-controller-manager's insecure (HTTP) ports,
serving /metrics and /healthz, until v1.23 removed them: free on a control-plane node today,
and numbers an operator recognises. 10253 continues the row for the webhook (its reviews stay
on HTTPS 9443), 10254 for the rebalancer (``rebalance --apply --every``).
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "CONTROLLER_METRICS_PORT",
    "REBALANCER_METRICS_PORT",
    "SCHEDULER_METRICS_PORT",
    "WEBHOOK_METRICS_PORT",
]

SCHEDULER_METRICS_PORT: Final = 10251
CONTROLLER_METRICS_PORT: Final = 10252
WEBHOOK_METRICS_PORT: Final = 10253
REBALANCER_METRICS_PORT: Final = 10254
