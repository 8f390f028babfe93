"""A small typed codec between manifest dicts (camelCase) and slotted Python classes.

Why not a general-purpose library: we need three things at once that none gives cheaply —
slotted objects fast enough to load 100k pods, decoding errors that carry the exact field
path (as the API server reports them), and a dump that gives back the manifest, with its key
order and the fields we do not model.

A model class is declared as a plain annotated class decorated with :func:`model`::

    @model
    class Toleration(Model):
        key: str = ""
        toleration_seconds: int | None = None

Python names are snake_case; the manifest name is their camelCase unless a field gives
``json_name(...)``. Fields absent from the input take their default and are not dumped back
unless they changed, except those declared with :func:`always` (a Go field without
``omitempty``: written even at its zero value).
"""

from __future__ import annotations

import dataclasses
import gc
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from decimal import Decimal
from typing import Any, ClassVar, Final, TypeAlias, TypeVar, dataclass_transform, overload

from kubespread.api.errors import DecodeError
from kubespread.api.quantity import FORMAT_ERROR, Quantity, QuantityError

__all__ = [
    "DecodeError",
    "IntOrStr",
    "Model",
    "always",
    "collect_less",
    "gc_paused",
    "json_name",
    "long_lived",
    "model",
]

M = TypeVar("M", bound="Model")
T = TypeVar("T")

#: Kubernetes IntOrString fields (maxSurge, maxUnavailable, ports): an int or a string
IntOrStr: TypeAlias = int | str


_NAME_KEY = "kubespread_json_name"
_ALWAYS_KEY = "kubespread_always"


def always(*, default: T) -> T:
    """A field dumped even at its default: what Go writes for a field without ``omitempty``
    (a status counter at 0 is a value readers rely on, not an absence)."""
    return dataclasses.field(default=default, metadata={_ALWAYS_KEY: True})


@overload
def json_name(name: str, *, default: T, metadata: Mapping[str, Any] | None = None) -> T: ...
@overload
def json_name(
    name: str, *, default_factory: Callable[[], T], metadata: Mapping[str, Any] | None = None
) -> T: ...
def json_name(
    name: str,
    *,
    default: Any = dataclasses.MISSING,
    default_factory: Any = dataclasses.MISSING,
    metadata: Mapping[str, Any] | None = None,
) -> Any:
    """A dataclass field whose manifest key is not the camelCase of its Python name."""
    meta = dict(metadata or {})
    meta[_NAME_KEY] = name
    return dataclasses.field(default=default, default_factory=default_factory, metadata=meta)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


_KEYS_INTERN: dict[tuple[str, ...], tuple[str, ...]] = {}


def _intern_keys(keys: tuple[str, ...]) -> tuple[str, ...]:
    """Objects of one kind usually share a key order; share the tuple too (memory)."""
    got = _KEYS_INTERN.get(keys)
    if got is None:
        if len(_KEYS_INTERN) < 100_000:
            _KEYS_INTERN[keys] = keys
        got = keys
    return got


Decoder = Callable[[Any], Any]
Encoder = Callable[[Any], Any]


def _type_name(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int | float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


def _expect(kind: str) -> DecodeError:
    return DecodeError([], f"expected {kind}")


def _dec_str(v: Any) -> str:
    if isinstance(v, str):
        return v
    raise DecodeError([], f"cannot unmarshal {_type_name(v)} into a string field")


def _dec_int(v: Any) -> int:
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    raise DecodeError([], f"cannot unmarshal {_type_name(v)} into an integer field")


def _dec_float(v: Any) -> float:
    if isinstance(v, int | float) and not isinstance(v, bool):
        return float(v)
    raise DecodeError([], f"cannot unmarshal {_type_name(v)} into a number field")


def _dec_bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    raise DecodeError([], f"cannot unmarshal {_type_name(v)} into a boolean field")


def _dec_int_or_str(v: Any) -> int | str:
    if isinstance(v, str):
        return v
    return _dec_int(v)


# What Go's strings.TrimSpace removes (unicode.IsSpace); str.strip() would also take \x1c-\x1f.
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" + (
    "\u2028\u2029\u202f\u205f\u3000"
)


