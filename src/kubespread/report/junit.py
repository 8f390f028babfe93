"""``check --junit``: the gate's result as JUnit XML, which every CI shows as test results.

One ``<testsuite>`` per check (admission, placement, rollout, failureSurvival, capacity), one
``<testcase>`` per object it checked (``name``: the object, ``classname``:
``kubespread.check.<check>``, ``file`` and ``line``: where the object is written). A case
whose findings fail the gate has one ``<failure>`` (its first message as the message, every
message in the text); findings that do not fail it (warnings, unless strict) are its
``<system-out>``. Written with junitparser, the one place kubespread writes JUnit.
"""

from __future__ import annotations

from pathlib import Path

from junitparser import Attr, Failure, IntAttr, JUnitXml, TestCase, TestSuite

from kubespread.plan.findings import CHECKS, CheckResult

__all__ = ["junit_xml", "write_junit"]


class _LocatedCase(TestCase):
    """A test case with the ``file`` and ``line`` attributes GitLab, Jenkins and the GitHub
    test-report actions read to point at the source."""

    file = Attr()
    line = IntAttr()


def junit_xml(result: CheckResult) -> JUnitXml:
    """The document (see the module notes)."""
    xml = JUnitXml("kubespread check")
    for check in CHECKS:
        cases = [c for c in result.cases if c.check == check]
        if not cases:
            continue
        suite = TestSuite(check)
        for case in cases:
            tc = _LocatedCase(case.object, f"kubespread.check.{check}", 0.0)
            if case.file is not None:
                tc.file = case.file
            if case.line is not None:
                tc.line = case.line
            failing = [f for f in case.findings if result.fails(f)]
            passing = [f for f in case.findings if not result.fails(f)]
            if failing:
                failure = Failure(failing[0].message, f"{check}.{failing[0].severity}")
                failure.text = "\n".join(f"{f.where}: {f.severity}: {f.message}" for f in failing)
                tc.result = [failure]
            if passing:
                tc.system_out = "\n".join(f"{f.where}: {f.severity}: {f.message}" for f in passing)
            suite.add_testcase(tc)
        suite.update_statistics()  # type: ignore[no-untyped-call]
        xml.add_testsuite(suite)
    xml.update_statistics()  # type: ignore[no-untyped-call]
    return xml


def write_junit(result: CheckResult, path: str | Path) -> Path:
    """Write the document to ``path`` (its folder created); the path written."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    junit_xml(result).write(str(target), pretty=True)
    return target
