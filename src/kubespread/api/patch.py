"""Strategic merge patch of Pod-shaped JSON, as k8s.io/apimachinery's strategicpatch applies it.

A WorkloadSpread subset's ``patch`` is a strategic merge patch that the Kruise webhook applies to
every pod it places in that subset (``StrategicMergePatch(pod, patch, &v1.Pod{})``). No
well-kept Python library applies one offline, without an API server, so this module does it on
plain dicts and lists (what ``Pod.to_dict()`` gives), following apimachinery's ``mergeMap`` and
``mergeSlice`` rule by rule:

- maps merge recursively; a ``null`` value deletes the key (a ``null`` that deletes nothing is
  dropped, as are ``null`` values inside a value the original lacks);
- ``{"$patch": "replace"}`` in a map replaces the map, ``{"$patch": "delete"}`` empties it;
- a list whose field has a merge key (``containers`` by ``name``, ``volumeMounts`` by
  ``mountPath``, ...: :data:`MERGE_KEYS`) merges item by item on that key; an item with
  ``"$patch": "delete"`` deletes the matching item and ``{"$patch": "replace"}`` replaces the list;
- ``finalizers`` merges as a set of primitives; ``$deleteFromPrimitiveList/<field>`` deletes values
  from such a list and ``$retainKeys`` clears the keys it does not list;
- every other list (``tolerations``, ``args``, node selector terms, ...) is replaced wholesale.

Order of merged lists is kube's, not "append": items named by the patch keep the patch's order,
the original's other items keep theirs, and the two are interleaved by their places in the
original, so an item new to the list lands *before* the original items it is compared with (a
patch adding container ``b`` to ``[a]`` gives ``[b, a]``, as ``kubectl patch`` does).

``$setElementOrder`` (written by ``kubectl apply``, never by hand) is not supported: it raises
:class:`PatchError`, as does any patch kube would refuse or that could not decode into a Pod.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MERGE_KEYS", "PRIMITIVE_MERGE_LISTS", "PatchError", "strategic_merge_patch"]

# patchMergeKey of each list field with patchStrategy "merge" in a Pod (core/v1 and meta/v1
# types.go); looked up by field name, which is unambiguous within a Pod.
MERGE_KEYS: dict[str, str] = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "ports": "containerPort",
    "imagePullSecrets": "name",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
    "schedulingGates": "name",
    "resourceClaims": "name",
    "ownerReferences": "uid",
    "conditions": "type",
    "podIPs": "ip",
    "hostIPs": "ip",
    "resourceClaimStatuses": "name",
    "allocatedResourcesStatus": "name",
}
# lists of primitives with patchStrategy "merge" (no merge key): merged as sets
PRIMITIVE_MERGE_LISTS = frozenset({"finalizers"})

DIRECTIVE = "$patch"
RETAIN_KEYS = "$retainKeys"
DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList/"
SET_ELEMENT_ORDER = "$setElementOrder/"


class PatchError(ValueError):
    """A patch kube would refuse to apply (or whose result could not decode into a Pod)."""


def strategic_merge_patch(original: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """``original`` with ``patch`` applied; both are left untouched (the result shares nothing
    with them). Raises :class:`PatchError` when the patch cannot apply."""
    if not isinstance(original, dict) or not isinstance(patch, dict):
        raise PatchError("a strategic merge patch applies a JSON object to a JSON object")
    # apimachinery merges destructively; work on copies so callers keep theirs
    return _merge_map(_copy(original), _copy(patch), "")


def _copy(v: Any) -> Any:
    """A deep copy of JSON data (much faster than copy.deepcopy on pod-sized documents)."""
    if isinstance(v, dict):
        return {k: _copy(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_copy(x) for x in v]
    return v


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, dict):
        return "object"
    if isinstance(v, list):
        return "list"
    return "scalar"


def _go_type(v: Any) -> str:
    """The Go type a decoded JSON value has (all numbers are float64)."""
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int | float):
        return "number"
    return "string" if isinstance(v, str) else _kind(v)


def _same(a: Any, b: Any) -> bool:
    """Go's == on two decoded JSON values: a boolean never equals a number."""
    return isinstance(a, bool) == isinstance(b, bool) and a == b


