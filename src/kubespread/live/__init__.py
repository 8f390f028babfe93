"""kubespread on a real cluster (optional extra ``kubespread[live]``): the cluster as a source
for every command, a secondary scheduler, the admission webhook and the WorkloadSpread
controller, all driving the same engine as the simulator through the Kubernetes API."""
