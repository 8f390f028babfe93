"""``simulate -o json|yaml`` as the initial state and, per step, only what changed.

Writing every pod at every step grows as pods x steps (254 MB for 300 nodes, 3,000
replicas and 102 steps); most steps move a few pods. The delta document keeps the full
``initial`` step and ``final`` snapshot, and gives each step only its changes::

    {scenario, seed, form: "delta",
     initial: <a full step: pods[], distribution[], pending[], ..., events[]>,
     steps: [{index, action, description, time,
              pods:         {added: [row], removed: ["ns/name"], changed: [{namespace, name, <changes>}]},
              distribution: {added: [row], removed: [key], changed: [{key, <changes>}]},
              pending:      {added: [row], removed: ["ns/name"], changed: [{namespace, name, <changes>}]},
              workloadSpreads?, podDisruptionBudgets?, nodes?: [...],   # in full, only when changed
              events: [...], evictions: [...], rejections: [...], preemptions: [...]}],
     final: <a full snapshot>}

``<changes>``: each field that differs, with its new value; of a field that is a mapping in
both (a spread row's ``domains``, a pod's ``labels``) only the entries that differ, a removed
entry as null (none of those mappings holds a null). A distribution row's ``key`` is
``namespace/Kind/name topologyKey`` (``#2`` on, for a second row with the same). The
top-level ``events[]`` of the full form is left out: it is ``initial.events`` followed by
every step's. :func:`expand` rebuilds the full form.

Built from :class:`~kubespread.sim.run.SimulationResult` one step at a time, so only two
steps' rows are held at once; the result's own ``to_dict()`` (the report's input) is untouched.
Its functions build the JSON document itself (rows are compared and patched as written), so
they work on and return :data:`~kubespread.sim.rows.JsonDoc`, not typed rows.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any, Final

from kubespread.sim.rows import JsonDoc
from kubespread.sim.run import SimulationResult, StepResult

__all__ = ["DELTA_FORM", "delta_dict", "distribution_key", "expand", "full_dict"]

DELTA_FORM: Final = "delta"
#: what happened in a step: written in full in both forms
_HAPPENED: Final = ("events", "evictions", "rejections", "preemptions")
#: a step's own identity
_HEAD: Final = ("index", "action", "description", "time")
#: a step's parts written as added/removed/changed rows
_ROWS: Final = ("pods", "distribution", "pending")
#: a pod row's identity (never in ``changed``)
_POD_ID: Final = ("namespace", "name")

#: extra per-step work on a step's full dict (e.g. hints on its pending pods)
Decorate = Callable[[JsonDoc], None]


def _pod_key(row: JsonDoc) -> str:
    return f"{row['namespace']}/{row['name']}"


def _row_key(row: JsonDoc) -> str:
    return str(row["key"])


def distribution_key(row: JsonDoc) -> str:
    """A spread row's identity: its workload and topology key (``#n`` added by the caller
    for repeats)."""
    w = row.get("workload") or {}
    return f"{row['namespace']}/{w.get('kind', '')}/{w.get('name', '')} {row['topologyKey']}"


def _keyed(rows: Iterable[JsonDoc], key: Callable[[JsonDoc], str]) -> dict[str, JsonDoc]:
    out: dict[str, JsonDoc] = {}
    for row in rows:
        k = base = key(row)
        n = 1
        while k in out:
            n += 1
            k = f"{base}#{n}"
        out[k] = row
    return out


def _field_changes(old: JsonDoc, new: JsonDoc) -> JsonDoc:
    """The fields of ``new`` that differ from ``old``; one that is a mapping in both (a spread
    row's domains, a pod's labels) as its entries that differ, a removed entry as null."""
    out: JsonDoc = {}
    for f, v in new.items():
        was = old.get(f)
        if was == v:
            continue
        if isinstance(was, dict) and isinstance(v, dict):
            out[f] = {k: x for k, x in v.items() if was.get(k) != x} | {k: None for k in was if k not in v}
        else:
            out[f] = v
    return out


def _diff_rows(
    before: dict[str, JsonDoc], after: dict[str, JsonDoc], identity: tuple[str, ...]
) -> dict[str, list[Any]]:
    """added (full rows), removed (keys), changed (the ``identity`` fields and the changes)."""
    added = [row for k, row in after.items() if k not in before]
    removed = [k for k in before if k not in after]
    changed = []
    for k, row in after.items():
        old = before.get(k)
        if old is not None and old != row:
            changed.append({**{f: row[f] for f in identity}, **_field_changes(old, row)})
    return {"added": added, "removed": removed, "changed": changed}


def _with_keys(rows: list[JsonDoc]) -> dict[str, JsonDoc]:
    keyed = _keyed(rows, distribution_key)
    return {k: {"key": k, **row} for k, row in keyed.items()}


def step_delta(before: JsonDoc, after: JsonDoc) -> JsonDoc:
    """One step's full dict (``after``) as its changes from the previous one (``before``)."""
    out: JsonDoc = {k: after[k] for k in _HEAD}
    out["pods"] = _diff_rows(_keyed(before["pods"], _pod_key), _keyed(after["pods"], _pod_key), _POD_ID)
    out["distribution"] = _diff_rows(
        _with_keys(before["distribution"]), _with_keys(after["distribution"]), ("key",)
    )
    out["pending"] = _diff_rows(
        _keyed(before["pending"], _pod_key), _keyed(after["pending"], _pod_key), _POD_ID
    )
    for k in _HAPPENED:
        out[k] = after[k]
    for k, value in after.items():  # workloadSpreads, podDisruptionBudgets, and any added later
        if k not in out and k not in _ROWS and value != before.get(k):
            out[k] = value
    return out


