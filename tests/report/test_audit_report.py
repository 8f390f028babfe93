"""The audit report's heat map: one row per failure (ranked), one column per workload (the
most harmed first), cells reading running/desired."""

from __future__ import annotations

from kubespread.plan.results import AuditResult, AuditSeconds, FailureRecord, Harm, WorkloadOutcome
from kubespread.report.audit import _availability_figure, _columns


def record(rank: int, value: str, workloads: list[tuple[str, int, int, int]]) -> FailureRecord:
    return FailureRecord(
        rank=rank,
        key="topology.kubernetes.io/zone",
        value=value,
        domain=f"topology.kubernetes.io/zone={value}",
        nodes=("n",),
        harm=Harm(0, 0, 0, 0),
        pdbs_broken=(),
        workloads=tuple(
            WorkloadOutcome(
                owner=name,
                desired=desired,
                running_before=desired,
                running=running,
                unavailable=desired - running,
                pending=pending,
                pending_reasons=(),
                pdbs_broken=(),
                recovery_seconds=None,
                skew=(),
            )
            for name, running, desired, pending in workloads
        ),
    )


DOC = AuditResult(
    domains=("topology.kubernetes.io/zone",),
    after=600.0,
    seed=0,
    workloads=(),
    failures=(
        record(1, "zone-a", [("default/Deployment/ok", 3, 3, 0), ("shop/Deployment/web", 4, 6, 2)]),
        record(2, "zone-b", [("default/Deployment/ok", 3, 3, 0), ("shop/Deployment/web", 6, 6, 0)]),
    ),
    seconds=AuditSeconds(0.0, 0.0),
)
EMPTY = AuditResult(("topology.kubernetes.io/zone",), 600.0, 0, (), (), AuditSeconds(0.0, 0.0))


def test_the_most_harmed_workload_comes_first() -> None:
    assert _columns(DOC.failures) == ["shop/Deployment/web", "default/Deployment/ok"]


def test_rows_are_failures_and_cells_read_running_over_desired() -> None:
    fig = _availability_figure(DOC)
    assert fig is not None
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["#1 zone=zone-a", "#2 zone=zone-b"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["shop/web", "ok"]
    assert sorted(t.get_text() for t in ax.texts) == ["3/3", "3/3", "4/6", "6/6"]


def test_nothing_to_draw() -> None:
    assert _availability_figure(EMPTY) is None
