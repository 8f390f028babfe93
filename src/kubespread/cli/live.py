"""The long-running commands on a live cluster: ``scheduler``, ``controller`` and ``webhook``.

Each connects with a kubeconfig (or, in a pod, its service account), logs one line per action
to stderr, and stops cleanly on SIGTERM or Ctrl-C (exit 0). Object contents are never logged
at the default level.
"""

from __future__ import annotations

import logging
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from kubespread.api.model import long_lived
from kubespread.cli.common import err, scheduler_profiles_or_exit, server_features
from kubespread.cli.options import ContextOption, KubeVersionOption
from kubespread.cli.runtime import (
    KubeconfigOption,
    LogLevel,
    LogLevelOption,
    connect_or_exit,
    metrics_option,
    metrics_served,
    parse_metrics_address_or_exit,
    require_live_extra,
    setup_logging,
    stop_on_signals,
)
from kubespread.live.manifests import COMPONENTS_NAMESPACE
from kubespread.live.ports import CONTROLLER_METRICS_PORT, SCHEDULER_METRICS_PORT, WEBHOOK_METRICS_PORT

__all__ = ["controller_command", "manifests_command", "scheduler_command", "webhook_app"]


def scheduler_command(
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
    scheduler_name: Annotated[
        str,
        typer.Option(
            "--scheduler-name", metavar="NAME", help="Schedule the pods whose spec.schedulerName is this."
        ),
    ] = "kubespread",
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            metavar="FILE",
            help="A KubeSchedulerConfiguration: its profiles (by schedulerName) replace the default one.",
        ),
    ] = None,
    seed: Annotated[
        int,
        typer.Option(
            "--seed", metavar="N", help="Tie-break seed: `schedule --seed` with the same value picks alike."
        ),
    ] = 0,
    leader_elect: Annotated[
        bool, typer.Option("--leader-elect", help="Run only while holding a coordination.k8s.io Lease.")
    ] = False,
    lease_namespace: Annotated[
        str,
        typer.Option(
            "--leader-elect-namespace",
            metavar="NAMESPACE",
            help="Namespace of the Lease (the one `kubespread manifests` gives the Lease's Role).",
        ),
    ] = COMPONENTS_NAMESPACE,
    metrics_bind_address: Annotated[
        str, metrics_option(SCHEDULER_METRICS_PORT)
    ] = f"0.0.0.0:{SCHEDULER_METRICS_PORT}",
    log_level: LogLevelOption = LogLevel.info,
    kube_version: KubeVersionOption = None,
) -> None:
    """Run as a secondary scheduler: watch pending pods of --scheduler-name, decide with the
    engine, bind them through the API, record Scheduled / FailedScheduling Events. It decides
    as kube-scheduler of the API server's version (/version) unless --kube-version says."""
    require_live_extra()
    from kubespread.live.kube import ApiError
    from kubespread.live.leader import LeaderElector
    from kubespread.live.metrics import SchedulerMetrics
    from kubespread.live.scheduler import SHUTDOWN_BIND_SECONDS, SecondaryScheduler, instance_name
    from kubespread.scheduler.config import default_profile

    setup_logging(log_level)
    address = parse_metrics_address_or_exit(metrics_bind_address)
    scheduler_profiles_or_exit(config)  # a bad configuration is said before anything connects
    metrics = SchedulerMetrics()
    long_lived()  # it runs until stopped: what it builds and drops must not stay frozen
    # bound before connecting: a port in use is said at once
    with metrics_served(metrics, address, "scheduler"):
        api = connect_or_exit(kubeconfig, context)
        try:
            features = kube_version or server_features(api.server_version())
        except ApiError as e:
            err.print(f"error: cannot reach the API server: {e.message}", markup=False, highlight=False)
            raise typer.Exit(1) from None
        profiles = scheduler_profiles_or_exit(config, features=features)
        if profiles is None:
            profiles = {scheduler_name: default_profile(features=features)}
        stop = stop_on_signals()
        identity = instance_name()
        sched = SecondaryScheduler(api, profiles, seed=seed, stop=stop, identity=identity, metrics=metrics)
        leader = None
        if leader_elect:
            lease = "kubespread-scheduler" if len(profiles) > 1 else next(iter(profiles))
            leader = LeaderElector(api, namespace=lease_namespace, name=lease, identity=identity, stop=stop)
            leader.start()
        try:
            sched.start()
        except ApiError as e:
            err.print(f"error: {e}", markup=False, highlight=False)
            raise typer.Exit(1) from None
        sched.run(leader)
        stop.set()
        refused = leader.refused if leader is not None else None
        if refused is not None:
            # a Lease it may not touch: it cannot lead, now or later; say so and stop
            sched.shutdown(bind_timeout=0.0, event_timeout=0.0)
            where = f"leader election: Lease {lease_namespace}/{leader.lease_name}" if leader else ""
            err.print(
                f"error: {refused.advice(where)}; the printed Role grants it in the components' "
                f"namespace ({COMPONENTS_NAMESPACE} by default: --leader-elect-namespace)",
                markup=False,
                highlight=False,
            )
            raise typer.Exit(1)
        # binds in flight finish, buffered Events are written (each within a deadline); a
        # scheduler that lost its Lease binds nothing more: another one schedules those pods
        lost = leader is not None and leader.lost.is_set()
        sched.shutdown(bind_timeout=0.0 if lost else SHUTDOWN_BIND_SECONDS)
        if leader is not None:
            leader.join(timeout=5)
        s = sched.stats
        logging.getLogger("kubespread.scheduler").info(
            "stopped: %d attempts, %d bound, %d unschedulable, %d bind conflicts, %d bind errors",
            s.attempts,
            s.bound,
            s.unschedulable,
            s.bind_conflicts,
            s.bind_errors,
        )
        if leader is not None and leader.lost.is_set():
            raise typer.Exit(1)