def _json_number(v: int | float) -> str:
    """A YAML number as kubectl sends it, i.e. as Go's encoding/json writes a float64: positional
    for 1e-6 <= |v| < 1e21 (0.00005, not 5e-05, which would parse as a DecimalExponent)."""
    if isinstance(v, int):
        return str(v)
    if v == 0 or 1e-6 <= abs(v) < 1e21:
        return format(Decimal(repr(v)).normalize(), "f")
    return repr(v)


def _dec_quantity(v: Any) -> Quantity:
    if type(v) is str:  # the usual quantity: one object per text (see _DECODED)
        q = _DECODED.get(v)
        if q is None:
            q = _quantity_of(v)
            if len(_DECODED) < _DECODED_MAX:
                _DECODED[v] = q
        return q
    if isinstance(v, int | float) and not isinstance(v, bool):
        q = _quantity_of(_json_number(v))  # its own object: it is given its number
        q.number = v  # dumped back as the number it was written as
        return q
    if v is None:
        return Quantity(0)  # UnmarshalJSON reads null as the zero quantity
    if not isinstance(v, str):
        # UnmarshalJSON parses the raw JSON text of any value (true, [...], {...}); none of
        # them starts like a number, so all fail on the format
        raise DecodeError([], FORMAT_ERROR, quantity=True)
    return _quantity_of(v)


def _quantity_of(text: str) -> Quantity:
    try:
        # Quantity.UnmarshalJSON trims surrounding white space before parsing
        return Quantity.parse(text.strip(_GO_SPACE))
    except QuantityError as err:
        raise DecodeError([], str(err), quantity=True) from None


#: the Quantity decoded from each text, shared by every field that writes it: a dump repeats a
#: few amounts ("100m", "256Mi") by the hundred thousand, and nothing changes a Quantity once
#: made (the number a bare number is dumped back as is set on an object of its own, above)
_DECODED: dict[str, Quantity] = {}
_DECODED_MAX = 4096


def _ident(v: Any) -> Any:
    return v


def _enc_quantity(q: Quantity) -> str | int | float:
    return q.number if q.number is not None else str(q)


def _list_codec(item: tuple[Decoder, Encoder]) -> tuple[Decoder, Encoder]:
    dec_item, enc_item = item

    def dec(v: Any) -> list[Any]:
        if not isinstance(v, list):
            raise DecodeError([], f"cannot unmarshal {_type_name(v)} into a list field")
        try:
            return [dec_item(x) for x in v]
        except DecodeError:
            pass
        for i, x in enumerate(v):  # again, one by one, to name the failing item
            try:
                dec_item(x)
            except DecodeError as err:
                err.path.insert(0, f"[{i}]")
                raise
        raise AssertionError("unreachable: the item failed once")

    if enc_item is _ident:
        return dec, list
    return dec, lambda v: [enc_item(x) for x in v]


def _dict_codec(item: tuple[Decoder, Encoder]) -> tuple[Decoder, Encoder]:
    dec_item, enc_item = item
    strings = dec_item is _dec_str

    def dec(v: Any) -> dict[str, Any]:
        if not isinstance(v, dict):
            raise DecodeError([], f"cannot unmarshal {_type_name(v)} into a map field")
        for k in v:
            if type(k) is not str:
                raise DecodeError([f"[{k}]"], "map keys must be strings")
        if strings and all(type(x) is str for x in v.values()):  # labels, annotations
            return dict(v)
        try:
            return {k: dec_item(x) for k, x in v.items()}
        except DecodeError:
            pass
        for k, x in v.items():  # again, one by one, to name the failing key
            try:
                dec_item(x)
            except DecodeError as err:
                err.path.insert(0, f"[{k}]")
                raise
        raise AssertionError("unreachable: the item failed once")

    if enc_item is _ident:
        return dec, dict
    return dec, lambda v: {k: enc_item(x) for k, x in v.items()}


