"""Regenerate examples/snapshot/cluster.yaml: the example cluster's history played on
kubespread's simulator and written as kubectl dumps it (see scripts/example_snapshot/, whose
catalog.yaml holds the cluster's nodes and workloads).

Run from the repository root::

    .venv/bin/python scripts/make_example_snapshot.py [--out DIR]
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from example_snapshot.__main__ import main

if __name__ == "__main__":
    main()
