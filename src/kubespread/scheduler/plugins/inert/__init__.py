"""Plugins of the default profile whose subject kubespread does not model (volumes, binding).
They are registered so that configurations naming them are accepted, and they never filter
or score: the conformance corpus's pods carry no volumes, where the real plugins also pass
every node and score 0. (DynamicResources and DefaultPreemption have packages of their own:
their PostFilter answers end the FitError message.)"""

from __future__ import annotations

from typing import Final

from kubespread.scheduler.framework import Plugin

__all__ = ["INERT_PLUGINS"]


def _inert(name: str) -> type[Plugin]:
    return type(name, (Plugin,), {"name": name, "__doc__": f"{name}: registered, does nothing here."})


INERT_PLUGINS: Final[dict[str, type[Plugin]]] = {
    n: _inert(n)
    for n in (
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "DefaultBinder",
    )
}