def _codec_for(tp: Any) -> tuple[Decoder, Encoder]:
    origin = typing.get_origin(tp)
    if origin in (types.UnionType, typing.Union):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return _codec_for(args[0])
        if set(args) == {int, str}:
            return _dec_int_or_str, _ident
        raise TypeError(f"unsupported union {tp}")
    if origin is list:
        return _list_codec(_codec_for(typing.get_args(tp)[0]))
    if origin is dict:
        return _dict_codec(_codec_for(typing.get_args(tp)[1]))
    if tp is str:
        return _dec_str, _ident
    if tp is bool:
        return _dec_bool, _ident
    if tp is int:
        return _dec_int, _ident
    if tp is float:
        return _dec_float, _ident
    if tp is Quantity:
        return _dec_quantity, _enc_quantity
    if tp is Any or tp is object:
        return _ident, _ident
    if isinstance(tp, type) and issubclass(tp, Model):
        return tp._decode_value, _enc_model
    raise TypeError(f"unsupported field type {tp!r}")


def _enc_model(m: Model) -> dict[str, Any]:
    return m.to_dict()


class _Field:
    __slots__ = ("always", "attr", "dec", "default", "enc", "factory", "key")

    def __init__(
        self, attr: str, key: str, dec: Decoder, enc: Encoder, default: Any, factory: Any, always: bool
    ):
        self.attr, self.key, self.dec, self.enc = attr, key, dec, enc
        self.default, self.factory = default, factory
        self.always = always

    def default_value(self) -> Any:
        return self.factory() if self.factory is not None else self.default


_SLOT_NAMES: dict[type, tuple[str, ...]] = {}


def _slot_names(cls: type) -> tuple[str, ...]:
    """Every slot of ``cls`` and its bases (what a shallow copy carries over)."""
    names = _SLOT_NAMES.get(cls)
    if names is None:
        found: list[str] = []
        for klass in reversed(cls.__mro__):
            slots = klass.__dict__.get("__slots__", ())
            for name in (slots,) if isinstance(slots, str) else slots:
                if name not in ("__dict__", "__weakref__") and name not in found:
                    found.append(name)
        names = _SLOT_NAMES[cls] = tuple(found)
    return names


class Model:
    """Base of every API class: decoding with field paths, dumping with unknown fields kept."""

    __slots__ = ("_keys", "extra")
    #: the manifest's keys in input order (empty for an object built in Python)
    _keys: tuple[str, ...]
    #: the manifest's keys no field models, with their values (None: there were none)
    extra: dict[str, Any] | None
    #: set on every @model class by dataclasses (so a Model is a dataclass to type checkers)
    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]
    _fields_: ClassVar[dict[str, _Field]]
    _by_attr_: ClassVar[dict[str, _Field]]

    @classmethod
    def from_dict(cls: type[M], data: dict[str, Any]) -> M:
        """Build from a manifest dict; raises DecodeError with the field path on a type mismatch."""
        return cls._decode_value(data)

    @classmethod
    def _decode_value(cls: type[M], data: Any) -> M:
        """Replaced per class by :func:`_compile_decoder`'s straight-line form."""
        raise NotImplementedError(f"{cls.__name__} is not a @model class")

    def __copy__(self: M) -> M:
        """``copy.copy``: the same slots' values in a new object, as the default protocol
        (``__reduce_ex__``) makes it. Each @model class gets a straight-line version of this
        (:func:`_compile_copy`), a tenth of the default's cost: controllers and the API server
        copy an object on every write they make."""
        cls = type(self)
        new = cls.__new__(cls)
        for name in _slot_names(cls):
            try:
                value = getattr(self, name)
            except AttributeError:  # never set: left unset, as the default copy leaves it
                continue
            object.__setattr__(new, name, value)
        state = getattr(self, "__dict__", None)
        if state:
            new.__dict__.update(state)
        return new

    def __post_decode__(self) -> None:
        """Hook for derived caches; called after decoding."""

    def __post_init__(self) -> None:
        """Run by the dataclass ``__init__`` (an object built in Python; decoding does not call
        it): no manifest keys, nothing unknown, then the derived caches."""
        self.extra = None
        self._keys = ()
        self.__post_decode__()

    def to_dict(self) -> dict[str, Any]:
        """The manifest: input keys in input order (unknown ones included), then changed fields."""
        out: dict[str, Any] = {}
        fields = self._fields_
        extra = self.extra or {}
        keys = self._keys
        for k in keys:
            f = fields.get(k)
            if f is not None:
                v = getattr(self, f.attr)
                if v is None:
                    out[k] = None
                else:
                    out[k] = f.enc(v)
            elif k in extra:
                out[k] = extra[k]
        for f in self._by_attr_.values():
            if f.key in out or f.key in keys:
                continue
            v = getattr(self, f.attr)
            if v is None or (v == f.default_value() and not f.always):
                continue
            out[f.key] = f.enc(v)
        for k, v in extra.items():
            if k not in out:
                out[k] = v
        return out

    def present(self, key: str) -> bool:
        """Whether the manifest carried this key (camelCase), as opposed to its default."""
        return key in self._keys

    def copy(self: M) -> M:
        """A deep copy through the manifest form."""
        return type(self).from_dict(self.to_dict())


