"""The in-tree plugin registry: plugin name → class, imported on first use.

Lazy imports keep ``kubespread --help`` fast and let the framework module stay free of any
plugin import (plugins import the framework, never the other way round).
"""

from __future__ import annotations

import importlib
from typing import Final

from kubespread.api.model import Model
from kubespread.api.schedconfig import (
    DefaultPreemptionArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
)
from kubespread.scheduler.framework import Plugin
from kubespread.scheduler.plugins.inert import INERT_PLUGINS

__all__ = ["ARGS_TYPES", "REGISTRY", "plugin_class"]

_P: Final = "kubespread.scheduler.plugins."

#: plugin name → "module:Class"
REGISTRY: Final[dict[str, str]] = {
    "PrioritySort": _P + "queuesort:PrioritySort",
    "SchedulingGates": _P + "schedulinggates:SchedulingGates",
    "NodeUnschedulable": _P + "nodeunschedulable:NodeUnschedulable",
    "NodeName": _P + "nodename:NodeName",
    "TaintToleration": _P + "tainttoleration:TaintToleration",
    "NodeAffinity": _P + "nodeaffinity:NodeAffinity",
    "NodePorts": _P + "nodeports:NodePorts",
    "NodeResourcesFit": _P + "noderesources:NodeResourcesFit",
    "NodeResourcesBalancedAllocation": _P + "noderesources:NodeResourcesBalancedAllocation",
    "ImageLocality": _P + "imagelocality:ImageLocality",
    "PodTopologySpread": _P + "podtopologyspread:PodTopologySpread",
    "InterPodAffinity": _P + "interpodaffinity:InterPodAffinity",
    "DynamicResources": _P + "dynamicresources:DynamicResources",
    "DefaultPreemption": _P + "defaultpreemption:DefaultPreemption",
    **{name: _P + f"inert:INERT_PLUGINS[{name}]" for name in INERT_PLUGINS},
}

#: plugin name → the type its pluginConfig args decode to (plugins not listed take no args)
ARGS_TYPES: Final[dict[str, type[Model]]] = {
    "PodTopologySpread": PodTopologySpreadArgs,
    "InterPodAffinity": InterPodAffinityArgs,
    "NodeAffinity": NodeAffinityArgs,
    "NodeResourcesFit": NodeResourcesFitArgs,
    "NodeResourcesBalancedAllocation": NodeResourcesBalancedAllocationArgs,
    "DefaultPreemption": DefaultPreemptionArgs,
}

#: the kind name of each args type, as written in pluginConfig[].args.kind
ARGS_KINDS: Final[dict[str, str]] = {
    "PodTopologySpread": "PodTopologySpreadArgs",
    "InterPodAffinity": "InterPodAffinityArgs",
    "NodeAffinity": "NodeAffinityArgs",
    "NodeResourcesFit": "NodeResourcesFitArgs",
    "NodeResourcesBalancedAllocation": "NodeResourcesBalancedAllocationArgs",
    "DefaultPreemption": "DefaultPreemptionArgs",
}

_loaded: dict[str, type[Plugin]] = {}


def plugin_class(name: str) -> type[Plugin]:
    """The class registered under ``name``; KeyError for an unknown plugin."""
    cls = _loaded.get(name)
    if cls is None:
        if name in INERT_PLUGINS:
            cls = INERT_PLUGINS[name]
        else:
            module, attr = REGISTRY[name].split(":")
            cls = getattr(importlib.import_module(module), attr)
        _loaded[name] = cls
    return cls
