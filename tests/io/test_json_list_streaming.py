"""A JSON list (``kubectl get -o json``) is decoded item by item as it is read; every JSON
text gets what reading it whole gives: the same objects, problems and warnings."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubespread.io import loader
from kubespread.io.loader import load_text


def _pod(name: str, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
        **extra,
    }


ITEMS = [_pod("a"), {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}, _pod("b")]
TEXTS = {
    "kubectl's order": json.dumps(
        {"apiVersion": "v1", "items": ITEMS, "kind": "List", "metadata": {}}, indent=4
    ),
    "kind first, compact": json.dumps({"kind": "PodList", "apiVersion": "v1", "items": ITEMS}),
    "typed list, items without kind": json.dumps(
        {
            "apiVersion": "v1",
            "items": [{k: v for k, v in _pod("c").items() if k != "kind"}],
            "kind": "PodList",
        }
    ),
    "empty list": '{"apiVersion": "v1", "items": [], "kind": "List"}',
    "not a list": json.dumps({**_pod("d"), "items": [1, 2]}),
    "a single object": json.dumps(_pod("e")),
    "an unknown field and a duplicate key": '{"items": [{"apiVersion": "v1", "kind": "Pod", "metadata": '
    '{"name": "f", "name": "g"}, "spec": {"containers": [{"name": "c", "image": "x"}]}, "bogus": 1}], '
    '"kind": "List"}',
    "a duplicate top-level key": '{"items": [], "items": [], "kind": "List"}',
    "malformed after an item": '{"items": [' + json.dumps(_pod("h")) + ', {oops}], "kind": "List"}',
    "trailing data": '{"items": [], "kind": "List"} x',
    "an item that is not a mapping": '{"items": [1, ' + json.dumps(_pod("i")) + '], "kind": "List"}',
}


def _whole(text: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    with monkeypatch.context() as m:
        m.setattr(loader, "_load_json_list", lambda text, source, validate: None)
        return load_text(text, "dump.json", json_only=True)


def _view(manifests: Any) -> tuple[list[Any], list[str]]:
    return [(lo.obj.to_dict(), lo.line) for lo in manifests.objects], [str(p) for p in manifests.problems]


@pytest.mark.parametrize("text", TEXTS.values(), ids=TEXTS.keys())
def test_read_item_by_item_or_whole_the_same(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _view(load_text(text, "dump.json", json_only=True)) == _view(_whole(text, monkeypatch))


def test_a_kubectl_list_is_read_item_by_item(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    add = loader._add_document

    def counted(data: Any, *args: Any) -> None:
        seen.append(len(seen))
        add(data, *args)

    monkeypatch.setattr(loader, "_add_document", counted)
    monkeypatch.setattr(loader.json, "loads", None)  # the whole text is never parsed at once
    out = load_text(TEXTS["kubectl's order"], "dump.json", json_only=True)
    assert [lo.obj.metadata.name for lo in out.objects] == ["a", "b"]
    assert [str(p) for p in out.problems] == [
        "dump.json: skipped 1 object of unknown kind Widget (example.com/v1)"
    ]
    assert len(seen) == 3
