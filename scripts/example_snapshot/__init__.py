"""Generate examples/snapshot/cluster.yaml: an anonymised but realistic cluster dump.

Why this exists: users try ``kubespread schedule`` and ``kubespread explain`` on their own
``kubectl get nodes,pods,deployments,replicasets,services,namespaces -A -o yaml`` output. The
examples need such a dump that is (1) shaped exactly like kubectl's (a ``List`` with uids,
resourceVersions, managedFields, full statuses, kubectl's key order) and (2) consistent with
kubespread's scheduler: every bound pod sits where kube-scheduler would have put it, the
workloads are at rest, and the pending pods are pending for the reasons the scheduler gives.
A hand-written dump gets (2) wrong; a real one cannot be published. So the cluster's history
(node groups, deployments, rollouts, a drain, scale-ups) is played on kubespread's simulator,
and its end state is written out with the decorations a real API server adds.

Run from the repository root (either form)::

    .venv/bin/python scripts/make_example_snapshot.py [--out DIR]
    .venv/bin/python -m scripts.example_snapshot [--out DIR]

It writes ``cluster.yaml`` into DIR (default examples/snapshot/), then loads it back and checks
it (see :mod:`.check`). Everything is seeded: two runs write the same bytes.

The modules: ``catalog.yaml`` the data (node groups, nodes, DaemonSets, workloads) and
:mod:`.catalog` what it expands into; :mod:`.history` the story played on the simulator;
:mod:`.dump` the end state as kubectl prints it, with :mod:`.nodes`, :mod:`.pods` and
:mod:`.workloads` adding what the kubelet, the API server and the controllers write, and
:mod:`.fields` their managedFields; :mod:`.check` the checks; :mod:`.__main__` the command.
"""
