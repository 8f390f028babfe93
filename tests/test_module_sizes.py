"""Code-shape rules of issue 33 that review alone would let slip.

- No module under src/ is over 800 lines: a bigger one holds more than one concern; split it.
- sim/ and plan/ return typed results: a public function or method there is not annotated to
  return ``dict[str, Any]`` or ``list[dict[...]]``. The exceptions, named below, are the JSON
  document writers (``to_dict`` and the few named in DOCUMENT_WRITERS), which return the
  :data:`kubespread.sim.rows.JsonDoc` alias, not a bare dict annotation.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = SRC / "kubespread"
MAX_LINES = 800
#: the packages whose public API must return typed objects
TYPED_PACKAGES = ("sim", "plan")
#: a return annotation that hands back an untyped JSON-like dict, or a list of them
UNTYPED_RETURN = re.compile(r"(dict\[str, Any\]|list\[dict\[.*\]\])( \| None)?")
JSON_DOC = "JsonDoc"
#: every result's JSON writer, in any class of sim/ or plan/
DOCUMENT_WRITER = "to_dict"
#: the other public functions allowed to return a JSON document (``JsonDoc``), by module and
#: qualified name: sim/delta works on the written documents by design (its delta is between
#: two JSON documents), simulate's outcome hands ``-o json`` its full and delta documents and
#: the report its explanation, and rebalance writes its plan as a scenario file
DOCUMENT_WRITERS = frozenset(
    {
        "kubespread/sim/delta.py: step_delta",
        "kubespread/sim/delta.py: delta_dict",
        "kubespread/sim/delta.py: full_dict",
        "kubespread/sim/delta.py: expand",
        "kubespread/sim/simulate.py: SimulateOutcome.full_doc",
        "kubespread/sim/simulate.py: SimulateOutcome.delta_doc",
        "kubespread/sim/simulate.py: SimulateOutcome.report_explanation",
        "kubespread/plan/rebalance.py: RebalancePlan.scenario_doc",
    }
)


def _modules() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def test_no_module_is_over_800_lines() -> None:
    too_long = {}
    for path in _modules():
        with path.open(encoding="utf-8") as f:
            n = sum(1 for _ in f)
        if n > MAX_LINES:
            too_long[str(path.relative_to(SRC))] = n
    assert not too_long, f"modules over {MAX_LINES} lines (split them by concern): {too_long}"


def test_the_line_rule_sees_every_module() -> None:
    # the rule would pass vacuously if the glob found nothing
    names = {p.relative_to(SRC).as_posix() for p in _modules()}
    assert "kubespread/cluster/state.py" in names
    assert len(names) > 50


def _public_functions(tree: ast.Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Module-level public functions and public methods of public classes (nested classes
    too), as (qualified name, node)."""
    out: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.name.startswith("_"):
                out.append((prefix + node.name, node))
            elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                walk(node.body, f"{prefix}{node.name}.")

    walk(tree.body, "")
    return out


def _returns(path: Path) -> list[tuple[str, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [(name, ast.unparse(fn.returns)) for name, fn in _public_functions(tree) if fn.returns is not None]


def _typed_modules() -> list[Path]:
    return [p for pkg in TYPED_PACKAGES for p in sorted((PACKAGE / pkg).rglob("*.py"))]


def test_sim_and_plan_return_typed_objects() -> None:
    untyped = []
    for path in _typed_modules():
        for name, returns in _returns(path):
            if UNTYPED_RETURN.fullmatch(returns):
                untyped.append(f"{path.relative_to(SRC)}: {name} -> {returns}")
    assert not untyped, "return a frozen dataclass (or JsonDoc from a to_dict writer):\n" + "\n".join(untyped)


def test_only_document_writers_return_json_doc() -> None:
    # JsonDoc is dict[str, Any] by another name: the alias is allowed only where a JSON
    # document is what is asked for, so it cannot become the way around the rule above
    elsewhere = []
    for path in _typed_modules():
        for name, returns in _returns(path):
            where = f"{path.relative_to(SRC).as_posix()}: {name}"
            if (
                JSON_DOC in returns
                and name.rsplit(".", 1)[-1] != DOCUMENT_WRITER
                and where not in DOCUMENT_WRITERS
            ):
                elsewhere.append(f"{where} -> {returns}")
    assert not elsewhere, "JsonDoc returned by a function that is not a document writer:\n" + "\n".join(
        elsewhere
    )


def test_the_named_document_writers_exist() -> None:
    # an exception left behind after its function is renamed or removed is a stale rule
    found = {
        f"{path.relative_to(SRC).as_posix()}: {name}"
        for path in _typed_modules()
        for name, returns in _returns(path)
        if JSON_DOC in returns
    }
    assert found >= DOCUMENT_WRITERS, sorted(DOCUMENT_WRITERS - found)


@pytest.mark.parametrize(
    ("source", "flagged"),
    [
        ("def f() -> dict[str, Any]: ...", ["f"]),
        ("def f() -> list[dict[str, int]]: ...", ["f"]),
        ("def f() -> dict[str, Any] | None: ...", ["f"]),
        ("class C:\n    def rows(self) -> list[dict[str, Any]]: ...", ["C.rows"]),
        ("def _f() -> dict[str, Any]: ...", []),
        ("class _C:\n    def rows(self) -> dict[str, Any]: ...", []),
        ("def f() -> JsonDoc: ...", []),
        ("def f() -> dict[str, int]: ...", []),
    ],
)
def test_the_return_rule_flags_what_it_should(source: str, flagged: list[str]) -> None:
    tree = ast.parse(source)
    found = [
        name
        for name, fn in _public_functions(tree)
        if fn.returns is not None and UNTYPED_RETURN.fullmatch(ast.unparse(fn.returns))
    ]
    assert found == flagged
