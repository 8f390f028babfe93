"""``python scripts/make_example_snapshot.py [--out DIR]`` (or ``python -m scripts.example_snapshot``):
play the history, write DIR/cluster.yaml (default examples/snapshot/) and check it."""

from __future__ import annotations

import argparse
from pathlib import Path

from .check import check, check_cli, shown
from .dump import dump_items, to_yaml
from .history import History
from .state import Dump

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT_DIR = ROOT / "examples" / "snapshot"
#: the new workload the check places on the dump (hand-written, not generated)
CHECKOUT_FILE = SNAPSHOT_DIR / "checkout.yaml"
MAX_BYTES = 2_500_000


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=SNAPSHOT_DIR, help="where to write cluster.yaml")
    args = parser.parse_args(argv)
    history = History()
    history.play()
    items, placeable, unplaceable = dump_items(Dump(history))
    text = to_yaml({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}})
    args.out.mkdir(parents=True, exist_ok=True)
    cluster_file = args.out / "cluster.yaml"
    cluster_file.write_text(text, encoding="utf-8")
    size = len(text.encode())
    print(f"wrote {shown(cluster_file)}: {len(items)} objects, {size:,} bytes")
    assert size < MAX_BYTES, size
    check(cluster_file, CHECKOUT_FILE, placeable, unplaceable)
    check_cli(cluster_file)


if __name__ == "__main__":
    main()
