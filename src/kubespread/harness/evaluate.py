"""The conformance interface: one input document (cluster, config, incoming pods) in, one
answer document out, as ../shared/conformance/README.md specifies.

``evaluate`` mode judges each incoming pod against the initial cluster alone; ``sequence``
mode binds each scheduled pod before the next is judged, and deletes the victims of each
preemption; the preemptor is nominated, not bound: later pods of no higher priority count it
on its node.

The corpus's cycle filters and scores every node and gives ties to the smallest name. An
input whose ``config`` sets ``percentageOfNodesToScore`` (0: adaptive) or ``parallelism`` is
answered as the real kube-scheduler's ``SchedulePod`` instead: one scheduler instance whose
node tree lists the input's nodes in their order, sampling, the rotating start index and the
score heap's pick (scheduler/selection.py). Only parallelism 1 is deterministic in
kube-scheduler; kubespread answers as parallelism 1 whatever is given, and says so.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Final, TypeVar

from kubespread.api.apps import PriorityClass, ReplicaSet, ReplicationController, StatefulSet
from kubespread.api.core import Namespace, Node, Pod, Service
from kubespread.api.errors import DecodeError
from kubespread.api.features import POD_LEVEL_RESOURCES, FeatureGates, VersionError, features_for
from kubespread.api.meta import KubeObject
from kubespread.api.model import gc_paused
from kubespread.api.policy import PodDisruptionBudget
from kubespread.cluster import ClusterError, ClusterState
from kubespread.scheduler.config import ConfigError, default_profile
from kubespread.scheduler.profile import Profile
from kubespread.scheduler.scheduler import Decision, schedule_one
from kubespread.scheduler.selection import NodeOrder

__all__ = [
    "KUBE_VERSION_KEY",
    "MODES",
    "EvaluateError",
    "as_scheduled",
    "build_cluster",
    "evaluate",
    "incoming_pods",
    "input_mode",
    "kube_version_of",
    "parallelism_note",
    "profile_for",
    "sampling_of",
    "schedule_in_turn",
]

MODES: Final = ("evaluate", "sequence")

K = TypeVar("K", bound=KubeObject)

#: config keys of the node selection (KubeSchedulerConfiguration's), not plugin args
PERCENTAGE_KEY: Final = "percentageOfNodesToScore"
PARALLELISM_KEY: Final = "parallelism"
#: the input field naming the Kubernetes version to answer as ("1.36"), beside ``mode``
KUBE_VERSION_KEY: Final = "kubeVersion"
#: config keys that are not plugin args: the profile name, the oracle's output detail
#: ("full" or "summary"; our answer always has the full detail) and the node selection's
_NOT_PLUGIN_ARGS: Final = frozenset({"plugins", "output", PERCENTAGE_KEY, PARALLELISM_KEY})

#: input field → the kind its items decode to
_SECTIONS: Final[tuple[tuple[str, type[KubeObject]], ...]] = (
    ("nodes", Node),
    ("namespaces", Namespace),
    ("services", Service),
    ("replicaSets", ReplicaSet),
    ("statefulSets", StatefulSet),
    ("replicationControllers", ReplicationController),
    ("podDisruptionBudgets", PodDisruptionBudget),
    ("priorityClasses", PriorityClass),
    ("pods", Pod),
)


class EvaluateError(Exception):
    """The input document is not something we can answer (one line, names the field)."""


def _decode(cls: type[K], item: Any, where: str) -> K:
    if not isinstance(item, dict):
        raise EvaluateError(f"{where}: must be an object")
    try:
        return cls.from_dict(item)
    except DecodeError as e:
        raise EvaluateError(f"{where}.{e.field}: {e.message}") from None


def kube_version_of(doc: Mapping[str, Any], default: FeatureGates | None = None) -> FeatureGates:
    """The gates of the version an input document names (``"kubeVersion": "1.36"`` beside
    ``mode``); without it, ``default`` (``--kube-version``), else KUBESPREAD_KUBE_VERSION, else
    1.35. The document's own version wins: it says which scheduler answered it."""
    version = doc.get(KUBE_VERSION_KEY)
    if version is None:
        return default if default is not None else features_for()
    if not isinstance(version, str):
        raise EvaluateError(f'{KUBE_VERSION_KEY}: must be a string such as "1.36", got {version!r}')
    try:
        return features_for(version)
    except VersionError as e:
        raise EvaluateError(f"{KUBE_VERSION_KEY}: {e}") from None


