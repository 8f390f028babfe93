"""Kubernetes resource quantities, exact.

A quantity is held as an integer count of nano-units (10^-9), which is the finest precision
Kubernetes keeps: parsing rounds anything finer *up* (away from zero), as
k8s.io/apimachinery does, so that asking for a tiny amount still asks for something.
Comparison and arithmetic are integer operations; nothing goes through floats.

The canonical string form follows apimachinery's CanonicalizeBytes: ``0.5`` → ``500m``,
``1024Mi`` → ``1Gi``, ``1.5Gi`` → ``1536Mi``, binary values below 1024 or not whole are
written in decimal SI.
"""

from __future__ import annotations

import re
from enum import StrEnum
from functools import total_ordering

__all__ = ["Format", "Quantity", "QuantityError", "parse_quantity"]

NANO = 10**9
# The BinarySI parse cap (math.MaxInt64), as apimachinery applies it.
_MAX_BINARY = (2**63 - 1) * NANO

FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
SUFFIX_ERROR = "unable to parse quantity's suffix"
NUMERIC_ERROR = "unable to parse numeric part of quantity"
MAX_EXPONENT = 4000


class Format(StrEnum):
    DECIMAL_EXPONENT = "DecimalExponent"
    BINARY_SI = "BinarySI"
    DECIMAL_SI = "DecimalSI"


class QuantityError(ValueError):
    """A string that is not a quantity; the message is apimachinery's."""


_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_BY_EXP = {v: k for k, v in _DECIMAL_SUFFIXES.items()}
_BINARY_SUFFIXES = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_BINARY_BY_EXP = {v: k for k, v in _BINARY_SUFFIXES.items()}

# number: optional sign, digits, optional '.' and digits; suffix: letters of the set, then an
# optional signed integer (for exponents). Mirrors apimachinery's scanner, not its loose regex.
_QUANTITY_RE = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[-+]?[0-9]*)")
_EXPONENT_RE = re.compile(r"[eE]([-+]?[0-9]+)")


def _interpret_suffix(suffix: str) -> tuple[int, int, Format]:
    """(base, exponent, format) of a suffix; raises QuantityError on an unknown one."""
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], Format.DECIMAL_SI
    if suffix in _BINARY_SUFFIXES:
        return 2, 10 * _BINARY_SUFFIXES[suffix], Format.BINARY_SI
    m = _EXPONENT_RE.fullmatch(suffix)
    if m:
        exp = int(m.group(1))
        if not -(2**63) <= exp < 2**63:  # strconv.ParseInt(..., 64) fails
            raise QuantityError(SUFFIX_ERROR)
        exp = (exp + 2**31) % 2**32 - 2**31  # then apimachinery keeps it as an int32
        if abs(exp) > MAX_EXPONENT:
            # Go holds such a value as a giant decimal; we refuse it rather than build a
            # number with billions of digits. No real resource comes near 10^4000.
            raise QuantityError(
                f"quantity exponent {exp} is out of the range kubespread supports (±{MAX_EXPONENT})"
            )
        return 10, exp, Format.DECIMAL_EXPONENT
    raise QuantityError(SUFFIX_ERROR)


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


