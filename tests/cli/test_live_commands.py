"""The long-running live commands refuse bad input with a message and an exit code, never a
traceback: a missing optional extra, a missing certificate, an unknown failure policy."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kubespread.cli.app import app


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


COMMANDS = [["scheduler"], ["controller"], ["webhook", "--tls-cert", "c", "--tls-key", "k"]]


@pytest.mark.parametrize("command", COMMANDS)
def test_without_the_live_extra_each_command_says_what_to_install(
    command: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "kubernetes" else real(name, *a)
    )
    code, output = run(*command)
    assert code == 1
    assert "kubernetes not installed" in output and "pip install 'kubespread[live]'" in output


def test_the_webhook_serves_tls_only() -> None:
    code, output = run("webhook", "--no-workloadspread", "--match-label-keys", "off")
    assert code == 2
    assert "TLS only: give --tls-cert FILE and --tls-key FILE" in output


def test_a_missing_certificate_is_named(tmp_path: Path) -> None:
    code, output = run(
        "webhook",
        "--tls-cert",
        str(tmp_path / "nope.crt"),
        "--tls-key",
        str(tmp_path / "nope.key"),
        "--no-workloadspread",
        "--match-label-keys",
        "off",
    )
    assert code == 1
    assert f"TLS certificate file {tmp_path / 'nope.crt'}: not found" in output


#: a self-signed P-256 certificate (a test CA's; its key was thrown away)
CA_PEM = """\
-----BEGIN CERTIFICATE-----
MIIBkDCCATWgAwIBAgIUTZ1ZzeaMGCqySPiD7s1JDTilsX8wCgYIKoZIzj0EAwIw
HTEbMBkGA1UEAwwSa3ViZXNwcmVhZC10ZXN0LWNhMB4XDTI2MTEyODA3MzU0MVoX
DTM2MTEyNTA3MzU0MVowHTEbMBkGA1UEAwwSa3ViZXNwcmVhZC10ZXN0LWNhMFkw
EwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEUnUEhuKxAhTganS9361xl8ULKC+yVjmS
aFa8GSFpZPmWytI8byrB9k5NbPWuOo+6uyh0R0QcgG4I5lb/Ztu7+KNTMFEwHQYD
VR0OBBYEFK31Dx4WvTxi9/k67Vwog/PKvyMLMB8GA1UdIwQYMBaAFK31Dx4WvTxi
9/k67Vwog/PKvyMLMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSQAwRgIh
AOLcaAj0UIPuAaJUN2GtPP2fcDd5JM6Ajq45QS6hsMm2AiEAgWnxKHGY9bB+pMQL
CEC3NbFcce3m3XkyaCxdBC6jjJI=
-----END CERTIFICATE-----
"""


def test_manifests_need_no_cluster_and_point_at_the_url_given(tmp_path: Path) -> None:
    ca = tmp_path / "ca.crt"
    ca.write_text(CA_PEM)
    code, output = run("webhook", "manifests", "--url", "https://10.0.0.5:9443", "--ca-bundle", str(ca))
    assert code == 0
    docs = [d for d in yaml.safe_load_all(output) if d]
    hooks = [h for d in docs if d["kind"].endswith("WebhookConfiguration") for h in d["webhooks"]]
    assert {h["clientConfig"]["url"] for h in hooks} == {
        "https://10.0.0.5:9443/mutate-pods",
        "https://10.0.0.5:9443/validate-pods",
        "https://10.0.0.5:9443/validate-workloadspreads",
    }


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"not a certificate\n", "not a PEM certificate"),
        (b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", "not a PEM certificate"),
        (b"\x30\x82\x01\x90\xff", "not PEM text"),
        (CA_PEM.encode() + b"-----BEGIN PRIVATE KEY-----\nMIGH\n-----END PRIVATE KEY-----\n", "private key"),
    ],
)
def test_a_ca_bundle_that_is_not_a_pem_certificate_is_refused(
    tmp_path: Path, content: bytes, problem: str
) -> None:
    """Issue 36: the API server takes any bytes as caBundle and fails only on the first call."""
    ca = tmp_path / "ca.crt"
    ca.write_bytes(content)
    code, output = run("webhook", "manifests", "--url", "https://10.0.0.5:9443", "--ca-bundle", str(ca))
    assert code == 1
    assert f"error: --ca-bundle {ca}: " in output and problem in output
    assert "WebhookConfiguration" not in output and "Traceback" not in output


def deployments(output: str) -> set[str]:
    return {d["metadata"]["name"] for d in yaml.safe_load_all(output) if d and d["kind"] == "Deployment"}


def test_manifests_print_the_components_asked_for_and_all_three_by_default() -> None:
    code, output = run("manifests")
    assert code == 0
    assert deployments(output) == {"kubespread-webhook", "kubespread-controller", "kubespread-scheduler"}
    code, output = run("manifests", "--component", "scheduler", "--component", "controller")
    assert code == 0 and deployments(output) == {"kubespread-controller", "kubespread-scheduler"}
    assert "WebhookConfiguration" not in output
    code, output = run("webhook", "manifests", "--with-scheduler")
    assert code == 0 and len(deployments(output)) == 3
    code, output = run("webhook", "manifests")
    assert code == 0 and deployments(output) == {"kubespread-webhook", "kubespread-controller"}


def test_the_webhook_without_the_controller_is_printed_with_a_warning() -> None:
    result = CliRunner().invoke(app, ["manifests", "--component", "webhook"])
    assert result.exit_code == 0
    assert "warning: the webhook is called only in namespaces the controller labels" in result.output


def test_an_unknown_component_or_limit_is_refused() -> None:
    code, output = run("manifests", "--component", "descheduler")
    assert code == 2 and "descheduler" in output and "Traceback" not in output
    code, output = run("manifests", "--hard-anti-affinity", "zone")
    assert code == 2 and "Traceback" not in output


def test_an_unknown_failure_policy_is_refused() -> None:
    code, output = run("webhook", "manifests", "--failure-policy", "Sometimes")
    assert code == 2
    assert "--failure-policy" in output


@pytest.mark.parametrize("command", COMMANDS)
def test_a_bad_metrics_address_is_refused_before_anything_connects(command: list[str]) -> None:
    code, output = run(*command, "--metrics-bind-address", "10251")
    assert code == 2
    assert "--metrics-bind-address '10251': not HOST:PORT" in output
    assert "Traceback" not in output


@pytest.mark.parametrize("command", [["scheduler"], ["controller"]])
def test_a_metrics_port_in_use_is_refused_before_connecting(command: list[str], tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, output = run(
            *command,
            "--metrics-bind-address",
            f"127.0.0.1:{port}",
            "--kubeconfig",
            str(tmp_path / "never-read"),
        )
    assert code == 1
    assert f"--metrics-bind-address: metrics address 127.0.0.1:{port}:" in output
    assert "in use" in output and "Traceback" not in output


@pytest.mark.parametrize("command", [["scheduler"], ["controller"]])
def test_the_metrics_port_is_let_go_when_the_command_exits(command: list[str], tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # the metrics server is up before connecting; connecting fails (no such kubeconfig)
    code, output = run(
        *command, "--metrics-bind-address", f"127.0.0.1:{port}", "--kubeconfig", str(tmp_path / "missing")
    )
    assert code == 1 and "Traceback" not in output
    with socket.socket() as again:
        again.bind(("127.0.0.1", port))  # free again: the server was shut down on the way out


@pytest.mark.parametrize("command", [["scheduler"], ["controller"]])
def test_a_live_component_freezes_nothing_it_builds(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A live component runs until stopped, building and dropping simulations: once it
    starts, ``gc_paused`` no longer freezes (a one-shot command's executable lets it)."""
    from kubespread.api import model

    monkeypatch.setattr(model, "_FREEZING", True)  # as the executable's collect_less leaves it
    code, output = run(
        *command, "--metrics-bind-address", "127.0.0.1:0", "--kubeconfig", str(tmp_path / "none")
    )
    assert code == 1 and "Traceback" not in output  # connecting failed, after it started
    assert model._FREEZING is False