def profile_for(config: Any, features: FeatureGates | None = None) -> Profile:
    """The profile an input's ``config`` asks for: the default plugins with the given args
    (``podTopologySpread`` → PodTopologySpread's args, and so on), answering as ``features``'
    version."""
    if config is None:
        config = {}
    if not isinstance(config, Mapping):
        raise EvaluateError("config: must be an object")
    plugins = config.get("plugins", "default")
    if plugins != "default":
        raise EvaluateError(f'config.plugins: only "default" is supported, got {plugins!r}')
    args = {k[0].upper() + k[1:]: v for k, v in config.items() if k not in _NOT_PLUGIN_ARGS}
    try:
        profile = default_profile(args, features=features)
    except ConfigError as e:
        raise EvaluateError(f"config: {e}") from None
    sampling = sampling_of(config)
    if sampling is None:
        return profile
    return dataclasses.replace(profile, percentage_of_nodes_to_score=sampling[0])


def sampling_of(config: Any) -> tuple[int, int] | None:
    """(percentageOfNodesToScore, parallelism) when the input's config asks for the real
    scheduler's node selection (either key present; defaults 0 = adaptive and 16), else None."""
    if not isinstance(config, Mapping) or not (PERCENTAGE_KEY in config or PARALLELISM_KEY in config):
        return None
    pct = config.get(PERCENTAGE_KEY, 0)
    if isinstance(pct, bool) or not isinstance(pct, int) or not 0 <= pct <= 100:
        raise EvaluateError(f"config.{PERCENTAGE_KEY}: must be an integer in [0, 100], got {pct!r}")
    parallelism = config.get(PARALLELISM_KEY, 16)
    if isinstance(parallelism, bool) or not isinstance(parallelism, int) or parallelism < 1:
        raise EvaluateError(
            f"config.{PARALLELISM_KEY}: must be an integer greater than zero, got {parallelism!r}"
        )
    return pct, parallelism


def parallelism_note(parallelism: int) -> str:
    """What an answer at another parallelism than 1 means."""
    return (
        f"parallelism {parallelism}: kube-scheduler's Filter threads race, so which nodes it finds "
        "and its pick among equal scores vary from run to run; kubespread answers as parallelism 1"
    )


def as_scheduled(pod: Pod, features: FeatureGates | None) -> Pod:
    """The pod as the version's scheduler reads it: before v1.34 (PodLevelResources off)
    kube-scheduler and its NodeInfo ignore spec.resources (SkipPodLevelResources), as if
    kube-apiserver had dropped it."""
    if features is not None and pod.spec.resources is not None and not features.enabled(POD_LEVEL_RESOURCES):
        pod.spec.resources = None
    return pod


@gc_paused()
def build_cluster(
    doc: Mapping[str, Any], *, consume: bool = False, features: FeatureGates | None = None
) -> ClusterState:
    """The input's cluster sections as a ClusterState, as ``features``' scheduler reads them.
    ``consume`` drops each item from the document once decoded, so a large input is not held
    twice (the bench's 100k pods)."""
    state = ClusterState()
    for section, cls in _SECTIONS:
        items = doc.get(section)
        if items is None:
            items = []
        if not isinstance(items, list):
            raise EvaluateError(f"{section}: must be a list")
        for i, item in enumerate(items):
            obj = _decode(cls, item, f"{section}[{i}]")
            if isinstance(obj, Pod):
                as_scheduled(obj, features)
            if consume:
                items[i] = None
            try:
                state.add(obj)
            except ClusterError as e:
                raise EvaluateError(f"{section}[{i}]: {e}") from None
    return state