@contextmanager
def gc_paused(*, freeze: bool = True) -> Iterator[None]:
    """Pause the cyclic garbage collector while many objects are built (loading a snapshot;
    a context manager or, as ``@gc_paused()``, a decorator). Every 700 allocations it would
    rescan the young objects, and the growing heap with them: two thirds of the time to
    decode 10,000 pods. Model objects hold no cycles, so nothing is left for it to find.

    In a command's process (:func:`collect_less`), when many objects were built (a big dump:
    millions), they are frozen on leaving (``gc.freeze``): the first collection after would
    otherwise walk every one of them, and each later full one again, to find nothing (seconds
    at 100,000 pods). Frozen objects are still freed when no longer referenced; only a cycle
    among them stays, until the process ends with its command. Anywhere else (a library
    caller, a Dask worker or helper, a live component after :func:`long_lived`) nothing is
    frozen: a process that builds and drops one big simulation after another kept every one's
    cycles for good (1,000 nodes, 10,000 pods: 65-70 MiB more after each ``place``).
    ``freeze`` False: never, even in a command."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if freeze and _FREEZING and gc.get_count()[0] > _FREEZE_OVER:
                gc.freeze()
            gc.enable()


#: objects built under :func:`gc_paused` past which they are frozen on leaving it
_FREEZE_OVER = 200_000
#: whether :func:`gc_paused` may freeze: in a one-command process alone (:func:`collect_less`)
_FREEZING = False

#: the cyclic collector's thresholds for a command's process (:func:`collect_less`)
COMMAND_GC_THRESHOLDS: Final = (20_000, 20, 20)


def collect_less(*, freeze: bool = True) -> None:
    """The collector's thresholds for a whole command's process: it keeps most of what it
    builds (the cluster, its indexes) and makes few cycles, and at the defaults (700, 10, 10)
    the collector walked those objects again and again, 10-15% of a simulation's CPU
    (``benchmarks/scenario.py --scale 0.2``), for the same peak memory. The executables call
    it first; the benchmarks that time a command in process do too; so does the Dask helper
    that forks an audit's runs (``freeze=False``: it lives on, audit after audit). ``freeze``:
    the process ends with its command, so :func:`gc_paused` may freeze what it builds."""
    global _FREEZING
    gc.set_threshold(*COMMAND_GC_THRESHOLDS)
    _FREEZING = freeze


def long_lived() -> None:
    """This command's process runs until it is stopped (a live component: it settles the
    cluster round after round): :func:`gc_paused` freezes nothing from now on, or every
    round's dropped simulation would keep its cycles for good."""
    global _FREEZING
    _FREEZING = False