# --- maps -----------------------------------------------------------------------------------------


def _merge_map(original: dict[str, Any], patch: dict[str, Any], path: str) -> dict[str, Any]:
    """mergeMap: both arguments are owned (already copied) and may be changed."""
    if DIRECTIVE in patch:
        directive = patch.pop(DIRECTIVE)
        if directive == "replace":
            return patch
        if directive == "delete":
            return {}
        raise PatchError(f"{path or '<root>'}: unknown patch type {directive!r}")
    _apply_retain_keys(original, patch, path)
    for key in patch:
        if key.startswith(SET_ELEMENT_ORDER):
            raise PatchError(f"{_join(path, key)}: $setElementOrder is not supported")
    for key, value in patch.items():
        is_delete_list = key.startswith(DELETE_FROM_PRIMITIVE_LIST)
        if is_delete_list:
            key = key[len(DELETE_FROM_PRIMITIVE_LIST) :]
            if not key:
                raise PatchError(f"{path or '<root>'}: invalid patch format of primitive list")
        field = _join(path, key)
        if value is None:
            original.pop(key, None)
            continue
        current = original.get(key)
        if current is None or _kind(current) != _kind(value):
            if is_delete_list:
                continue
            if current is not None:
                # kube takes the patch's value, but the result would not decode into a Pod
                raise PatchError(f"{field}: cannot merge {_kind(value)} into {_kind(current)}")
            _discard_nulls(value)
            kept, keep = _remove_directives(value)
            if keep:
                original[key] = kept
            else:
                original.pop(key, None)
        elif isinstance(value, dict):
            original[key] = _merge_map(current, value, field)
        elif isinstance(value, list):
            original[key] = _merge_list(current, value, key, field, is_delete_list=is_delete_list)
        else:
            original[key] = value
    return original


def _apply_retain_keys(original: dict[str, Any], patch: dict[str, Any], path: str) -> None:
    """$retainKeys: the original keeps only the keys listed (which must cover the patch's)."""
    if RETAIN_KEYS not in patch:
        return
    retain = patch.pop(RETAIN_KEYS)
    if not isinstance(retain, list):
        raise PatchError(f"{_join(path, RETAIN_KEYS)}: invalid patch format of retainKeys")
    for k, v in patch.items():
        if v is None or k.startswith((DELETE_FROM_PRIMITIVE_LIST, SET_ELEMENT_ORDER)):
            continue
        if k not in retain:
            raise PatchError(f"{_join(path, RETAIN_KEYS)}: {k!r} is patched but not retained")
    for k in [k for k in original if k not in retain]:
        del original[k]


def _discard_nulls(v: Any) -> None:
    """discardNullValuesFromPatch: a null that has nothing to delete is dropped."""
    if isinstance(v, dict):
        for k in [k for k, x in v.items() if x is None]:
            del v[k]
        for x in v.values():
            _discard_nulls(x)
    elif isinstance(v, list):
        for x in v:
            _discard_nulls(x)


def _remove_directives(v: Any) -> tuple[Any, bool]:
    """removeDirectives: (value without maps carrying $patch, whether to keep it at all)."""
    if isinstance(v, dict):
        if DIRECTIVE in v:
            return None, False
        for k in list(v):
            kept, keep = _remove_directives(v[k])
            if keep:
                v[k] = kept
            else:
                del v[k]
        return v, True
    if isinstance(v, list):
        out = []
        for x in v:
            kept, keep = _remove_directives(x)
            if keep:
                out.append(kept)
        return out, True
    return v, True


# --- lists ----------------------------------------------------------------------------------------