def controller_command(
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
    metrics_bind_address: Annotated[
        str, metrics_option(CONTROLLER_METRICS_PORT)
    ] = f"0.0.0.0:{CONTROLLER_METRICS_PORT}",
    log_level: LogLevelOption = LogLevel.info,
) -> None:
    """Run the WorkloadSpread controller: keep subset status, clean up stale creating and
    deleting entries, reschedule pods a subset cannot hold, set pod-deletion-cost."""
    require_live_extra()
    from kubespread.live.kube import ApiError
    from kubespread.live.metrics import ControllerMetrics
    from kubespread.live.workloadspread import LiveController

    setup_logging(log_level)
    address = parse_metrics_address_or_exit(metrics_bind_address)
    metrics = ControllerMetrics()
    long_lived()  # it runs until stopped: what it builds and drops must not stay frozen
    # bound before connecting: a port in use is said at once
    with metrics_served(metrics, address, "workloadspread"):
        api = connect_or_exit(kubeconfig, context)
        stop = stop_on_signals()
        controller = LiveController(api, stop=stop, metrics=metrics)
        try:
            controller.start()
        except ApiError as e:
            err.print(f"error: {e}", markup=False, highlight=False)
            raise typer.Exit(1) from None
        controller.run()
        controller.recorder.close(5.0)  # buffered Events get a few seconds to be written


class MatchLabelKeys(StrEnum):
    auto = "auto"
    on = "on"
    off = "off"


class HardAntiAffinityLimit(StrEnum):
    off = "off"
    design = "design"
    strict = "strict"


#: connections the webhook keeps to the API server: reviews run in parallel, each may read
WEBHOOK_API_CONNECTIONS = 64

#: the first kube-apiserver that merges matchLabelKeys itself (KEP-3243's
#: MatchLabelKeysInPodTopologySpreadSelectorMerge, on by default)
MERGING_MINOR = 34

webhook_app = typer.Typer(
    help="The admission webhook (HTTPS AdmissionReview v1): run it, or print its manifests.",
    no_args_is_help=False,
    invoke_without_command=True,
)


