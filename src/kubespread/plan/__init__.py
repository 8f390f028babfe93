"""Questions answered on top of solve/ and the scheduler: capacity for now (optimal
placement, rebalance and the failure-domain audit are to come)."""
