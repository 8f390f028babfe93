"""compare.py's rules (../shared/conformance/compare.py, read-only here) extended with the
``preemption`` field of the evaluate contract (README, "Preemption"):

* an expected result that has ``preemption`` needs the same ``nominatedNode``, the same
  ``victims`` as a set (their order, most important first, is kube-scheduler's sort and not
  stable among equals) and the same ``pdbViolations`` (0 when absent);
* ``"preemption": null`` in an expected result means the answer has none (a scheduled pod).

Everything else is compare.py's own ``diff_result``.
"""

from __future__ import annotations

from typing import Any

from shared_corpus import SHARED, load_script

__all__ = ["diff_case", "diff_preemption", "diff_result"]


def _compare() -> Any:
    return load_script(SHARED / "conformance" / "compare.py")


def diff_preemption(expected: dict[str, Any] | None, actual: dict[str, Any] | None) -> list[str]:
    if expected is None:
        return [] if actual is None else [f"preemption: expected none, got {actual}"]
    if actual is None:
        return [f"preemption: expected {expected}, got none"]
    out = []
    if actual.get("nominatedNode") != expected.get("nominatedNode"):
        out.append(
            f"nominatedNode: expected {expected.get('nominatedNode')}, got {actual.get('nominatedNode')}"
        )
    want, got = sorted(expected.get("victims") or []), sorted(actual.get("victims") or [])
    if want != got:
        out.append(f"victims: expected {want}, got {got}")
    want_n, got_n = expected.get("pdbViolations") or 0, actual.get("pdbViolations") or 0
    if want_n != got_n:
        out.append(f"pdbViolations: expected {want_n}, got {got_n}")
    return out


def diff_result(e: dict[str, Any], a: dict[str, Any]) -> list[str]:
    out: list[str] = _compare().diff_result(e, a)
    if "preemption" in e:
        out += [f"{e.get('pod')}: {p}" for p in diff_preemption(e["preemption"], a.get("preemption"))]
    return out


def diff_case(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    er, ar = expected.get("results") or [], actual.get("results") or []
    if len(er) != len(ar):
        return [f"results: expected {len(er)} entries, got {len(ar)}"]
    out: list[str] = []
    for e, a in zip(er, ar, strict=True):
        out += diff_result(e, a)
    return out