def _step_dicts(result: SimulationResult, decorate: Decorate | None) -> Iterable[JsonDoc]:
    steps: list[StepResult] = [result.initial, *result.steps]
    for step in steps:
        d = step.to_dict()
        if decorate is not None:
            decorate(d)
        yield d


def delta_dict(result: SimulationResult, decorate: Decorate | None = None) -> JsonDoc:
    """The delta document (module notes); ``decorate`` edits each full step dict first."""
    dicts = iter(_step_dicts(result, decorate))
    initial = previous = next(dicts)
    steps = []
    for d in dicts:
        steps.append(step_delta(previous, d))
        previous = d
    final = result.final.to_dict()
    if decorate is not None:
        decorate(final)
    return {
        "scenario": result.name,
        "seed": result.seed,
        "form": DELTA_FORM,
        "initial": initial,
        "steps": steps,
        "final": final,
    }


def full_dict(result: SimulationResult, decorate: Decorate | None = None) -> JsonDoc:
    """``result.to_dict()`` (every pod at every step), each step passed through ``decorate``."""
    doc = result.to_dict()
    if decorate is not None:
        for d in [doc["initial"], *doc["steps"], doc["final"]]:
            decorate(d)
    return doc


def _patched(row: JsonDoc, change: JsonDoc) -> JsonDoc:
    """``row`` with a ``changed`` entry applied (the inverse of :func:`_field_changes`)."""
    new = dict(row)
    for f, v in change.items():
        was = row.get(f)
        if isinstance(was, dict) and isinstance(v, dict):
            new[f] = {k: x for k, x in {**was, **v}.items() if not (k in v and v[k] is None)}
        else:
            new[f] = v
    return new


def _patch_rows(
    keyed: dict[str, JsonDoc], change: dict[str, list[Any]], key: Callable[[JsonDoc], str]
) -> list[JsonDoc]:
    """The rows after a step's changes, in key order."""
    for k in change["removed"]:
        del keyed[k]
    for c in change["changed"]:
        keyed[key(c)] = _patched(keyed[key(c)], c)
    for row in change["added"]:
        keyed[key(row)] = row
    return [row for _, row in sorted(keyed.items())]


def expand(doc: JsonDoc) -> JsonDoc:
    """The full form of a delta document: every step's state in full (spread rows in key
    order), and the top-level events."""
    state = copy.deepcopy(doc["initial"])
    steps = []
    for delta in doc["steps"]:
        state = {k: v for k, v in state.items() if k not in _HEAD and k not in _HAPPENED}
        state["pods"] = _patch_rows(_keyed(state["pods"], _pod_key), delta["pods"], _pod_key)
        state["pending"] = _patch_rows(_keyed(state["pending"], _pod_key), delta["pending"], _pod_key)
        rows = _patch_rows(_with_keys(state["distribution"]), delta["distribution"], _row_key)
        # a snapshot's row order is not kept in the delta: rows come back in key order
        state["distribution"] = [{k: v for k, v in row.items() if k != "key"} for row in rows]
        state.update(
            {k: v for k, v in delta.items() if k not in _HEAD and k not in _ROWS and k not in _HAPPENED}
        )
        step = {k: delta[k] for k in _HEAD}
        step.update(state)
        step.update({k: delta[k] for k in _HAPPENED})
        steps.append(step)
    events = [*doc["initial"]["events"], *(e for s in doc["steps"] for e in s["events"])]
    return {
        "scenario": doc["scenario"],
        "seed": doc["seed"],
        "initial": doc["initial"],
        "steps": steps,
        "final": doc["final"],
        "events": events,
    }
