"""The placement model: a cluster plus groups of new pods as a CP-SAT model (OR-Tools), with
node-local facts taken from the scheduler and every solution re-checked by its Filter.

``model`` holds the data (groups, node slots, rules, the answer), ``build`` makes it from a
cluster (and clones templates into pods), ``encode`` turns it into CP-SAT constraints and
solves it, ``parts`` solves a rebalancing one linked set of groups at a time,
``verification`` re-checks an arrangement with the scheduler and ``conflicts`` names the
constraints that forbid one.
"""

from kubespread.solve.build import build_groups, build_model, clones, iter_clones
from kubespread.solve.conflicts import conflict
from kubespread.solve.encode import solve
from kubespread.solve.model import (
    AFFINITY,
    ANTI_AFFINITY,
    FAMILIES,
    RESOURCES,
    SPREAD,
    Group,
    Placement,
    PlacementModel,
    SolveError,
    VerificationError,
    relaxed,
)
from kubespread.solve.parts import solve_by_parts
from kubespread.solve.verification import verify, verify_groups

__all__ = [
    "AFFINITY",
    "ANTI_AFFINITY",
    "FAMILIES",
    "RESOURCES",
    "SPREAD",
    "Group",
    "Placement",
    "PlacementModel",
    "SolveError",
    "VerificationError",
    "build_groups",
    "build_model",
    "clones",
    "conflict",
    "iter_clones",
    "relaxed",
    "solve",
    "solve_by_parts",
    "verify",
    "verify_groups",
]
