"""NamespaceLifecycle: nothing is created in a namespace that does not exist.

The first mutating plugin of kube-apiserver. It refuses a new namespaced object whose namespace
is unknown with a 404 (``namespaces "prod" not found``). Cluster-scoped objects, Namespaces
themselves and operations other than CREATE pass. (The real plugin also refuses content in a
terminating namespace; kubespread's context knows no namespace phases.)
"""

from __future__ import annotations

from kubespread.admission.framework import AdmissionContext, Operation, Rejection
from kubespread.api.meta import KubeObject

__all__ = ["DEFAULT_NAMESPACE", "SYSTEM_NAMESPACES", "NamespaceLifecycle"]

# The namespace a request without one is made in (kubectl's default context namespace).
DEFAULT_NAMESPACE = "default"

# Namespaces kube-apiserver creates itself and never lets go.
SYSTEM_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})


class NamespaceLifecycle:
    name = "NamespaceLifecycle"

    def mutate(self, obj: KubeObject, ctx: AdmissionContext) -> Rejection | None:
        if ctx.operation is not Operation.CREATE or not obj.NAMESPACED:
            return None
        namespace = obj.metadata.namespace or DEFAULT_NAMESPACE
        if namespace in SYSTEM_NAMESPACES or ctx.namespace_exists(namespace):
            return None
        return Rejection.not_found("namespaces", namespace)
