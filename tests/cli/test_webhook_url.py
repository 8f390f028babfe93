"""``--url`` of the webhook's manifests is held to what kube-apiserver accepts in a webhook's
clientConfig.url (https, a host, no user information, query or fragment): a usage error
here rather than a configuration the API server refuses at apply time."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kubespread.cli.app import app


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://hooks.example.com", "'https' is the only allowed URL scheme"),
        ("hooks.example.com", "'https' is the only allowed URL scheme"),
        ("https://", "host must be specified"),
        ("https://user:secret@hooks.example.com", "user information is not permitted in the URL"),
        ("https://hooks.example.com/?x=1", "query parameters are not allowed"),
        ("https://hooks.example.com/#top", "fragments are not permitted"),
    ],
)
def test_a_url_the_api_server_refuses_is_a_usage_error(url: str, why: str) -> None:
    for command in (["webhook", "manifests"], ["manifests", "webhook"]):
        r = CliRunner().invoke(app, [*command, "--url", url])
        assert r.exit_code == 2, (command, r.output)
        assert why in r.stderr and r.stdout == ""


def test_an_https_url_is_where_the_api_server_calls() -> None:
    r = CliRunner().invoke(app, ["webhook", "manifests", "--url", "https://hooks.example.com:8443/base/"])
    assert r.exit_code == 0, r.output
    assert "url: https://hooks.example.com:8443/base/mutate-pods" in r.stdout
