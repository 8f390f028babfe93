"""One pass for the common shape of a stored object: the strict check and the typed object.

Loading a dump checks every object against the API schema (:func:`kubespread.api.schema.check`)
and then decodes it (``from_dict``): two walks over 100,000 pods. :func:`decode_checked`
does both at once for an object whose every value is what its field wants, which a dump's
objects almost always are: the model's fields are checked as they are decoded, the fields
the model does not keep with the schema's own walkers. At the first thing the fast walk is
not sure of (an unknown or repeated key, a value of another type or out of range, a null
list item, a float where an integer goes...) it gives up and returns None, and the caller
goes the strict way, whose messages are the only ones: nothing is said from here.

It answers exactly as the strict way: an object it returns is one ``check`` finds nothing
in, built as ``from_dict`` builds it (same attributes, unknown keys kept, key order). One
exception, by design: a stored pod (:func:`~kubespread.api.meta.is_stored`: a dump's, by the
hundred thousand, validated whole when the API server stored it) is not walked in the fields
the model does not keep and no command reads (volumes without local storage, container
statuses without restarts, volume mounts, probes, security contexts, pod IPs, managed
fields...): kept as written and never read, they cannot change an answer. What a run reads of
them (:data:`_READ_OF_UNMODELLED`), the keys of the parts the model keeps, the types of its
unmodelled strings and booleans, and repeated keys anywhere are still checked.
"""

from __future__ import annotations

import itertools
import threading
import types
import typing
from collections.abc import Callable
from typing import Any

from kubespread.api.core import Pod, PodSpec, PodStatus, local_storage, restart_count
from kubespread.api.documents import StrictDict
from kubespread.api.errors import DecodeError
from kubespread.api.meta import KubeObject, is_stored
from kubespread.api.model import _KEYS_INTERN, Model, _dec_quantity, _intern_keys
from kubespread.api.quantity import Quantity
from kubespread.api.schema import _INT_RANGES, _Mismatch, _schema, _walker

__all__ = ["decode_checked"]

K = typing.TypeVar("K", bound=KubeObject)
Fast = Callable[[Any], Any]


class _Slow(Exception):
    """Something the fast walk leaves to the strict way."""


def _slow() -> Any:
    raise _Slow


_STR: frozenset[type] = frozenset({str})


def decode_checked(cls: type[K], data: Any) -> K | None:
    """``cls.from_dict(data)`` when ``check(cls.KIND, data)`` finds nothing and the decoding
    cannot fail; None when either might say something (the caller then asks them)."""
    fast = _top(cls)
    if fast is None:
        return None
    deferred = _DEFERRED
    with _DECODING:  # one object's deferred walks at a time (a library caller may use threads)
        try:
            obj: K = fast(data)
            if deferred and not _unread_left_unchecked(obj):
                for walk, raw in deferred:
                    if walk(raw):
                        return None
        except (_Slow, _Mismatch, DecodeError):
            return None
        finally:
            deferred.clear()
    return obj


#: (walker, value) of the unmodelled fields met while decoding one object that no command
#: reads: walked once the object is decoded, unless it is a stored pod
_DEFERRED: list[tuple[Callable[[Any], Any], Any]] = []
#: held while one object is decoded: the generated decoders append to the one _DEFERRED, so
#: another thread's decode meanwhile would walk this object's values or clear them unwalked
_DECODING = threading.Lock()


def _unread_left_unchecked(obj: KubeObject) -> bool:
    """Whether ``obj``'s unread unmodelled fields may go unwalked: a stored pod, while no text
    read so far gave a key twice (a repeated key is an error wherever it is, and only the
    walk finds it in those fields)."""
    return type(obj) is Pod and is_stored(obj) and not StrictDict.made


def _volumes_read(volumes: Any) -> bool:
    """Whether a run reads a pod's ``spec.volumes`` (so it is walked whole): it is not a list
    of objects, or one of them keeps local storage (:func:`~kubespread.api.core.local_storage`)."""
    if type(volumes) is not list:
        return True
    for v in volumes:  # noqa: SIM110 (a loop: no generator per pod)
        if type(v) is not dict or local_storage(v):
            return True
    return False