def _compile_decoder(cls: type[Model], fields: dict[str, _Field]) -> Callable[[type[Model], Any], Model]:
    """A decoder for one class as straight-line code: one statement per field, no loop over
    field descriptors. Decoding every pod of a 100k-pod snapshot is most of its load time."""
    env: dict[str, Any] = {
        "DecodeError": DecodeError,
        "_type_name": _type_name,
        "_intern_keys": _intern_keys,
        "_new": object.__new__,
        "_KNOWN": frozenset(f.key for f in fields.values()),
    }
    lines = [
        "def _decode_value(cls, data):",
        "    if not isinstance(data, dict):",
        '        raise DecodeError([], f"cannot unmarshal {_type_name(data)} into an object field")',
        "    obj = _new(cls)",
        "    get = data.get",
        "    key = None",
        "    try:",
    ]
    for i, f in enumerate(fields.values()):
        env[f"_dec{i}"] = f.dec
        if f.factory is not None:
            env[f"_fac{i}"] = f.factory
            default = f"_fac{i}()"
        else:
            env[f"_def{i}"] = f.default
            default = f"_def{i}"
        lines += [
            f"        raw = get({f.key!r})",
            f"        key = {f.key!r}",
            f"        obj.{f.attr} = {default} if raw is None else _dec{i}(raw)",
        ]
    lines += [
        "    except DecodeError as err:",
        "        err.path.insert(0, key)",
        "        raise",
        "    extra = None if data.keys() <= _KNOWN else {k: v for k, v in data.items() if k not in _KNOWN}",
        "    obj.extra = extra",
        "    obj._keys = _intern_keys(tuple(data))",
    ]
    if cls.__post_decode__ is not Model.__post_decode__:
        lines.append("    obj.__post_decode__()")
    lines.append("    return obj")
    exec("\n".join(lines), env)  # generated from our own field table, no outside input
    decode: Callable[[type[Model], Any], Model] = env["_decode_value"]
    return decode


def _compile_copy(cls: type[M]) -> Callable[[M], M]:
    """``cls``'s ``__copy__``: every slot assigned in a row; an instance of a subclass, or one
    with a slot never set, takes :meth:`Model.__copy__`'s general way."""
    names = _slot_names(cls)
    lines = ["def __copy__(self):", "    if type(self) is not cls:", "        return general(self)"]
    lines.append("    new = new_of(cls)")
    lines.append("    try:")
    lines += [f"        new.{name} = self.{name}" for name in names]
    lines.append("    except AttributeError:")
    lines.append("        return general(self)")
    lines.append("    return new")
    env: dict[str, Any] = {"cls": cls, "general": Model.__copy__, "new_of": cls.__new__}
    exec("\n".join(lines), env)  # generated from the class's own slot names, no outside input
    copier: Callable[[M], M] = env["__copy__"]
    return copier


# what type checkers need to know of the class @model makes: the dataclass below, keyword-only
# (kw_only=True), with __eq__, unordered and mutable; fields declared with dataclasses.field
# or json_name
@dataclass_transform(
    kw_only_default=True,
    eq_default=True,
    order_default=False,
    frozen_default=False,
    field_specifiers=(dataclasses.field, json_name),
)
def model(cls: type[M]) -> type[M]:
    """Turn an annotated Model subclass into a slotted dataclass with a compiled codec."""
    dc = dataclasses.dataclass(slots=True, kw_only=True, eq=True, repr=True)(cls)
    hints = typing.get_type_hints(dc)
    by_key: dict[str, _Field] = {}
    by_attr: dict[str, _Field] = {}
    for f in dataclasses.fields(dc):
        if f.name.startswith("_") or f.name == "extra":
            continue
        key = f.metadata.get(_NAME_KEY) or _camel(f.name)
        dec, enc = _codec_for(hints[f.name])
        factory = None if f.default_factory is dataclasses.MISSING else f.default_factory
        default = None if f.default is dataclasses.MISSING else f.default
        fld = _Field(f.name, key, dec, enc, default, factory, bool(f.metadata.get(_ALWAYS_KEY)))
        by_key[key] = fld
        by_attr[f.name] = fld
    dc._fields_ = by_key
    dc._by_attr_ = by_attr
    # a classmethod replacing the base's, which the type checker takes for a plain method
    dc._decode_value = classmethod(_compile_decoder(dc, by_attr))  # type: ignore[assignment]
    dc.__copy__ = _compile_copy(dc)  # type: ignore[method-assign,assignment]
    return dc
