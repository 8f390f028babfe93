"""``kubespread check``'s policy file: which checks run and how strict each is.

A small YAML document of its own kind, validated strictly (an unknown or mistyped field is an
error at its own line, as kubectl's strict decoding is), so that a typo in a CI gate's policy
never silently switches a check off::

    apiVersion: kubespread.io/v1alpha1
    kind: CheckPolicy
    metadata: {name: release-gate}
    checks:
      admission: {enabled: true}
      placement: {enabled: true, scheduleAnyway: warn}     # warn | ignore
      rollout: {enabled: true, suggest: true, maxTrials: 24, timeoutSeconds: 600}
      failureSurvival:
        enabled: true
        domains: topology.kubernetes.io/zone
        afterSeconds: 600
        minAvailable: 50%                                  # of each changed workload; or a count
      capacity: {minSpareReplicas: 2}                      # on when its section is there
    strict: false                                          # warnings fail the gate too

Every field may be left out (its default is above; capacity is off unless its section is
given); a file with only ``apiVersion`` and ``kind`` is the default policy.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from kubespread.api.documents import DocumentError, FieldLines, decode_utf8, parse_documents
from kubespread.api.keys import LABEL_ZONE

__all__ = [
    "API_VERSION",
    "KIND",
    "CapacityPolicy",
    "CheckPolicy",
    "FailurePolicy",
    "PlacementPolicy",
    "PolicyError",
    "RolloutPolicy",
    "load_policy",
    "parse_policy",
]

API_VERSION: Final = "kubespread.io/v1alpha1"
KIND: Final = "CheckPolicy"
#: virtual seconds a lost domain lasts before the verdict (audit's default)
DEFAULT_AFTER: Final = 600.0
#: a rollout given this long (progressDeadlineSeconds' default) before it is called stuck
DEFAULT_ROLLOUT_TIMEOUT: Final = 600.0
#: (maxSurge, maxUnavailable) pairs simulated, at most, when searching for one that completes
DEFAULT_MAX_TRIALS: Final = 24


class PolicyError(Exception):
    """The policy file is not a valid CheckPolicy; ``problems`` are located messages, all of them."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True, slots=True)
class PlacementPolicy:
    enabled: bool = True
    #: what a ScheduleAnyway constraint beyond its maxSkew is: ``warn`` or ``ignore``
    schedule_anyway: str = "warn"


@dataclass(frozen=True, slots=True)
class RolloutPolicy:
    enabled: bool = True
    #: on a deadlock, search (maxSurge, maxUnavailable) for a strategy that completes
    suggest: bool = True
    max_trials: int = DEFAULT_MAX_TRIALS
    timeout_seconds: float = DEFAULT_ROLLOUT_TIMEOUT


@dataclass(frozen=True, slots=True)
class FailurePolicy:
    enabled: bool = True
    #: the node label whose every value is lost in turn
    domains: str = LABEL_ZONE
    after_seconds: float = DEFAULT_AFTER
    #: each changed workload's replicas that must still run after a loss: ``"50%"`` of its
    #: desired replicas, or a count; None: not checked (PodDisruptionBudgets still are)
    min_available: int | str | None = None


@dataclass(frozen=True, slots=True)
class CapacityPolicy:
    enabled: bool = False
    #: more replicas of each changed workload's pod that must still fit
    min_spare_replicas: int = 1


@dataclass(frozen=True, slots=True)
class CheckPolicy:
    """The checks ``check`` runs and their settings (defaults: everything on but capacity)."""

    admission: bool = True
    placement: PlacementPolicy = field(default_factory=PlacementPolicy)
    rollout: RolloutPolicy = field(default_factory=RolloutPolicy)
    failure: FailurePolicy = field(default_factory=FailurePolicy)
    capacity: CapacityPolicy = field(default_factory=CapacityPolicy)
    #: warnings fail the gate too
    strict: bool = False
    name: str = ""
    source: str = ""


# ------------------------------------------------------------------ reading

_PERCENT = re.compile(r"^(\d{1,3})%$")


class _Reader:
    """Typed reads of one document's fields, every problem kept with its line."""

    def __init__(self, source: str, line: int, lines: FieldLines) -> None:
        self.source, self.line, self.lines = source, line, lines
        self._found: list[tuple[int, str]] = []

    @property
    def problems(self) -> list[str]:
        """Every problem, in the order of the file's lines."""
        return [message for _, message in sorted(self._found, key=lambda p: p[0])]

    def add(self, path: str, message: str) -> None:
        at = self.lines.line(self.line, path) or self.line
        self._found.append((at, f"{self.source}:{at}: {path}: {message}"))

    def mapping(self, data: Any, path: str, allowed: tuple[str, ...]) -> dict[str, Any]:
        if data is None:
            return {}
        if not isinstance(data, dict):
            self.add(path, f"must be a mapping, got {_type(data)}")
            return {}
        for key in data:
            if key not in allowed:
                where = f"{path}.{key}" if path else str(key)
                self.add(where, f'unknown field "{key}" (known: {", ".join(allowed)})')
        return data

    def get(self, data: dict[str, Any], key: str, path: str, read: Callable[[Any], Any], default: Any) -> Any:
        if key not in data:
            return default
        where = f"{path}.{key}" if path else key
        try:
            return read(data[key])
        except ValueError as e:
            self.add(where, str(e))
            return default