def _statuses_read(statuses: Any) -> bool:
    """Whether a run reads a pod's ``status.containerStatuses`` (so it is walked whole): it is
    not a list, or a status in it has a restart count (:func:`~kubespread.api.core.restart_count`)."""
    if type(statuses) is not list:
        return True
    for s in statuses:  # noqa: SIM110 (a loop: no generator per pod)
        if restart_count(s) != 0:
            return True
    return False


#: the unmodelled fields some command reads of a pod, each walked at once (as for any object)
#: always (None) or when its predicate says the value holds what is read of it; every other
#: unmodelled field of an object or a list type is walked after the object is decoded, and
#: not at all in a stored pod
_READ_OF_UNMODELLED: dict[tuple[type[Model], str], Callable[[Any], bool] | None] = {
    (PodSpec, "volumes"): _volumes_read,  # the descheduler's local storage
    (PodSpec, "resourceClaims"): None,  # DynamicResources
    (PodStatus, "containerStatuses"): _statuses_read,  # the ReplicaSet's ranking
    (PodStatus, "initContainerStatuses"): None,  # the ranking reads their names too
}


_tops: dict[type[Model], Fast | None] = {}


def _top(cls: type[Model]) -> Fast | None:
    if cls in _tops:
        return _tops[cls]
    kind = getattr(cls, "KIND", "")
    ref = _schema()["kinds"].get(kind)
    plain = getattr(cls.from_dict, "__func__", None) is getattr(Model.from_dict, "__func__", None)
    # a kind decoded its own way (WorkloadSpread's versions), or without a schema: the strict way
    fast = _struct(cls, ref) if ref is not None and plain and kind != "WorkloadSpread" else None
    _tops[cls] = fast
    return fast


_structs: dict[tuple[type[Model], str], Fast] = {}


def _struct(cls: type[Model], ref: str) -> Fast:
    """The fused decoder of a model class whose schema type is ``ref`` (compiled once)."""
    got = _structs.get((cls, ref))
    if got is not None:
        return got

    def late(v: Any) -> Any:  # a type inside itself (JSONSchemaProps): compiled on first use
        return _structs[(cls, ref)](v)

    _structs[(cls, ref)] = late
    compiled = _compile(cls, ref)
    _structs[(cls, ref)] = compiled
    return compiled


#: key orders per class given a decoder of their own (a dump's objects of a kind share a few)
_SPECIAL_MAX = 64


