"""cli/render/spread.py: how a spread row looks in 80 columns (the numbers are scheduler.views')."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from kubespread.cli.render.spread import domains_text, has_raw_column, spread_table

ZONE = "topology.kubernetes.io/zone"


def row(rs: str, owner: str | None = "web", **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "namespace": "default",
        "workload": {"kind": "ReplicaSet", "namespace": "default", "name": rs},
        "owner": {"kind": "Deployment", "name": owner} if owner else None,
        "pod": f"{rs}-x",
        "topologyKey": ZONE,
        "maxSkew": 1,
        "whenUnsatisfiable": "DoNotSchedule",
        "defaulted": False,
        "domains": {"a": 1, "b": 1},
        "skew": 0,
        "withinMaxSkew": True,
        "leftOutDomains": [],
        "rawDomains": {"a": 1, "b": 1},
        "rawSkew": 0,
    }
    return {**base, **fields}


def render(rows: list[dict[str, Any]], label: Any = "owner") -> list[str]:
    console = Console(width=80, color_system=None)
    with console.capture() as captured:
        console.print(spread_table(rows, label=label))
    return [line.rstrip() for line in captured.get().splitlines()]


def test_domains_text_names_few_counts_many_and_puts_left_out_domains_in_parentheses() -> None:
    assert domains_text({"a": 3, "b": 3}, left_out=["c"], raw={"a": 3, "b": 3, "c": 0}) == "a=3  b=3  (c=0)"
    many = {f"n{i}": int(i < 5) for i in range(8)}
    assert domains_text(many, left_out=["x", "y"]) == "8 domains: 5 with 1, 3 with 0  (+2 left out)"
    assert domains_text({}, left_out=["c"]) == "(no eligible domain)  (c)"
    assert domains_text({}) == "(no node has this key)"


def test_the_raw_column_shows_only_when_it_says_something() -> None:
    same = [row("web-1")]
    assert not has_raw_column(same)
    assert render(same)[0].split() == ["workload", "key", "pods", "per", "domain", "skew"]
    raw = {"rawDomains": {"a": 3, "b": 3, "c": 0}, "rawSkew": 3}
    failed = [row("web-1", domains={"a": 3, "b": 3}, leftOutDomains=["c"], **raw)]
    assert has_raw_column(failed)
    head, line = render(failed)
    assert head.split()[-2:] == ["skew", "raw"]
    assert line.split() == ["deploy/web", "zone", "a=3", "b=3", "(c=0)", "0/1", "3"]
    none = dict.fromkeys(["maxSkew", "whenUnsatisfiable", "defaulted", "domains", "skew", "withinMaxSkew"])
    raw_only = [row("web-1", **none, rawSkew=2, rawDomains={"a": 2, "b": 0})]
    assert render(raw_only)[1].split() == ["deploy/web", "zone", "a=2", "b=0", "-", "2"]


def test_a_deployment_with_two_replicasets_is_named_by_them() -> None:
    rows = [row("web-old", skew=2, withinMaxSkew=False, rawSkew=2), row("web-new"), row("db-1", owner="db")]
    lines = render(rows)
    assert [line.split()[0] for line in lines[1:]] == ["rs/web-old", "rs/web-new", "deploy/db"]
    assert lines[1].endswith("2/1 over") and lines[2].endswith("0/1")
    by_controller = [line.split()[0] for line in render(rows, label="controller")[1:]]
    assert by_controller == ["rs/web-old", "rs/web-new", "rs/db-1"]