@webhook_app.callback()
def webhook_command(
    ctx: typer.Context,
    tls_cert: Annotated[
        Path | None, typer.Option("--tls-cert", metavar="FILE", help="PEM certificate (chain).")
    ] = None,
    tls_key: Annotated[
        Path | None, typer.Option("--tls-key", metavar="FILE", help="PEM private key.")
    ] = None,
    port: Annotated[int, typer.Option("--port", metavar="PORT", help="HTTPS port.")] = 9443,
    host: Annotated[
        str,
        typer.Option(
            "--host",
            metavar="ADDRESS",
            help="Address to listen on; the default 0.0.0.0 is every interface (127.0.0.1: this host only).",
        ),
    ] = "0.0.0.0",
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
    workload_spread: Annotated[
        bool,
        typer.Option(
            "--workloadspread/--no-workloadspread",
            help="Place pods into WorkloadSpread subsets (needs the API: watches and status updates).",
        ),
    ] = True,
    match_label_keys: Annotated[
        MatchLabelKeys,
        typer.Option(
            "--match-label-keys",
            metavar="MODE",
            help="Merge matchLabelKeys into selectors; auto: only where the API server does not "
            f"(before v1.{MERGING_MINOR}).",
        ),
    ] = MatchLabelKeys.auto,
    hard_anti_affinity: Annotated[
        HardAntiAffinityLimit,
        typer.Option(
            "--hard-anti-affinity",
            metavar="MODE",
            help="Refuse required anti-affinity beyond a node: design (terms over all namespaces), "
            "strict (every term), or off.",
        ),
    ] = HardAntiAffinityLimit.design,
    request_timeout: Annotated[
        float,
        typer.Option("--request-timeout", metavar="SECONDS", help="Seconds a connection may stay silent."),
    ] = 10.0,
    reuse_port: Annotated[
        bool,
        typer.Option(
            "--reuse-port",
            help="Share the port with other webhook processes on this host (SO_REUSEPORT): the "
            "kernel spreads connections among them, each process using a core.",
        ),
    ] = False,
    metrics_bind_address: Annotated[
        str, metrics_option(WEBHOOK_METRICS_PORT)
    ] = f"0.0.0.0:{WEBHOOK_METRICS_PORT}",
    log_level: LogLevelOption = LogLevel.info,
    kube_version: KubeVersionOption = None,
) -> None:
    """Serve /mutate-pods, /validate-pods, /validate-workloadspreads and /healthz over TLS.
    --kube-version (else the API server's /version) decides --match-label-keys auto."""
    if ctx.invoked_subcommand is not None:
        return
    require_live_extra()
    from kubespread.admission.framework import AdmissionOptions
    from kubespread.api.features import MATCH_LABEL_KEYS_SELECTOR_MERGE
    from kubespread.controllers.workloadspread import WorkloadSpreadWebhook
    from kubespread.live.kube import ApiError
    from kubespread.live.metrics import WebhookMetrics, reflectors_synced
    from kubespread.live.webhook import AdmissionHandlers
    from kubespread.live.webhook_server import WebhookConfigError, serve, tls_context
    from kubespread.live.workloadspread import LiveWorkloadSpreadClient

    setup_logging(log_level)
    if tls_cert is None or tls_key is None:
        err.print("error: the webhook serves TLS only: give --tls-cert FILE and --tls-key FILE")
        raise typer.Exit(2)
    address = parse_metrics_address_or_exit(metrics_bind_address)
    try:  # a bad certificate is reported before anything connects
        tls_context(tls_cert, tls_key)
    except WebhookConfigError as e:
        err.print(f"error: {e}", markup=False, highlight=False)
        raise typer.Exit(1) from None
    metrics = WebhookMetrics()
    long_lived()  # it runs until stopped: what it builds and drops must not stay frozen
    with metrics_served(metrics, address, "webhook"):
        stop = stop_on_signals()
        api = None
        if workload_spread or (match_label_keys is MatchLabelKeys.auto and kube_version is None):
            api = connect_or_exit(kubeconfig, context)
        merge = match_label_keys is MatchLabelKeys.on
        if match_label_keys is MatchLabelKeys.auto and kube_version is not None:
            # kube-apiserver of that version merges them itself from v1.34
            merge = not kube_version.enabled(MATCH_LABEL_KEYS_SELECTOR_MERGE)
        elif match_label_keys is MatchLabelKeys.auto and api is not None:
            try:
                minor = api.server_minor_version()
            except ApiError as e:  # refused credentials: said before any guess is logged
                err.print(f"error: {e}", markup=False, highlight=False)
                raise typer.Exit(1) from None
            merge = minor is not None and minor < MERGING_MINOR
            logging.getLogger("kubespread.webhook").info(
                "API server v1.%s: matchLabelKeys merged by %s",
                minor if minor is not None else "?",
                "this webhook" if merge else "the API server",
            )
        ws_webhook = None
        if workload_spread and api is not None:
            api.set_pool_size(WEBHOOK_API_CONNECTIONS)
            client = LiveWorkloadSpreadClient(api)
            metrics.health.add_readiness("informer-sync", reflectors_synced(lambda: client.reflectors))
            try:
                client.start(stop)
            except ApiError as e:
                err.print(f"error: {e}", markup=False, highlight=False)
                raise typer.Exit(1) from None
            ws_webhook = WorkloadSpreadWebhook(client, cluster_lock=client.cache.lock)
        options = AdmissionOptions(
            hard_anti_affinity_limit=hard_anti_affinity is HardAntiAffinityLimit.design,
            limit_pod_hard_anti_affinity_topology=hard_anti_affinity is HardAntiAffinityLimit.strict,
        )
        handlers = AdmissionHandlers(
            ws_webhook, options=options, merge_match_label_keys=merge, metrics=metrics
        )
        try:
            serve(
                handlers,
                cert=tls_cert,
                key=tls_key,
                host=host,
                port=port,
                request_timeout=request_timeout,
                stop=stop,
                health=metrics.health,
                reuse_port=reuse_port,
            )
        except (WebhookConfigError, OSError) as e:
            err.print(f"error: {e}", markup=False, highlight=False)
            raise typer.Exit(1) from None