def _compile(cls: type[Model], ref: str) -> Fast:
    """The fused decoder: for a key order met before (kubectl writes every object of a kind
    alike), straight-line code for exactly those keys (no lookup of an absent field, the
    unmodelled ones known); for any other, the general way, which then makes one for it."""
    schema_fields: dict[str, str] = _schema()["types"][ref]
    hints = typing.get_type_hints(cls)
    specials: dict[tuple[str, ...], Fast] = {}
    env: dict[str, Any] = {
        "_Slow": _Slow,
        "_slow": _slow,
        "_new": object.__new__,
        "_cls": cls,
        "_intern_keys": _intern_keys,
        "_interned": _KEYS_INTERN.get,
        "_SCHEMA_KNOWN": frozenset(schema_fields),
        "_KNOWN": frozenset(f.key for f in cls._by_attr_.values()),
        "_walkers": {k: _walker(r) for k, r in schema_fields.items()},
        "_specials": specials,
        "_defer": _DEFERRED.append,
        "_check_extra": {k: _extra_check(cls, k, r) for k, r in schema_fields.items()},
        "_reads": {k: p for (c, k), p in _READ_OF_UNMODELLED.items() if c is cls and p is not None},
    }
    fields = list(cls._by_attr_.values())
    for i, f in enumerate(fields):
        if f.factory is not None:
            env[f"_fac{i}"] = f.factory
        else:
            env[f"_def{i}"] = f.default

    def default(i: int) -> str:
        return f"_fac{i}()" if fields[i].factory is not None else f"_def{i}"

    expressions: dict[int, str] = {}

    def expression(i: int) -> str:
        got = expressions.get(i)
        if got is None:
            f = fields[i]
            got = expressions[i] = _expression(hints[f.attr], schema_fields[f.key], f.dec, i, env)
        return got

    numbers = itertools.count()

    def specialize(keys: tuple[str, ...]) -> Fast:
        """The decoder of objects with exactly these keys, in this order (all in the schema)."""
        n = next(numbers)
        env[f"_K{n}"] = _intern_keys(keys)
        present = frozenset(keys)
        lines = [f"def special{n}(data):", "    obj = _new(_cls)"]
        for i, f in enumerate(fields):
            if f.key in present:
                lines += [
                    f"    raw = data[{f.key!r}]",
                    f"    obj.{f.attr} = {default(i)} if raw is None else {expression(i)}",
                ]
            else:
                lines.append(f"    obj.{f.attr} = {default(i)}")
        extra = [k for k in keys if k not in env["_KNOWN"]]
        if not extra:
            lines.append("    obj.extra = None")
        else:
            lines.append("    obj.extra = {" + ", ".join(f"{k!r}: data[{k!r}]" for k in extra) + "}")
            for k in extra:
                lines += _extra_lines(cls, k, schema_fields[k])
        lines.append(f"    obj._keys = _K{n}")
        if cls.__post_decode__ is not Model.__post_decode__:
            lines.append("    obj.__post_decode__()")
        lines.append("    return obj")
        scope: dict[str, Any] = {}
        exec("\n".join(lines), env, scope)  # from our own field tables (the keys: schema names)
        special: Fast = scope[f"special{n}"]
        specials[keys] = special
        return special

    env["_specialize"] = specialize
    lines = [
        "def fast(data):",
        "    if type(data) is not dict:",
        "        raise _Slow",
        "    keys = tuple(data)",
        "    special = _specials.get(keys)",
        "    if special is not None:",
        "        return special(data)",
        "    if not data.keys() <= _SCHEMA_KNOWN:",
        "        raise _Slow",
        f"    if len(_specials) < {_SPECIAL_MAX}:",
        "        return _specialize(keys)(data)",
        "    obj = _new(_cls)",
        "    get = data.get",
    ]
    for i, f in enumerate(fields):
        if schema_fields.get(f.key) is None:  # not in the schema: present, it failed the key test above
            lines.append(f"    obj.{f.attr} = {default(i)}")
            continue
        lines += [
            f"    raw = get({f.key!r})",
            f"    obj.{f.attr} = {default(i)} if raw is None else {expression(i)}",
        ]
    lines += [
        "    if data.keys() <= _KNOWN:",
        "        obj.extra = None",
        "    else:",
        "        extra = obj.extra = {k: v for k, v in data.items() if k not in _KNOWN}",
        "        for k, v in extra.items():",
        "            if v is not None:",
        "                _check_extra[k](v)",
        "    obj._keys = _interned(keys) or _intern_keys(keys)",
    ]
    if cls.__post_decode__ is not Model.__post_decode__:
        lines.append("    obj.__post_decode__()")
    lines.append("    return obj")
    exec("\n".join(lines), env)  # generated from our own field tables, no outside input
    fast: Fast = env["fast"]
    return fast


def _extra_mode(cls: type[Model], key: str, ref: str) -> str:
    """How an unmodelled field's value (not None) is checked: ``free`` (any value passes),
    ``str`` or ``bool`` (its type, without a call), ``now`` (walked at once), ``deferred``
    (walked after the object, unless a stored pod: :data:`_DEFERRED`), ``read`` (at once when
    what is read of it is there, else deferred: :data:`_READ_OF_UNMODELLED`)."""
    if ref in ("any", "quantity"):
        return "free"
    if ref in ("string", "boolean"):
        return "str" if ref == "string" else "bool"
    if not (ref.startswith(("[]", "{}")) or ref in _schema()["types"]):
        return "now"  # a number, an integer or an int-or-string
    if (cls, key) not in _READ_OF_UNMODELLED:
        return "deferred"
    return "now" if _READ_OF_UNMODELLED[(cls, key)] is None else "read"


def _extra_lines(cls: type[Model], key: str, ref: str) -> list[str]:
    """The generated lines checking an unmodelled field ``key`` of a key order's decoder."""
    mode, k = _extra_mode(cls, key, ref), repr(key)
    if mode == "free":
        return []
    head = [f"    raw = data[{k}]"]
    if mode in ("str", "bool"):
        return [*head, f"    if raw is not None and type(raw) is not {mode}:", "        raise _Slow"]
    if mode == "now":
        return [*head, f"    if raw is not None and _walkers[{k}](raw):", "        raise _Slow"]
    if mode == "deferred":
        return [*head, "    if raw is not None:", f"        _defer((_walkers[{k}], raw))"]
    return [
        *head,
        "    if raw is not None:",
        f"        if not _reads[{k}](raw):",
        f"            _defer((_walkers[{k}], raw))",
        f"        elif _walkers[{k}](raw):",
        "            raise _Slow",
    ]