def input_mode(doc: Mapping[str, Any]) -> str:
    if not isinstance(doc, Mapping):
        raise EvaluateError("input: must be a JSON object")
    mode = doc.get("mode", "evaluate")
    if not isinstance(mode, str) or mode not in MODES:
        raise EvaluateError(f"mode: must be one of {', '.join(MODES)}, got {mode!r}")
    return mode


@gc_paused()
def incoming_pods(doc: Mapping[str, Any], features: FeatureGates | None = None) -> list[Pod]:
    incoming = doc.get("incoming")
    if incoming is None:
        incoming = []
    if not isinstance(incoming, list):
        raise EvaluateError("incoming: must be a list")
    return [as_scheduled(_decode(Pod, item, f"incoming[{i}]"), features) for i, item in enumerate(incoming)]


def schedule_in_turn(
    cluster: ClusterState,
    profile: Profile,
    pods: Iterable[Pod],
    *,
    bind: bool,
    seed: int | None = None,
    timed: bool = True,
    schedule: Callable[..., Decision] = schedule_one,
    order: NodeOrder | None = None,
) -> Iterator[Decision]:
    """Schedule the pods one after another; with ``bind``, each scheduled pod is added and
    bound before the next is judged (the assume step), and the victims of a preemption are
    deleted (the preemptor stays out of the cluster: nominated, not bound), as the sequence
    mode asks. ``seed`` picks where each preemption's dry run starts among the potential
    nodes (their first when None). ``timed``: keep each cycle's timings in its Decision.
    ``schedule``: schedule_one's stand-in (``bench --overhead`` runs each cycle twice).
    ``order``: one scheduler instance's node order for every pod (the real scheduler's
    selection); None: every node, smallest-name ties."""
    offset_rng = random.Random(f"kubespread-preemption-{seed}") if seed is not None else None
    nominated: dict[str, list[Pod]] = {}
    for i, pod in enumerate(pods):
        decision = schedule(
            pod, cluster, profile, offset_rng=offset_rng, nominated=nominated, order=order, timed=timed
        )
        try:
            if bind and decision.selected is not None:
                cluster.add(pod)
                cluster.bind(pod.key, decision.selected)
            elif bind and decision.preemption is not None and decision.preemption.nominated_node:
                for victim in decision.preemption.victims:
                    cluster.delete_pod(victim.key)
                _nominate(nominated, pod, decision.preemption.nominated_node)
        except ClusterError as e:
            raise EvaluateError(f"incoming[{i}]: {e}") from None
        yield decision


def _nominate(nominated: dict[str, list[Pod]], pod: Pod, node: str) -> None:
    """The preemptor waits on its node, counted there by later pods of no higher priority;
    the lower-priority pods nominated to that node lose their nomination (prepareCandidate)."""
    priority = pod.spec.priority or 0
    nominated[node] = [p for p in nominated.get(node, []) if (p.spec.priority or 0) >= priority] + [pod]


def evaluate(
    doc: Mapping[str, Any], *, seed: int | None = None, features: FeatureGates | None = None
) -> dict[str, Any]:
    """Answer one conformance input document, as the version it names (else ``features``')."""
    mode = input_mode(doc)
    gates = kube_version_of(doc, features)
    profile = profile_for(doc.get("config"), gates)
    sampling = sampling_of(doc.get("config"))
    cluster = build_cluster(doc, features=gates)
    pods = incoming_pods(doc, gates)
    order = NodeOrder.of(cluster) if sampling is not None else None
    decisions = schedule_in_turn(cluster, profile, pods, bind=mode == "sequence", seed=seed, order=order)
    out: dict[str, Any] = {"results": [d.to_dict() for d in decisions]}
    if sampling is not None and sampling[1] != 1:
        out["note"] = parallelism_note(sampling[1])
    return out
