"""ObjectMeta and the base of top-level objects (apiVersion, kind, metadata)."""

from __future__ import annotations

from dataclasses import field
from typing import Any, ClassVar, Final

from kubespread.api.model import Model, model

__all__ = ["NAME_ALPHABET", "KubeObject", "ObjectMeta", "OwnerReference", "is_stored"]

#: utilrand's alphabet (generateName suffixes, SafeEncodeString): no vowels, no look-alikes
NAME_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"


@model
class OwnerReference(Model):
    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool | None = None
    block_owner_deletion: bool | None = None


@model
class ObjectMeta(Model):
    name: str = ""
    generate_name: str = ""
    namespace: str = ""
    uid: str = ""
    resource_version: str = ""
    generation: int = 0
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    deletion_grace_period_seconds: int | None = None
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    owner_references: list[OwnerReference] = field(default_factory=list)
    finalizers: list[str] = field(default_factory=list)

    def controller_ref(self) -> OwnerReference | None:
        """The owner with controller=true, which is what workload controllers follow."""
        for ref in self.owner_references:
            if ref.controller:
                return ref
        return None


@model
class KubeObject(Model):
    """A top-level API object. Subclasses set KIND, API_VERSION and NAMESPACED."""

    KIND: ClassVar[str] = ""
    API_VERSION: ClassVar[str] = ""
    NAMESPACED: ClassVar[bool] = True

    api_version: str = ""
    kind: str = ""
    metadata: ObjectMeta = field(default_factory=ObjectMeta)

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        """The namespace the object lives in: ``metadata.namespace``, defaulted to ``default``
        for namespaced objects as the API server does (empty for cluster-scoped ones). The one
        place that default is applied; ``metadata.namespace`` stays as written."""
        if self.NAMESPACED:
            return self.metadata.namespace or "default"
        return ""

    @property
    def labels(self) -> dict[str, str]:
        return self.metadata.labels

    @property
    def key(self) -> str:
        """namespace/name for namespaced objects, name otherwise: the object's identity."""
        meta = self.metadata
        if self.NAMESPACED:  # (the namespace property inlined: asked of every object at every event)
            return f"{meta.namespace or 'default'}/{meta.name}"
        return meta.name

    def ref(self) -> str:
        """How messages name the object: ``Kind namespace/name``."""
        return f"{self.KIND} {self.key}"

    def __post_decode__(self) -> None:
        if not self.kind:
            object.__setattr__(self, "kind", self.KIND)
        if not self.api_version:
            object.__setattr__(self, "api_version", self.API_VERSION)

    def to_dict(self) -> dict[str, Any]:
        out = Model.to_dict(self)
        # apiVersion and kind first, as kubectl writes them
        head: dict[str, Any] = {k: out.pop(k) for k in ("apiVersion", "kind") if k in out}
        return {**head, **out}


def is_stored(obj: KubeObject) -> bool:
    """Whether ``obj`` is as an API server stored it (a uid or a creationTimestamp: a kubectl
    dump) rather than a manifest to create: its create-time changes are in it already."""
    meta = obj.metadata
    return bool(meta.uid or meta.creation_timestamp)
