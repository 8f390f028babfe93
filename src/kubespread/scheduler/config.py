"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) → Profiles, as kube-scheduler
builds them: v1 defaulting (the default plugins merged with the user's, default args filled
in), validation with kube-scheduler's field paths and messages, then the framework's
expansion of multiPoint into extension points with score weights.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeVar

from kubespread.api.errors import DecodeError, ErrorType, FieldError, Path
from kubespread.api.features import FeatureGates
from kubespread.api.keys import KUBESPREAD_SCHEDULER_NAME
from kubespread.api.model import Model
from kubespread.api.schedconfig import (
    DefaultPreemptionArgs,
    InterPodAffinityArgs,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PluginConfig,
    Plugins,
    PluginSet,
    PodTopologySpreadArgs,
)
from kubespread.api.schedconfig import (
    Plugin as PluginRef,
)
from kubespread.api.schema import check
from kubespread.api.selectors import NodeSelector
from kubespread.api.validation.names import validate_dns1123_label, validate_label_name
from kubespread.api.validation.selectors import validate_node_selector
from kubespread.scheduler import defaults as d
from kubespread.scheduler.framework import (
    MAX_NODE_SCORE,
    FilterPlugin,
    Plugin,
    PostFilterPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ScorePlugin,
)
from kubespread.scheduler.profile import EXTENSION_POINTS, Profile
from kubespread.scheduler.registry import ARGS_KINDS, ARGS_TYPES, REGISTRY, plugin_class

__all__ = [
    "DEFAULT_MULTI_POINT",
    "DEFAULT_SCHEDULER_NAME",
    "ConfigError",
    "build_profile",
    "default_profile",
    "default_profiles",
    "profiles_from_config",
]

DEFAULT_SCHEDULER_NAME: Final = "default-scheduler"
MAX_CUSTOM_PRIORITY_SCORE: Final = 10
MAX_TOTAL_SCORE: Final = 2**63 - 1

#: v1.35's getDefaultPlugins(): the multiPoint list, in order, with score weights
DEFAULT_MULTI_POINT: Final[tuple[tuple[str, int | None], ...]] = (
    ("SchedulingGates", None),
    ("PrioritySort", None),
    ("NodeUnschedulable", None),
    ("NodeName", None),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", None),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", None),
    ("NodeVolumeLimits", None),
    ("VolumeBinding", None),
    ("VolumeZone", None),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", None),
    ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", None),
)

_POINT_ATTRS: Final = {
    "preEnqueue": "pre_enqueue",
    "queueSort": "queue_sort",
    "preFilter": "pre_filter",
    "filter": "filter",
    "postFilter": "post_filter",
    "preScore": "pre_score",
    "score": "score",
}
_ALL_POINTS: Final = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
)


class ConfigError(Exception):
    """A configuration kube-scheduler would refuse; ``errors`` carry the field paths."""

    def __init__(self, errors: Sequence[FieldError | str], source: str = "") -> None:
        self.errors = errors
        self.source = source
        prefix = f"{source}: " if source else ""
        super().__init__("; ".join(prefix + str(e) for e in errors))


def _attr(point: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in point)


def default_plugins() -> Plugins:
    return Plugins(
        multi_point=PluginSet(enabled=[PluginRef(name=n, weight=w) for n, w in DEFAULT_MULTI_POINT])
    )


