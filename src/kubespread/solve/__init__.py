"""The placement model: a cluster plus N copies of a pod template as a CP-SAT model, with
node-local facts taken from the scheduler and every solution re-checked by its Filter."""

from kubespread.solve.placement import (
    ANTI_AFFINITY,
    FAMILIES,
    RESOURCES,
    SPREAD,
    Placement,
    PlacementModel,
    SolveError,
    VerificationError,
    build_model,
    clones,
    conflict,
    iter_clones,
    relaxed,
    solve,
    verify,
)

__all__ = [
    "ANTI_AFFINITY",
    "FAMILIES",
    "RESOURCES",
    "SPREAD",
    "Placement",
    "PlacementModel",
    "SolveError",
    "VerificationError",
    "build_model",
    "clones",
    "conflict",
    "iter_clones",
    "relaxed",
    "solve",
    "verify",
]