def _type(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list"}.get(
        type(value), "a mapping" if isinstance(value, dict) else type(value).__name__
    )


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"must be true or false, got {_type(value)}")
    return value


def _count(low: int) -> Callable[[Any], int]:
    def read(value: Any) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(f"must be an integer, got {_type(value)}")
        if value < low:
            raise ValueError(f"must be at least {low}, got {value}")
        return value

    return read


def _seconds(value: Any) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise ValueError(f"must be a number of seconds, got {_type(value)}")
    if value <= 0:
        raise ValueError(f"must be more than 0 seconds, got {value:g}")
    return float(value)


def _label_key(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"must be a node label key, got {_type(value)}")
    return value


def _one_of(*allowed: str) -> Callable[[Any], str]:
    def read(value: Any) -> str:
        if value not in allowed:
            raise ValueError(f"must be one of {', '.join(allowed)}, got {value!r}")
        return str(value)

    return read


def _share(value: Any) -> int | str:
    """A count of replicas or a percentage of the desired ones (``"50%"``)."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"must be 0 or more, got {value}")
        return value
    if isinstance(value, str):
        m = _PERCENT.match(value)
        if m and int(m.group(1)) <= 100:
            return value
    raise ValueError(f'must be a count or a percentage from 0% to 100% ("50%"), got {value!r}')


def parse_policy(text: str, source: str = "<policy>") -> CheckPolicy:
    """The CheckPolicy ``text`` holds; PolicyError with every problem located."""
    docs, error = parse_documents(text)
    if error is not None:
        where = source if error.line is None else f"{source}:{error.line}"
        raise PolicyError([f"{where}: {error.message}"])
    docs = [d for d in docs if d.data is not None]
    if len(docs) != 1:
        raise PolicyError([f"{source}: a policy file holds one YAML document, found {len(docs)}"])
    doc = docs[0]
    r = _Reader(source, doc.line, FieldLines(text))
    top = r.mapping(doc.data, "", ("apiVersion", "kind", "metadata", "checks", "strict"))
    if not isinstance(doc.data, dict):
        raise PolicyError([f"{source}:{doc.line}: a policy must be a mapping, got {_type(doc.data)}"])
    if top.get("apiVersion") != API_VERSION:
        r.add("apiVersion", f"must be {API_VERSION}, got {top.get('apiVersion')!r}")
    if top.get("kind") != KIND:
        r.add("kind", f"must be {KIND}, got {top.get('kind')!r}")
    meta = r.mapping(top.get("metadata"), "metadata", ("name", "labels", "annotations"))
    name = meta.get("name", "")
    if not isinstance(name, str):
        r.add("metadata.name", f"must be a string, got {_type(name)}")
        name = ""
    strict = r.get(top, "strict", "", _bool, False)
    checks = r.mapping(
        top.get("checks"), "checks", ("admission", "placement", "rollout", "failureSurvival", "capacity")
    )

    def section(key: str, allowed: tuple[str, ...]) -> tuple[dict[str, Any], str]:
        path = f"checks.{key}"
        return r.mapping(checks.get(key), path, ("enabled", *allowed)), path

    adm, p = section("admission", ())
    admission = r.get(adm, "enabled", p, _bool, True)
    pl, p = section("placement", ("scheduleAnyway",))
    placement = PlacementPolicy(
        r.get(pl, "enabled", p, _bool, True),
        r.get(pl, "scheduleAnyway", p, _one_of("warn", "ignore"), "warn"),
    )
    ro, p = section("rollout", ("suggest", "maxTrials", "timeoutSeconds"))
    rollout = RolloutPolicy(
        r.get(ro, "enabled", p, _bool, True),
        r.get(ro, "suggest", p, _bool, True),
        r.get(ro, "maxTrials", p, _count(1), DEFAULT_MAX_TRIALS),
        r.get(ro, "timeoutSeconds", p, _seconds, DEFAULT_ROLLOUT_TIMEOUT),
    )
    fs, p = section("failureSurvival", ("domains", "afterSeconds", "minAvailable"))
    failure = FailurePolicy(
        r.get(fs, "enabled", p, _bool, True),
        r.get(fs, "domains", p, _label_key, LABEL_ZONE),
        r.get(fs, "afterSeconds", p, _seconds, DEFAULT_AFTER),
        r.get(fs, "minAvailable", p, _share, None),
    )
    ca, p = section("capacity", ("minSpareReplicas",))
    capacity = CapacityPolicy(
        r.get(ca, "enabled", p, _bool, "capacity" in checks),
        r.get(ca, "minSpareReplicas", p, _count(1), 1),
    )
    if r.problems:
        raise PolicyError(r.problems)
    return CheckPolicy(admission, placement, rollout, failure, capacity, strict, name, source)


def load_policy(path: str | Path) -> CheckPolicy:
    """Read and check a policy file; PolicyError (located) when it cannot be read or is invalid."""
    try:
        text = decode_utf8(Path(path).read_bytes())
    except OSError as e:
        raise PolicyError([f"{path}: cannot read: {e.strerror or e}"]) from None
    except DocumentError as e:
        raise PolicyError([f"{path}: cannot read: {e}"]) from None
    return parse_policy(text, str(path))