def _merge_list(
    original: list[Any], patch: list[Any], key: str, path: str, *, is_delete_list: bool
) -> list[Any]:
    """mergeSliceHandler: merge lists merge, delete lists delete, every other list is replaced."""
    merge_key = MERGE_KEYS.get(key, "")
    if not (merge_key or key in PRIMITIVE_MERGE_LISTS or is_delete_list):
        return patch
    if not original and not patch:
        return original
    types = {_go_type(x) for x in original + patch}
    if "list" in types:
        raise PatchError(f"{path}: lists of lists are not supported")
    if len(types) > 1:
        raise PatchError(f"{path}: list element types are not identical")
    if "object" not in types:
        if is_delete_list:
            return [x for x in original if not any(_same(x, d) for d in patch)]
        merged: list[Any] = []
        for x in original + patch:
            if not any(_same(x, m) for m in merged):
                merged.append(x)
        return _normalize_order(merged, patch, original, lambda x: x)
    if not merge_key:
        raise PatchError(f"{path}: cannot merge lists of objects without a merge key")
    original, patch = _special_elements(original, patch, merge_key, path)
    server_order = list(original)
    merged = list(original)
    for i, item in enumerate(patch):
        if merge_key not in item:
            raise PatchError(f"{path}[{i}]: {item} does not contain declared merge key: {merge_key}")
        j = _find(merged, merge_key, item[merge_key], path)
        if j is None:
            merged.append(item)
        else:
            merged[j] = _merge_map(merged[j], item, f"{path}[{j}]")
    for i, item in enumerate(merged):
        if not isinstance(item, dict) or merge_key not in item:
            raise PatchError(f"{path}[{i}]: {item} does not contain declared merge key: {merge_key}")
    return _normalize_order(merged, patch, server_order, lambda x: x[merge_key])


def _special_elements(
    original: list[Any], patch: list[Any], merge_key: str, path: str
) -> tuple[list[Any], list[Any]]:
    """mergeSliceWithSpecialElements: apply the items carrying $patch; (original, patch) without them."""
    plain: list[Any] = []
    replace = False
    for i, item in enumerate(patch):
        if DIRECTIVE not in item:
            plain.append(item)
            continue
        directive = item[DIRECTIVE]
        if directive == "delete":
            if merge_key not in item:
                raise PatchError(f"{path}[{i}]: {item} does not contain declared merge key: {merge_key}")
            value = item[merge_key]
            original = [
                x
                for x in original
                if not (isinstance(x, dict) and merge_key in x and _same(x[merge_key], value))
            ]
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            raise PatchError(f"{path}: merging lists cannot yet be specified in the patch")
        else:
            raise PatchError(f"{path}[{i}]: unknown patch type {directive!r}")
    if replace:
        return plain, []
    return original, plain


def _find(items: list[Any], merge_key: str, value: Any, path: str) -> int | None:
    for i, x in enumerate(items):
        if not isinstance(x, dict):
            raise PatchError(f"{path}[{i}]: value is not an object")
        if merge_key in x and _same(x[merge_key], value):
            return i
    return None


def _index(items: list[Any], ident: Any, key: Any) -> int:
    for i, x in enumerate(items):
        if _same(key(x), ident):
            return i
    return -1


def _normalize_order(merged: list[Any], patch: list[Any], server: list[Any], key: Any) -> list[Any]:
    """normalizeElementOrder: the patch's items in patch order, the others in the original's
    order, interleaved by mergeSortedSlice: an original item goes first only when both it and
    the next patch item are in the original and it comes before that item there."""
    patch_ids = [key(x) for x in patch]
    in_patch = [x for x in merged if any(_same(key(x), p) for p in patch_ids)]
    server_only = [x for x in merged if not any(_same(key(x), p) for p in patch_ids)]
    in_patch.sort(key=lambda x: _index(patch, key(x), key))
    server_only.sort(key=lambda x: _index(server, key(x), key))
    out: list[Any] = []
    i = j = 0
    while i < len(server_only) or j < len(in_patch):
        if j >= len(in_patch):
            out.append(server_only[i])
            i += 1
        elif i >= len(server_only):
            out.append(in_patch[j])
            j += 1
        else:
            li = _index(server, key(server_only[i]), key)
            ri = _index(server, key(in_patch[j]), key)
            if li >= 0 and ri >= 0 and li < ri:
                out.append(server_only[i])
                i += 1
            else:
                out.append(in_patch[j])
                j += 1
    return out
