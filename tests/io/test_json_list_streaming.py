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


def _with_numbers(*numbers: str) -> str:
    """A list of pods whose priorities are these integer literals (too long for json.dumps)."""
    pods = [json.dumps(_pod(f"n{i}", spec={"containers": [], "priority": "@"})) for i in range(len(numbers))]
    items = ", ".join(p.replace('"@"', n) for p, n in zip(pods, numbers, strict=True))
    return '{"apiVersion": "v1", "items": [' + items + '], "kind": "List"}'


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
    # json's own conversion reads the list up to 3,999 digits; past that, read whole, as _json_int
    "integers of 3,999 digits": _with_numbers("9" * 3999, "-" + "9" * 3999),
    "an integer of 4,000 digits": _with_numbers("1", "9" * 4000),
    "a negative integer of 4,000 digits": _with_numbers("-" + "9" * 4000),
    "an integer of 4,400 digits": _with_numbers("9" * 4400, "2"),
    "trailing data": '{"items": [], "kind": "List"} x',
    "an item that is not a mapping": '{"items": [1, ' + json.dumps(_pod("i")) + '], "kind": "List"}',
}


def _whole(text: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    with monkeypatch.context() as m:
        m.setattr(loader, "_load_json_list", lambda read, source, validate: None)
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


FILE_TEXTS = {
    **TEXTS,
    "numbers and non-ASCII across pieces": json.dumps(
        {
            "apiVersion": "v1",
            "items": [_pod("é-ü"), _pod("j", status={"phase": "Running"})],
            "kind": "List",
            "metadata": {"resourceVersion": "12345678"},
            "x": 1234567,
        },
        ensure_ascii=False,
    ),
    "truncated": json.dumps({"apiVersion": "v1", "items": [_pod("k"), _pod("l")], "kind": "List"})[:-40],
}


@pytest.mark.parametrize("chunk", [1, 7, 1 << 22])
@pytest.mark.parametrize("text", FILE_TEXTS.values(), ids=FILE_TEXTS.keys())
def test_a_file_read_a_piece_at_a_time_or_whole_the_same(
    text: str, chunk: int, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "dump.json"
    path.write_text(text, encoding="utf-8")
    with monkeypatch.context() as m:
        m.setattr(loader, "_load_json_list", lambda read, source, validate: None)
        whole = load_text(text, str(path), json_only=True)
    monkeypatch.setattr(loader, "_CHUNK", chunk)
    assert _view(loader.load([path])) == _view(whole)


def test_invalid_utf8_in_a_file_is_said_as_when_read_whole(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "dump.json"
    good = json.dumps({"apiVersion": "v1", "items": [_pod("m")], "kind": "List"}).encode()
    path.write_bytes(good[:30] + b"\xff" + good[30:])
    monkeypatch.setattr(loader, "_CHUNK", 16)
    assert [str(p) for p in loader.load([path]).problems] == [
        f"{path}:1: cannot read: invalid UTF-8: byte 0xff at offset 30 (line 1, column 31)"
    ]


def test_a_dump_file_is_never_read_whole(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "dump.json"
    path.write_text(TEXTS["kubectl's order"])
    asked: list[int] = []
    pieces = loader._file_pieces

    def counted(f: Any) -> Any:
        read = pieces(f)

        def each(size: int) -> str:
            asked.append(size)
            return read(size)

        return each

    monkeypatch.setattr(loader, "_CHUNK", 64)
    monkeypatch.setattr(loader, "_file_pieces", counted)
    monkeypatch.setattr(loader.Path, "read_bytes", None)
    monkeypatch.setattr(loader.json, "loads", None)
    out = loader.load([path])
    assert [lo.obj.metadata.name for lo in out.objects] == ["a", "b"]
    assert len(asked) > 5 and max(asked) < 1024