# ------------------------------------------------------------------ v1 defaulting
def _merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    """mergePluginSet: defaults minus the disabled ones (all with "*"), a default the user
    re-enables replaced in place (keeping its position), then the user's other plugins."""
    disabled = {p.name for p in custom.disabled}
    custom_index = {p.name: i for i, p in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in disabled:
        for p in default.enabled:
            if p.name in disabled:
                continue
            i = custom_index.get(p.name)
            if i is not None:
                p = custom.enabled[i]
                replaced.add(i)
            enabled.append(p)
    enabled += [p for i, p in enumerate(custom.enabled) if i not in replaced]
    return PluginSet(enabled=enabled, disabled=[PluginRef(name=p.name) for p in custom.disabled])


def merge_plugins(custom: Plugins | None) -> Plugins:
    default = default_plugins()
    if custom is None:
        return default
    out = Plugins()
    for point in (*_ALL_POINTS, "multiPoint"):
        attr = _attr(point)
        setattr(out, attr, _merge_plugin_set(getattr(default, attr), getattr(custom, attr)))
    return out


# by plugin name, each for that plugin's args type (ARGS_TYPES[name]), hence the Any
_DEFAULTERS: Final[dict[str, Callable[[Any], Model]]] = {
    "PodTopologySpread": d.default_pod_topology_spread_args,
    "InterPodAffinity": d.default_inter_pod_affinity_args,
    "NodeAffinity": d.default_node_affinity_args,
    "NodeResourcesFit": d.default_node_resources_fit_args,
    "NodeResourcesBalancedAllocation": d.default_node_resources_balanced_allocation_args,
    "DefaultPreemption": d.default_default_preemption_args,
}


def _decode_args(name: str, raw: Any, path: Path) -> tuple[Model | None, list[FieldError]]:
    kind = ARGS_KINDS[name]
    if raw is None:
        return None, []
    if isinstance(raw, Model):
        return raw, []
    if not isinstance(raw, Mapping):
        return None, [FieldError.invalid(path, raw, f"must be a {kind} object")]
    body = {k: v for k, v in raw.items() if k not in ("apiVersion", "kind")}
    if raw.get("kind") not in (None, kind):
        return None, [FieldError.invalid(path.child("kind"), raw.get("kind"), f"must be {kind}")]
    # kube-scheduler decodes its configuration strictly: a misspelt argument is an error
    issues = check(kind, dict(raw))
    if issues:
        return None, [FieldError(ErrorType.INVALID, path.child(i.path), detail=i.message) for i in issues]
    try:
        return ARGS_TYPES[name].from_dict(body), []
    except DecodeError as e:
        return None, [FieldError.invalid(path.child(*e.path) if e.path else path, None, e.message)]


# ------------------------------------------------------------------ validation of args
def _validate_pts(args: PodTopologySpreadArgs, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    dt = args.defaulting_type
    if dt not in (d.SYSTEM_DEFAULTING, d.LIST_DEFAULTING):
        errs.append(
            FieldError.not_supported(
                path.child("defaultingType"), dt, [d.SYSTEM_DEFAULTING, d.LIST_DEFAULTING]
            )
        )
    elif dt == d.SYSTEM_DEFAULTING and args.default_constraints:
        errs.append(
            FieldError.invalid(path.child("defaultingType"), dt, "when .defaultConstraints are not empty")
        )
    cpath = path.child("defaultConstraints")
    seen: set[tuple[str, str]] = set()
    for i, c in enumerate(args.default_constraints):
        p = cpath.index(i)
        if c.max_skew <= 0:
            errs.append(FieldError.invalid(p.child("maxSkew"), c.max_skew, "not in valid range (0, inf)"))
        if not c.topology_key:
            errs.append(FieldError.required(p.child("topologyKey"), "can not be empty"))
        else:
            errs += validate_label_name(c.topology_key, p.child("topologyKey"))
        wu = c.when_unsatisfiable
        if not wu:
            errs.append(FieldError.required(p.child("whenUnsatisfiable"), "can not be empty"))
        elif wu not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(
                FieldError.not_supported(
                    p.child("whenUnsatisfiable"), wu, ["DoNotSchedule", "ScheduleAnyway"]
                )
            )
        if c.label_selector is not None:
            errs.append(
                FieldError.forbidden(
                    p.child("labelSelector"),
                    "constraint must not define a selector, as they deduced for each pod",
                )
            )
        pair = (c.topology_key, wu)
        if pair in seen:
            errs.append(FieldError.duplicate(cpath.index(i), f"{{{c.topology_key}, {wu}}}"))
        seen.add(pair)
    return errs


def _validate_ipa(args: InterPodAffinityArgs, path: Path) -> list[FieldError]:
    """kube's hardPodAffinityWeight range; kubespread's daemonNamespaces must be namespace
    names (DNS-1123 labels), each listed once."""
    errs: list[FieldError] = []
    w = args.hard_pod_affinity_weight
    if w is not None and not 0 <= w <= 100:
        errs.append(FieldError.invalid(path.child("hardPodAffinityWeight"), w, "not in valid range [0, 100]"))
    seen: set[str] = set()
    for i, ns in enumerate(args.daemon_namespaces):
        p = path.child("daemonNamespaces").index(i)
        errs += validate_dns1123_label(ns, p)
        if ns in seen:
            errs.append(FieldError.duplicate(p, ns))
        seen.add(ns)
    return errs


def _validate_shape(shape: list[Any], path: Path) -> list[FieldError]:
    if not shape:
        return [FieldError.required(path, "at least one point must be specified")]
    errs: list[FieldError] = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errs.append(
                FieldError.invalid(
                    path.index(i).child("utilization"),
                    shape[i].utilization,
                    "values must be sorted in increasing order",
                )
            )
            break
    for i, pt in enumerate(shape):
        if not 0 <= pt.utilization <= 100:
            errs.append(
                FieldError.invalid(
                    path.index(i).child("utilization"), pt.utilization, "not in valid range [0, 100]"
                )
            )
        if not 0 <= pt.score <= MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(
                FieldError.invalid(
                    path.index(i).child("score"),
                    pt.score,
                    f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]",
                )
            )
    return errs


def _validate_fit(args: NodeResourcesFitArgs, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, r in enumerate(args.ignored_resources):
        errs += validate_label_name(r, path.child("ignoredResources").index(i))
    for i, g in enumerate(args.ignored_resource_groups):
        p = path.child("ignoredResourceGroups").index(i)
        if "/" in g:
            errs.append(FieldError.invalid(p, g, "resource group name can't contain '/'"))
        errs += validate_label_name(g, p)
    sp = path.child("scoringStrategy")
    s = args.scoring_strategy
    if s is None:
        return [*errs, FieldError.required(sp, "ScoringStrategy field is required")]
    kinds = [d.LEAST_ALLOCATED, d.MOST_ALLOCATED, d.REQUESTED_TO_CAPACITY_RATIO]
    if s.type not in kinds:
        errs.append(FieldError.not_supported(sp.child("type"), s.type, kinds))
    for i, res in enumerate(s.resources):
        if not 0 < res.weight <= 100:
            errs.append(
                FieldError.invalid(
                    sp.child("resources").index(i).child("weight"),
                    res.weight,
                    f"resource weight of {res.name} not in valid range (0, 100]",
                )
            )
    if s.type == d.REQUESTED_TO_CAPACITY_RATIO:
        if s.requested_to_capacity_ratio is None:
            errs.append(
                FieldError.required(
                    sp.child("requestedToCapacityRatio"),
                    "must be specified when type is RequestedToCapacityRatio",
                )
            )
        else:
            errs += _validate_shape(
                s.requested_to_capacity_ratio.shape, sp.child("requestedToCapacityRatio").child("shape")
            )
    elif s.requested_to_capacity_ratio is not None:
        errs.append(
            FieldError.forbidden(
                sp.child("requestedToCapacityRatio"), "must be nil when type is not RequestedToCapacityRatio"
            )
        )
    return errs


def _validate_balanced(args: NodeResourcesBalancedAllocationArgs, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, r in enumerate(args.resources):
        p = path.child("resources").index(i)
        if r.name in seen:
            errs.append(FieldError.duplicate(p.child("name"), r.name))
        seen.add(r.name)
        if r.weight != 1:
            errs.append(FieldError.invalid(p.child("weight"), r.weight, "must be 1"))
    return errs


def _validate_default_preemption(args: DefaultPreemptionArgs, path: Path) -> list[FieldError]:
    """ValidateDefaultPreemptionArgs: percentage in [0, 100], absolute >= 0, not both 0."""
    errs: list[FieldError] = []
    pct, absolute = args.min_candidate_nodes_percentage or 0, args.min_candidate_nodes_absolute or 0
    p_pct, p_abs = path.child("minCandidateNodesPercentage"), path.child("minCandidateNodesAbsolute")
    if not 0 <= pct <= 100:
        errs.append(FieldError.invalid(p_pct, pct, "not in valid range [0, 100]"))
    if absolute < 0:
        errs.append(FieldError.invalid(p_abs, absolute, "not in valid range [0, inf)"))
    if pct == 0 and absolute == 0:
        errs.append(
            FieldError.invalid(p_pct, pct, "cannot be zero at the same time as minCandidateNodesAbsolute")
        )
        errs.append(
            FieldError.invalid(
                p_abs, absolute, "cannot be zero at the same time as minCandidateNodesPercentage"
            )
        )
    return errs


def _validate_node_affinity(args: NodeAffinityArgs, path: Path) -> list[FieldError]:
    aff = args.added_affinity
    if aff is None:
        return []
    p = path.child("addedAffinity")
    errs: list[FieldError] = []
    req: NodeSelector | None = aff.required_during_scheduling_ignored_during_execution
    if req is not None:
        errs += validate_node_selector(req, p.child("requiredDuringSchedulingIgnoredDuringExecution"))
    rde: NodeSelector | None = aff.required_during_scheduling_required_during_execution
    if rde is not None:
        errs += validate_node_selector(rde, p.child("requiredDuringSchedulingRequiredDuringExecution"))
    return errs


_VALIDATORS: Final[dict[str, Callable[[Any, Path], list[FieldError]]]] = {
    "PodTopologySpread": _validate_pts,
    "InterPodAffinity": _validate_ipa,
    "NodeAffinity": _validate_node_affinity,
    "NodeResourcesFit": _validate_fit,
    "NodeResourcesBalancedAllocation": _validate_balanced,
    "DefaultPreemption": _validate_default_preemption,
}


# ------------------------------------------------------------------ building a Profile
def _enabled_names(plugins: Plugins) -> list[str]:
    names: list[str] = []
    for point in (*_ALL_POINTS, "multiPoint"):
        for p in getattr(plugins, _attr(point)).enabled:
            if p.name not in names:
                names.append(p.name)
    return names


def _expand(point: str, plugins: Plugins, instances: Mapping[str, Plugin]) -> list[str]:
    """expandMultiPointPlugins for one extension point: plugins re-enabled at the point
    (overrides) first, then multiPoint ones, then the point's other plugins."""
    iface = EXTENSION_POINTS[point]
    pset: PluginSet = getattr(plugins, _attr(point))
    enabled = [p.name for p in pset.enabled]
    disabled = {p.name for p in pset.disabled}
    if "*" in disabled:
        return enabled
    overrides: list[str] = []
    multi: list[str] = []
    for p in plugins.multi_point.enabled:
        if not isinstance(instances[p.name], iface) or p.name in disabled:
            continue
        if p.name in enabled:
            overrides.append(p.name)
        elif p.name not in multi:
            multi.append(p.name)
    order = overrides + [n for n in multi if n not in overrides]
    return order + [n for n in enabled if n not in order]


def build_profile(
    profile: KubeSchedulerProfile,
    path: Path | None = None,
    *,
    percentage_of_nodes_to_score: int = 0,
    features: FeatureGates | None = None,
) -> Profile:
    """Default, validate and instantiate one profile; ConfigError lists every problem.
    ``percentage_of_nodes_to_score``: the configuration's global setting, which the
    profile's own, when set, overrides (0: adaptive, kube's default). ``features``: the
    gates of the Kubernetes version the plugins answer as (default: v1.35's)."""
    if features is None:
        features = FeatureGates()
    if path is None:
        path = Path("profiles").index(0)
    errs: list[FieldError] = []
    own = profile.percentage_of_nodes_to_score
    if own is not None:
        if not 0 <= own <= 100:
            errs.append(
                FieldError.invalid(path.child("percentageOfNodesToScore"), own, "not in valid range [0-100]")
            )
        percentage_of_nodes_to_score = own
    plugins = merge_plugins(profile.plugins)
    names = _enabled_names(plugins)
    for point in (*_ALL_POINTS, "multiPoint"):
        for i, p in enumerate(getattr(plugins, _attr(point)).enabled):
            if p.name not in REGISTRY:
                errs.append(
                    FieldError.invalid(
                        path.child("plugins", point, "enabled").index(i).child("name"),
                        p.name,
                        "no plugin of this name is registered",
                    )
                )
    raw_args: dict[str, Any] = {}
    for i, pc in enumerate(profile.plugin_config):
        p = path.child("pluginConfig").index(i)
        if pc.name in raw_args:
            errs.append(FieldError.duplicate(p, pc.name))
            continue
        if pc.name not in ARGS_TYPES:
            if pc.name not in REGISTRY:
                errs.append(
                    FieldError.invalid(p.child("name"), pc.name, "no plugin of this name is registered")
                )
            raw_args[pc.name] = None
            continue
        decoded, problems = _decode_args(pc.name, pc.args, p.child("args"))
        errs += problems
        raw_args[pc.name] = (decoded, p.child("args"))
    if errs:
        raise ConfigError(errs)
    instances: dict[str, Plugin] = {}
    for name in names:
        args = None
        if name in ARGS_TYPES:
            decoded, apath = raw_args.get(name) or (None, path.child("pluginConfig"))
            args = _DEFAULTERS[name](decoded)
            errs += _VALIDATORS[name](args, apath)
        if not errs:
            instances[name] = plugin_class(name)(args, features=features)
    if errs:
        raise ConfigError(errs)
    lists: dict[str, list[Plugin]] = {}
    for point, iface in EXTENSION_POINTS.items():
        order = _expand(point, plugins, instances)
        for i, n in enumerate(order):
            if not isinstance(instances[n], iface):
                errs.append(
                    FieldError.invalid(
                        path.child("plugins", point, "enabled").index(i).child("name"),
                        n,
                        f"plugin does not extend {point}",
                    )
                )
        lists[point] = [instances[n] for n in order if isinstance(instances[n], iface)]
    if len(lists["queueSort"]) != 1:
        errs.append(
            FieldError.invalid(
                path.child("plugins", "queueSort"),
                len(lists["queueSort"]),
                "one queue sort plugin required for profile",
            )
        )
    if errs:
        raise ConfigError(errs)
    weights: dict[str, int] = {}
    for p in [*plugins.score.enabled, *plugins.multi_point.enabled]:
        if p.name in weights or not isinstance(instances[p.name], EXTENSION_POINTS["score"]):
            continue
        weights[p.name] = p.weight or 1
    total = 0
    for n, w in weights.items():
        if w * MAX_NODE_SCORE > MAX_TOTAL_SCORE - total:
            raise ConfigError([f"total score of Score plugins could overflow (plugin {n})"])
        total += w * MAX_NODE_SCORE
    return Profile(
        scheduler_name=profile.scheduler_name or DEFAULT_SCHEDULER_NAME,
        pre_enqueue=_implementing(PreEnqueuePlugin, lists["preEnqueue"]),
        queue_sort=_implementing(QueueSortPlugin, lists["queueSort"])[0],
        pre_filter=_implementing(PreFilterPlugin, lists["preFilter"]),
        filter=_implementing(FilterPlugin, lists["filter"]),
        post_filter=_implementing(PostFilterPlugin, lists["postFilter"]),
        pre_score=_implementing(PreScorePlugin, lists["preScore"]),
        score=_implementing(ScorePlugin, lists["score"]),
        weights=weights,
        plugins=instances,
        percentage_of_nodes_to_score=percentage_of_nodes_to_score,
        features=features,
    )


P = TypeVar("P", bound=Plugin)


def _implementing(point: type[P], plugins: list[Plugin]) -> tuple[P, ...]:
    """The plugins of one extension point, typed as its interface (they all implement it:
    ``lists`` above keeps only those)."""
    return tuple(pl for pl in plugins if isinstance(pl, point))


def default_profile(
    plugin_args: Mapping[str, Any] | None = None, *, features: FeatureGates | None = None
) -> Profile:
    """The default profile; ``plugin_args`` maps plugin name → args (dict or typed);
    ``features``: the Kubernetes version's gates (default: v1.35's)."""
    pcs = [PluginConfig(name=n, args=a) for n, a in (plugin_args or {}).items()]
    return build_profile(
        KubeSchedulerProfile(scheduler_name=DEFAULT_SCHEDULER_NAME, plugin_config=pcs), features=features
    )


def default_profiles(*, features: FeatureGates | None = None) -> dict[str, Profile]:
    """The profiles when no configuration is given: kube's default scheduler, and the same
    default profile under ``kubespread``, the name ``kubespread scheduler`` serves without
    --config, so ``schedule``/``explain`` of a live cluster decide its pods as it does."""
    kubespread = KubeSchedulerProfile(scheduler_name=KUBESPREAD_SCHEDULER_NAME)
    return {
        DEFAULT_SCHEDULER_NAME: default_profile(features=features),
        KUBESPREAD_SCHEDULER_NAME: build_profile(kubespread, features=features),
    }


def profiles_from_config(
    cfg: KubeSchedulerConfiguration, *, features: FeatureGates | None = None
) -> dict[str, Profile]:
    """Every profile of a configuration by schedulerName (one default profile when none)."""
    errs: list[FieldError | str] = []
    pct = cfg.percentage_of_nodes_to_score
    if pct is not None and not 0 <= pct <= 100:
        errs.append(FieldError.invalid(Path("percentageOfNodesToScore"), pct, "not in valid range [0-100]"))
    if cfg.parallelism is not None and cfg.parallelism <= 0:
        errs.append(
            FieldError.invalid(
                Path("parallelism"), cfg.parallelism, "should be an integer value greater than zero"
            )
        )
    profiles = cfg.profiles or [KubeSchedulerProfile()]
    out: dict[str, Profile] = {}
    for i, p in enumerate(profiles):
        path = Path("profiles").index(i)
        name = p.scheduler_name if p.scheduler_name is not None else DEFAULT_SCHEDULER_NAME
        if not name:
            errs.append(FieldError.required(path.child("schedulerName"), ""))
            continue
        if name in out:
            errs.append(FieldError.duplicate(path.child("schedulerName"), name))
            continue
        try:
            out[name] = build_profile(
                p,
                path,
                percentage_of_nodes_to_score=pct if pct is not None and 0 <= pct <= 100 else 0,
                features=features,
            )
        except ConfigError as e:
            errs += e.errors
    if errs:
        raise ConfigError(errs)
    return out