ManifestsNamespaceOption = Annotated[
    str, typer.Option("--namespace", metavar="NAMESPACE", help="Where the components run.")
]
ImageOption = Annotated[str, typer.Option("--image", metavar="IMAGE", help="Container image.")]


def webhook_url(value: str | None) -> str | None:
    """``--url`` as kube-apiserver validates a webhook's clientConfig.url: https only, a host,
    no user information, query or fragment (the API server would refuse the configuration)."""
    if value is None:
        return None
    from urllib.parse import urlsplit

    parts = urlsplit(value)
    if parts.scheme != "https":
        raise typer.BadParameter(
            f"{value!r}: 'https' is the only allowed URL scheme (the API server calls webhooks over TLS)"
        )
    if not parts.hostname:
        raise typer.BadParameter(f"{value!r}: host must be specified")
    if parts.username is not None or parts.password is not None:
        raise typer.BadParameter(f"{value!r}: user information is not permitted in the URL")
    if parts.query or value.endswith("?"):
        raise typer.BadParameter(f"{value!r}: query parameters are not allowed")
    if parts.fragment or "#" in value:
        raise typer.BadParameter(f"{value!r}: fragments are not permitted")
    return value


UrlOption = Annotated[
    str | None,
    typer.Option(
        "--url",
        metavar="URL",
        callback=webhook_url,
        help="Call the webhook at this https base URL instead of its in-cluster Service.",
    ),
]
CaBundleOption = Annotated[
    Path | None,
    typer.Option("--ca-bundle", metavar="FILE", help="PEM CA the API server verifies the webhook with."),
]
FailurePolicyOption = Annotated[
    str,
    typer.Option(
        "--failure-policy",
        metavar="POLICY",
        help="Fail or Ignore: a pod creation in a namespace with a WorkloadSpread, and a WorkloadSpread "
        "write, while the webhook cannot answer (deletions and evictions are always Ignore).",
    ),
]
MergeOption = Annotated[
    bool,
    typer.Option(
        "--merge-match-label-keys",
        help="Also call the webhook for pod creations in every namespace to merge matchLabelKeys "
        f"(API servers before v1.{MERGING_MINOR}; failurePolicy Ignore).",
    ),
]
HardAntiAffinityOption = Annotated[
    HardAntiAffinityLimit,
    typer.Option(
        "--hard-anti-affinity",
        metavar="MODE",
        help="Register the hard anti-affinity limit for pod creations everywhere (design or strict; "
        "failurePolicy Ignore), or not (off).",
    ),
]


class Component(StrEnum):
    webhook = "webhook"
    controller = "controller"
    scheduler = "scheduler"
    rebalancer = "rebalancer"