def _div_away_from_zero(a: int, b: int) -> int:
    q = -((-abs(a)) // b)
    return q if a >= 0 else -q


_PARSED: dict[str, tuple[int, Format]] = {}
_PARSED_MAX = 4096


@total_ordering
class Quantity:
    """An exact resource amount with the format it was written in."""

    __slots__ = ("format", "nanos", "number", "text")

    def __init__(self, nanos: int = 0, format: Format = Format.DECIMAL_SI, text: str | None = None):
        self.nanos = nanos
        self.format = format
        self.text = text  # as written in the manifest, kept for dumping
        self.number: int | float | None = None  # set when the manifest wrote a bare number

    # construction ----------------------------------------------------------------------
    @classmethod
    def parse(cls, s: str) -> Quantity:
        """Parse apimachinery's quantity syntax; raises QuantityError with its message.

        Manifests repeat a few amounts ("100m", "128Mi") thousands of times, so the parsed
        (nanos, format) of recent strings is remembered; each call still returns a new object."""
        got = _PARSED.get(s)
        if got is not None:
            return cls(got[0], got[1], s)
        q = cls._parse(s)
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.clear()
        _PARSED[s] = (q.nanos, q.format)
        return q

    @classmethod
    def _parse(cls, s: str) -> Quantity:
        if not s:
            raise QuantityError(FORMAT_ERROR)
        m = _QUANTITY_RE.fullmatch(s)
        if m is None:
            raise QuantityError(FORMAT_ERROR)
        sign, whole, frac, suffix = m.group(1), m.group(2), m.group(3) or "", m.group(4)
        if not whole and not frac and m.group(3) is None and not suffix:
            # a lone sign: apimachinery reads it as zero
            return cls(0, Format.DECIMAL_SI, s)
        base, exponent, fmt = _interpret_suffix(suffix)
        if not whole and not frac and (exponent < -9 if base == 10 else exponent >= 50):
            # No digit at all: apimachinery reads such a number as zero on its int64 fast path,
            # but where it needs arbitrary precision (a scale below nano, or Pi/Ei whose
            # precision estimate is negative) the empty number fails to parse.
            raise QuantityError(NUMERIC_ERROR)
        digits = int((whole or "0") + frac) if (whole or frac) else 0
        scale = len(frac)  # value = digits * 10^-scale * base^exponent
        if base == 2:
            num = digits * (1 << exponent) * NANO
            den = 10**scale
        else:
            e = exponent - scale + 9
            num, den = (digits * 10**e, 1) if e >= 0 else (digits, 10**-e)
        nanos = _ceil_div(num, den)
        if fmt is Format.BINARY_SI and nanos > _MAX_BINARY:
            nanos = _MAX_BINARY
        if fmt is Format.BINARY_SI and 0 < nanos < NANO:
            # a binary amount below one unit is relabelled DecimalSI when parsed
            fmt = Format.DECIMAL_SI
        if sign == "-":
            nanos = -nanos
        return cls(nanos, fmt, s)

    @classmethod
    def from_int(cls, value: int, format: Format = Format.DECIMAL_SI) -> Quantity:
        return cls(value * NANO, format)

    @classmethod
    def from_milli(cls, milli: int, format: Format = Format.DECIMAL_SI) -> Quantity:
        return cls(milli * 10**6, format)

    # values -------------------------------------------------------------------------------
    def value(self) -> int:
        """Whole units, rounded up away from zero (Quantity.Value: -1.5 gives -2)."""
        return _div_away_from_zero(self.nanos, NANO)

    def milli_value(self) -> int:
        """Thousandths, rounded up away from zero (Quantity.MilliValue): how CPU is counted."""
        return _div_away_from_zero(self.nanos, 10**6)

    def is_zero(self) -> bool:
        return self.nanos == 0

    def sign(self) -> int:
        return (self.nanos > 0) - (self.nanos < 0)

    # formatting ---------------------------------------------------------------------------
    def canonical(self) -> str:
        """The string kube-apiserver writes back for this amount."""
        n = self.nanos
        if n == 0:
            return "0"
        fmt = self.format
        if fmt is Format.BINARY_SI:
            if -1024 * NANO < n < 1024 * NANO or n % NANO:
                fmt = Format.DECIMAL_SI
            else:
                mant, exp = n // NANO, 0
                while exp < 6 and mant % 1024 == 0:
                    mant //= 1024
                    exp += 1
                return f"{mant}{_BINARY_BY_EXP.get(exp, '')}"
        mant, exp = n, -9
        while mant % 10 == 0:
            mant //= 10
            exp += 1
        while exp % 3:
            mant *= 10
            exp -= 1
        if fmt is Format.DECIMAL_SI and exp in _DECIMAL_BY_EXP:
            return f"{mant}{_DECIMAL_BY_EXP[exp]}"
        return f"{mant}e{exp}" if exp else str(mant)

    def __str__(self) -> str:
        return self.text if self.text is not None else self.canonical()

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    # comparison and arithmetic -------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if isinstance(other, Quantity):
            return self.nanos == other.nanos
        return NotImplemented

    def __lt__(self, other: Quantity) -> bool:
        return self.nanos < other.nanos

    def __hash__(self) -> int:
        return hash(self.nanos)

    def __add__(self, other: Quantity) -> Quantity:
        fmt = other.format if self.nanos == 0 else self.format
        return Quantity(self.nanos + other.nanos, fmt)

    def __sub__(self, other: Quantity) -> Quantity:
        fmt = other.format if self.nanos == 0 else self.format
        return Quantity(self.nanos - other.nanos, fmt)

    def __neg__(self) -> Quantity:
        return Quantity(-self.nanos, self.format)


def parse_quantity(s: str) -> Quantity:
    """Parse a quantity string; raises QuantityError with apimachinery's message."""
    return Quantity.parse(s)
