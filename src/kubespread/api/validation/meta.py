"""ObjectMeta: name (or generateName), namespace, labels, annotations, owner references."""

from __future__ import annotations

from kubespread.api.errors import FieldError, Path
from kubespread.api.meta import ObjectMeta
from kubespread.api.validation.names import (
    NameFn,
    is_qualified_name,
    name_is_dns1123_label,
    validate_labels,
)

__all__ = ["validate_annotations", "validate_object_meta"]

META_PATH = Path("metadata")
NEGATIVE_MSG = "must be greater than or equal to 0"
# apimachinery's TotalAnnotationSizeLimitB
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024


def validate_annotations(annotations: dict[str, str], path: Path) -> list[FieldError]:
    """Keys are qualified names (checked lower-cased); keys and values total at most 256 KiB."""
    errs: list[FieldError] = []
    for k in annotations:
        errs.extend(FieldError.invalid(path, k, m) for m in is_qualified_name(k.lower()))
    total = sum(len(k.encode()) + len(v.encode()) for k, v in annotations.items())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(FieldError.too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT))
    return errs


def validate_object_meta(
    meta: ObjectMeta, *, namespaced: bool, name_fn: NameFn, path: Path = META_PATH
) -> list[FieldError]:
    """ValidateObjectMeta on create.

    A namespaced object without a namespace is not an error here: the request's namespace (the
    client's current one) fills it before validation. A cluster-scoped object's namespace is
    cleared by the server, so it is ignored too.
    """
    errs: list[FieldError] = []
    if meta.generate_name:
        errs.extend(
            FieldError.invalid(path.child("generateName"), meta.generate_name, m)
            for m in name_fn(meta.generate_name, True)
        )
    if not meta.name:
        if not meta.generate_name:
            errs.append(FieldError.required(path.child("name"), "name or generateName is required"))
    else:
        errs.extend(FieldError.invalid(path.child("name"), meta.name, m) for m in name_fn(meta.name, False))
    if namespaced and meta.namespace:
        errs.extend(
            FieldError.invalid(path.child("namespace"), meta.namespace, m)
            for m in name_is_dns1123_label(meta.namespace, False)
        )
    if meta.generation < 0:
        errs.append(FieldError.invalid(path.child("generation"), meta.generation, NEGATIVE_MSG))
    errs.extend(validate_labels(meta.labels, path.child("labels")))
    errs.extend(validate_annotations(meta.annotations, path.child("annotations")))
    for i, ref in enumerate(meta.owner_references):
        rp = path.child("ownerReferences").index(i)
        version = ref.api_version.rsplit("/", 1)[-1]
        if not version:
            errs.append(
                FieldError.invalid(rp.child("apiVersion"), ref.api_version, "version must not be empty")
            )
        for key, value in (("kind", ref.kind), ("name", ref.name), ("uid", ref.uid)):
            if not value:
                errs.append(FieldError.invalid(rp.child(key), value, "must not be empty"))
    return errs