def _print_manifests(
    components: list[str],
    *,
    namespace: str,
    image: str,
    url: str | None,
    ca_bundle: Path | None,
    failure_policy: str,
    merge_match_label_keys: bool,
    hard_anti_affinity: HardAntiAffinityLimit,
) -> None:
    from kubespread.live.manifests import ca_bundle_problem, manifests, render

    bundle = None
    if ca_bundle is not None:
        try:
            bundle = ca_bundle.read_bytes()
        except OSError as e:
            err.print(f"error: {ca_bundle}: {e.strerror}", markup=False, highlight=False)
            raise typer.Exit(1) from None
        problem = ca_bundle_problem(bundle)
        if problem is not None:
            err.print(f"error: --ca-bundle {ca_bundle}: {problem}", markup=False, highlight=False)
            raise typer.Exit(1)
    if failure_policy not in ("Fail", "Ignore"):
        err.print(f"error: --failure-policy: must be Fail or Ignore, not {failure_policy!r}", markup=False)
        raise typer.Exit(2)
    docs = manifests(
        components,
        namespace=namespace,
        image=image,
        url=url,
        ca_bundle=bundle,
        failure_policy=failure_policy,
        merge_match_label_keys=merge_match_label_keys,
        hard_anti_affinity=hard_anti_affinity.value,
    )
    typer.echo(render(docs), nl=False)


def manifests_command(
    component: Annotated[
        list[Component] | None,
        typer.Option(
            "--component",
            metavar="NAME",
            help="webhook, controller, scheduler or rebalancer; repeat for several "
            "(default: the first three; the rebalancer evicts pods, so it is asked for).",
        ),
    ] = None,
    namespace: ManifestsNamespaceOption = "kubespread-system",
    image: ImageOption = "kubespread:latest",
    url: UrlOption = None,
    ca_bundle: CaBundleOption = None,
    failure_policy: FailurePolicyOption = "Fail",
    merge_match_label_keys: MergeOption = False,
    hard_anti_affinity: HardAntiAffinityOption = HardAntiAffinityLimit.off,
) -> None:
    """Print what deploys kubespread: the namespace, the WorkloadSpread CRD, each component's
    ServiceAccount, ClusterRole and Deployment, the webhook's Service and configurations."""
    default = [c for c in Component if c is not Component.rebalancer]
    chosen = [c.value for c in Component if c in (component or default)]
    if "webhook" in chosen and "controller" not in chosen:
        err.print(
            "warning: the webhook is called only in namespaces the controller labels: run the controller too",
            markup=False,
        )
    _print_manifests(
        chosen,
        namespace=namespace,
        image=image,
        url=url,
        ca_bundle=ca_bundle,
        failure_policy=failure_policy,
        merge_match_label_keys=merge_match_label_keys,
        hard_anti_affinity=hard_anti_affinity,
    )


@webhook_app.command(
    "manifests",
    short_help="Print the CRD, RBAC, Deployments and webhook configurations (with the controller)",
)
def webhook_manifests_command(
    namespace: ManifestsNamespaceOption = "kubespread-system",
    image: ImageOption = "kubespread:latest",
    url: UrlOption = None,
    ca_bundle: CaBundleOption = None,
    failure_policy: FailurePolicyOption = "Fail",
    with_scheduler: Annotated[
        bool, typer.Option("--with-scheduler", help="Add the secondary scheduler's account and Deployment.")
    ] = False,
    merge_match_label_keys: MergeOption = False,
    hard_anti_affinity: HardAntiAffinityOption = HardAntiAffinityLimit.off,
) -> None:
    """Print the webhook and the WorkloadSpread controller it needs (it labels the namespaces
    the webhook is called for): `kubespread manifests --component webhook --component
    controller`, plus the scheduler with --with-scheduler."""
    from kubespread.live.manifests import webhook_components

    _print_manifests(
        list(webhook_components(with_scheduler)),
        namespace=namespace,
        image=image,
        url=url,
        ca_bundle=ca_bundle,
        failure_policy=failure_policy,
        merge_match_label_keys=merge_match_label_keys,
        hard_anti_affinity=hard_anti_affinity,
    )
