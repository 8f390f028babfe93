"""kubectl's -l selector syntax, parsed into the same compiled Selector the API types give."""

from __future__ import annotations

import pytest

from kubespread.api.selectors import LabelSelector, compile_label_selector, parse_selector


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [
        ("app=web", {"app": "web"}, True),
        ("app==web", {"app": "api"}, False),
        ("app!=web", {}, True),
        ("app!=web", {"app": "web"}, False),
        ("env in (prod, staging)", {"env": "staging"}, True),
        ("env notin (prod)", {"env": "prod"}, False),
        ("gpu", {"gpu": ""}, True),
        ("!gpu", {"gpu": "x"}, False),
        ("cores>8", {"cores": "16"}, True),
        ("cores<8", {"cores": "16"}, False),
        ("app=web,!canary", {"app": "web", "canary": "1"}, False),
        ("", {"anything": "x"}, True),
    ],
)
def test_parse_and_match(text: str, labels: dict[str, str], expected: bool) -> None:
    assert parse_selector(text).matches(labels) is expected


def test_parsed_equals_compiled_api_selector() -> None:
    api = LabelSelector.from_dict(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "env", "operator": "In", "values": ["a", "b"]}],
        }
    )
    assert parse_selector("env in (b,a), app=web") == compile_label_selector(api)


@pytest.mark.parametrize("text", ["app=web,,", "a=(b", "in (x)", "a b"])
def test_bad_syntax_is_a_value_error_with_position(text: str) -> None:
    with pytest.raises(ValueError, match=r"invalid label selector .* at column"):
        parse_selector(text)