def _extra_check(cls: type[Model], key: str, ref: str) -> Fast:
    """:func:`_extra_lines` as a function of the value (not None): the general decoder's."""
    mode, walk = _extra_mode(cls, key, ref), _walker(ref)
    reads = _READ_OF_UNMODELLED.get((cls, key))

    def check(v: Any) -> None:
        if mode == "free":
            return
        if mode == "deferred" or (mode == "read" and reads is not None and not reads(v)):
            _DEFERRED.append((walk, v))
        elif walk(v):
            raise _Slow

    return check


def _expression(tp: Any, ref: str, dec: Callable[[Any], Any], i: int, env: dict[str, Any]) -> str:
    """The expression decoding ``raw`` (not None) of a field of Python type ``tp`` and schema
    type ``ref``, or raising _Slow; ``env`` gets what it names."""
    tp = _optional(tp)
    if tp is str and ref == "string":
        return "raw if type(raw) is str else _slow()"
    if tp is bool and ref == "boolean":
        return "raw if type(raw) is bool else _slow()"
    if tp is int and ref in _INT_RANGES:
        lo, hi = _INT_RANGES[ref]
        return f"raw if type(raw) is int and {lo} <= raw <= {hi} else _slow()"
    origin = typing.get_origin(tp)
    # lists and maps decoded inline: a call less for each of a pod's dozen
    if tp == list[str] and ref == "[]string":
        env["_STR"] = _STR
        return "list(raw) if type(raw) is list and set(map(type, raw)) <= _STR else _slow()"
    if origin is list and ref.startswith("[]"):
        each = _item(typing.get_args(tp)[0], ref[2:])
        if each is not None:
            env[f"_e{i}"] = each
            return f"[_e{i}(x) for x in raw] if type(raw) is list else _slow()"
    if origin is dict and ref.startswith("{}"):
        value_tp = _optional(typing.get_args(tp)[1])
        if value_tp is str and ref == "{}string":
            env["_STR"] = _STR
            return "dict(raw) if type(raw) is dict and set(map(type, raw.values())) <= _STR else _slow()"
        value = _item(value_tp, ref[2:])
        if value is not None:
            env[f"_e{i}"] = value
            return f"{{k: _e{i}(x) for k, x in raw.items()}} if type(raw) is dict else _slow()"
    env[f"_f{i}"] = _value(tp, ref, dec)
    return f"_f{i}(raw)"


def _optional(tp: Any) -> Any:
    if typing.get_origin(tp) in (types.UnionType, typing.Union):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return tp


def _value(tp: Any, ref: str, dec: Callable[[Any], Any]) -> Fast:
    """A function decoding one value (not None) of ``tp`` / ``ref`` that is not a list or map
    :func:`_expression` decodes inline, raising _Slow for anything unusual. ``dec``: the
    model's own decoder for it, used with the schema walker for the combinations not made fast
    here."""
    tp = _optional(tp)
    if isinstance(tp, type) and issubclass(tp, Model) and ref in _schema()["types"]:
        return _struct(tp, ref)
    if tp is Quantity and ref == "quantity":
        return _dec_quantity  # the schema lets any value through; a bad one raises DecodeError
    walk = _walker(ref)

    def checked(v: Any) -> Any:
        if walk(v):
            raise _Slow
        return dec(v)

    return checked


def _item(tp: Any, ref: str) -> Fast | None:
    """One list item's or map value's decoder (None stays unusual: a null item), or None
    when there is no fast one."""
    tp = _optional(tp)
    if tp is str and ref == "string":

        def string(x: Any) -> Any:
            if type(x) is not str:
                raise _Slow
            return x

        return string
    if tp is Quantity and ref == "quantity":
        return _dec_quantity  # a null one is the zero quantity, in the model's decoder too
    if isinstance(tp, type) and issubclass(tp, Model) and ref in _schema()["types"]:
        return _struct(tp, ref)  # a null item is not a dict: _Slow
    return None
