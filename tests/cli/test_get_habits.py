"""``get`` takes what kubectl users type: the singular and short resource names, TYPE/NAME,
names after the type, ``-o name``, ``-A``, ``-f=FILE`` and ``-f a,b``; a name that is not
there is kubectl's NotFound on stderr with exit 1, after the rows of those that are."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kubespread.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = ROOT / "examples" / "cluster"
NODES = str(CLUSTER / "nodes.yaml")
PODS = str(CLUSTER / "existing-pods.yaml")


def run(*args: str):
    return CliRunner().invoke(app, ["get", *args])


def names(*args: str) -> list[str]:
    r = run(*args, "-o", "name")
    assert r.exit_code == 0, r.output
    return r.stdout.splitlines()


def test_resource_names_as_kubectl_spells_them() -> None:
    every = names("nodes", "-f", NODES)
    assert every and all(n.startswith("node/") for n in every)
    for spelling in ("node", "no", "NODES"):
        assert names(spelling, "-f", NODES) == every
    pods = names("pods", "-f", PODS)
    assert pods and all(p.startswith("pod/") for p in pods)
    assert names("po", "-f", PODS) == names("pod", "-f", PODS) == pods


def test_names_after_the_type_and_type_slash_name() -> None:
    first = names("pods", "-f", PODS)[0].removeprefix("pod/")
    assert names("pods", first, "-f", PODS) == [f"pod/{first}"]
    assert names(f"pod/{first}", "-f", PODS) == [f"pod/{first}"]
    r = run("pods", first, "ghost", "-f", PODS)
    assert r.exit_code == 1
    assert first in r.stdout and 'Error from server (NotFound): pods "ghost" not found' in r.stderr


def test_all_namespaces_and_file_spellings() -> None:
    listed = names("pods", "-f", PODS)
    assert names("pods", "-A", "-f", PODS) == listed
    assert names("pods", "--all-namespaces", "-n", "nowhere", "-f", PODS) == listed  # -A wins
    assert names("pods", f"-f={PODS}") == listed
    both = run("pods", "-f", f"{NODES},{PODS}")
    assert both.exit_code == 0 and both.stdout.splitlines()[0].split()[:2] == ["NAMESPACE", "NAME"]


@pytest.mark.parametrize("resource", ["deployments", "pod/", "svc/web"])
def test_another_type_is_a_usage_error(resource: str) -> None:
    r = run(resource, "-f", PODS)
    assert r.exit_code == 2 and "Invalid value for 'RESOURCE'" in r.stderr
