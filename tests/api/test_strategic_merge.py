"""kubespread.api.patch: strategic merge patch of Pod-shaped JSON, as apimachinery applies it."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubespread.api.core import Pod
from kubespread.api.patch import PatchError, strategic_merge_patch


def pod(**spec: Any) -> dict[str, Any]:
    s: dict[str, Any] = {
        "containers": [
            {
                "name": "main",
                "image": "nginx:1.27",
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
            },
            {"name": "sidecar", "image": "envoy:1.30"},
        ],
        "tolerations": [{"key": "dedicated", "operator": "Exists"}],
    }
    s.update(spec)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-1",
            "namespace": "default",
            "labels": {"app": "web", "tier": "front"},
            "annotations": {"note": "x"},
            "finalizers": ["a", "b"],
        },
        "spec": s,
    }


def main(p: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in p["spec"]["containers"] if c["name"] == "main")


# --- maps ----------------------------------------------------------------------------------------------


def test_labels_and_annotations_merge() -> None:
    got = strategic_merge_patch(
        pod(), {"metadata": {"labels": {"subset": "a", "tier": "back"}, "annotations": {"extra": "y"}}}
    )
    assert got["metadata"]["labels"] == {"app": "web", "tier": "back", "subset": "a"}
    assert got["metadata"]["annotations"] == {"note": "x", "extra": "y"}
    assert got["metadata"]["name"] == "web-1"
    assert got["spec"] == pod()["spec"]


def test_null_deletes_a_key() -> None:
    got = strategic_merge_patch(pod(), {"metadata": {"labels": {"tier": None}, "annotations": None}})
    assert got["metadata"]["labels"] == {"app": "web"}
    assert "annotations" not in got["metadata"]


def test_null_that_deletes_nothing_is_dropped() -> None:
    got = strategic_merge_patch(
        pod(), {"metadata": {"labels": {"gone": None}}, "spec": {"nodeSelector": {"a": "1", "b": None}}}
    )
    assert got["metadata"]["labels"] == {"app": "web", "tier": "front"}
    assert got["spec"]["nodeSelector"] == {"a": "1"}


def test_patch_replace_directive_replaces_a_map() -> None:
    got = strategic_merge_patch(pod(), {"metadata": {"labels": {"$patch": "replace", "only": "this"}}})
    assert got["metadata"]["labels"] == {"only": "this"}


def test_patch_delete_directive_empties_a_map() -> None:
    got = strategic_merge_patch(pod(), {"metadata": {"annotations": {"$patch": "delete"}}})
    assert got["metadata"]["annotations"] == {}


def test_directives_do_not_reach_a_new_value() -> None:
    got = strategic_merge_patch(
        {"spec": {}}, {"spec": {"affinity": {"nodeAffinity": {"$patch": "replace"}, "podAffinity": {}}}}
    )
    assert got["spec"]["affinity"] == {"podAffinity": {}}


def test_retain_keys_clears_the_keys_it_does_not_list() -> None:
    original = {"spec": {"volumes": [{"name": "data", "emptyDir": {}}]}}
    patch = {
        "spec": {
            "volumes": [{"name": "data", "$retainKeys": ["name", "hostPath"], "hostPath": {"path": "/d"}}]
        }
    }
    got = strategic_merge_patch(original, patch)
    assert got["spec"]["volumes"] == [{"name": "data", "hostPath": {"path": "/d"}}]


# --- lists with a merge key ----------------------------------------------------------------------------


def test_container_resources_merge_by_container_name() -> None:
    """The proposal's "patch container resources": limits are added, requests kept."""
    patch = {
        "spec": {"containers": [{"name": "main", "resources": {"limits": {"cpu": "2", "memory": "800Mi"}}}]}
    }
    got = strategic_merge_patch(pod(), patch)
    assert main(got)["resources"] == {
        "requests": {"cpu": "100m", "memory": "128Mi"},
        "limits": {"cpu": "2", "memory": "800Mi"},
    }
    assert [c["name"] for c in got["spec"]["containers"]] == ["main", "sidecar"]
    assert main(got)["image"] == "nginx:1.27"
    assert got["spec"]["containers"][1] == {"name": "sidecar", "image": "envoy:1.30"}


def test_env_merges_by_name() -> None:
    """The proposal's "patch container environments": B is replaced, C is new."""
    patch = {
        "spec": {
            "containers": [
                {"name": "main", "env": [{"name": "B", "value": "two"}, {"name": "C", "value": "3"}]}
            ]
        }
    }
    got = strategic_merge_patch(pod(), patch)
    env = main(got)["env"]
    assert {e["name"]: e["value"] for e in env} == {"A": "1", "B": "two", "C": "3"}
    # kube's order: original items before a patched one stay before it, and a new item follows
    # the patch item before it in the patch
    assert [e["name"] for e in env] == ["A", "B", "C"]


def test_new_list_items_go_before_the_original_ones_they_are_compared_with() -> None:
    """apimachinery's mergeSortedSlice: an item the original lacks is placed before the original's
    remaining items (as `kubectl patch` does when it adds a container), not appended."""
    patch = {"spec": {"containers": [{"name": "debug", "image": "busybox"}]}}
    got = strategic_merge_patch(pod(), patch)
    assert [c["name"] for c in got["spec"]["containers"]] == ["debug", "main", "sidecar"]
    new_env = {
        "spec": {"containers": [{"name": "main", "env": [{"name": "K8S_CONTAINER_NAME", "value": "main"}]}]}
    }
    env = main(strategic_merge_patch(pod(), new_env))["env"]
    assert [e["name"] for e in env] == ["K8S_CONTAINER_NAME", "A", "B"]


def test_patch_order_interleaves_with_the_original_order() -> None:
    original = {"spec": {"containers": [{"name": n} for n in "abc"]}}
    patch = {"spec": {"containers": [{"name": "b", "image": "x"}, {"name": "d"}]}}
    got = strategic_merge_patch(original, patch)
    assert got["spec"]["containers"] == [
        {"name": "a"},
        {"name": "b", "image": "x"},
        {"name": "d"},
        {"name": "c"},
    ]


def test_patch_delete_removes_the_matching_container() -> None:
    got = strategic_merge_patch(pod(), {"spec": {"containers": [{"name": "sidecar", "$patch": "delete"}]}})
    assert [c["name"] for c in got["spec"]["containers"]] == ["main"]


def test_patch_replace_item_replaces_the_list() -> None:
    patch = {"spec": {"containers": [{"$patch": "replace"}, {"name": "only", "image": "x"}]}}
    got = strategic_merge_patch(pod(), patch)
    assert got["spec"]["containers"] == [{"name": "only", "image": "x"}]


@pytest.mark.parametrize(
    ("field", "original", "patch"),
    [
        ("volumeMounts", [{"mountPath": "/a", "name": "v1"}], [{"mountPath": "/a", "readOnly": True}]),
        ("ports", [{"containerPort": 80, "name": "http"}], [{"containerPort": 80, "protocol": "TCP"}]),
    ],
)
def test_container_lists_merge_on_their_keys(field: str, original: list, patch: list) -> None:
    got = strategic_merge_patch(
        {"spec": {"containers": [{"name": "c", field: original}]}},
        {"spec": {"containers": [{"name": "c", field: patch}]}},
    )
    assert got["spec"]["containers"][0][field] == [{**original[0], **patch[0]}]


def test_pod_level_merge_lists() -> None:
    original = {
        "metadata": {"ownerReferences": [{"uid": "1", "kind": "ReplicaSet"}]},
        "spec": {
            "volumes": [{"name": "data", "emptyDir": {}}],
            "topologySpreadConstraints": [{"topologyKey": "zone", "maxSkew": 1}],
            "imagePullSecrets": [{"name": "reg"}],
        },
    }
    patch = {
        "metadata": {"ownerReferences": [{"uid": "1", "controller": True}]},
        "spec": {
            "volumes": [{"name": "cache", "emptyDir": {}}],
            "topologySpreadConstraints": [{"topologyKey": "zone", "maxSkew": 2}],
            "imagePullSecrets": [{"name": "reg2"}],
        },
    }
    got = strategic_merge_patch(original, patch)
    assert got["metadata"]["ownerReferences"] == [{"uid": "1", "kind": "ReplicaSet", "controller": True}]
    assert [v["name"] for v in got["spec"]["volumes"]] == ["cache", "data"]
    assert got["spec"]["topologySpreadConstraints"] == [{"topologyKey": "zone", "maxSkew": 2}]
    assert [s["name"] for s in got["spec"]["imagePullSecrets"]] == ["reg2", "reg"]


# --- primitive and replaced lists ----------------------------------------------------------------------


def test_finalizers_merge_as_a_set() -> None:
    got = strategic_merge_patch(pod(), {"metadata": {"finalizers": ["b", "c"]}})
    assert got["metadata"]["finalizers"] == ["a", "b", "c"]
    got = strategic_merge_patch(pod(), {"metadata": {"finalizers": ["c"]}})
    assert got["metadata"]["finalizers"] == ["c", "a", "b"]


def test_delete_from_primitive_list() -> None:
    got = strategic_merge_patch(pod(), {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}})
    assert got["metadata"]["finalizers"] == ["b"]


def test_tolerations_are_replaced() -> None:
    """Tolerations have no patch strategy in kube: the subset's list replaces the pod's."""
    new = [{"key": "zone", "operator": "Equal", "value": "a", "effect": "NoSchedule"}]
    got = strategic_merge_patch(pod(), {"spec": {"tolerations": new}})
    assert got["spec"]["tolerations"] == new


def test_unknown_lists_are_replaced() -> None:
    got = strategic_merge_patch(
        {
            "spec": {
                "containers": [{"name": "c", "args": ["a", "b"]}],
                "readinessGates": [{"conditionType": "x"}],
            }
        },
        {"spec": {"containers": [{"name": "c", "args": ["z"]}], "readinessGates": [{"conditionType": "y"}]}},
    )
    assert got["spec"]["containers"][0]["args"] == ["z"]
    assert got["spec"]["readinessGates"] == [{"conditionType": "y"}]


# --- results and inputs --------------------------------------------------------------------------------


def test_inputs_are_not_mutated_and_nothing_is_shared() -> None:
    original = pod()
    patch = {
        "metadata": {"labels": {"tier": None, "new": "1"}, "finalizers": ["c"]},
        "spec": {
            "containers": [
                {"name": "main", "env": [{"name": "C", "value": "3"}], "resources": {"limits": {"cpu": "1"}}},
                {"name": "sidecar", "$patch": "delete"},
            ],
            "tolerations": [{"operator": "Exists"}],
            "nodeSelector": {"zone": "a"},
        },
    }
    original_copy, patch_copy = copy.deepcopy(original), copy.deepcopy(patch)
    got = strategic_merge_patch(original, patch)
    assert original == original_copy
    assert patch == patch_copy
    got["spec"]["nodeSelector"]["zone"] = "b"
    got["spec"]["tolerations"].append({})
    main(got)["env"][0]["value"] = "changed"
    assert original == original_copy
    assert patch == patch_copy


def test_the_result_decodes_as_a_pod() -> None:
    patch = {
        "metadata": {"labels": {"subset": "a"}},
        "spec": {"containers": [{"name": "main", "resources": {"limits": {"cpu": "2"}}}]},
    }
    got = Pod.from_dict(strategic_merge_patch(Pod.from_dict(pod()).to_dict(), patch))
    assert got.metadata.labels["subset"] == "a"
    assert str(got.spec.containers[0].resources.limits["cpu"]) == "2"


def test_empty_patch_gives_an_equal_copy() -> None:
    original = pod()
    got = strategic_merge_patch(original, {})
    assert got == original
    assert got is not original


# --- errors --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("patch", "fragment"),
    [
        ({"spec": {"containers": [{"image": "x"}]}}, "does not contain declared merge key: name"),
        ({"spec": {"containers": [{"$patch": "delete"}]}}, "does not contain declared merge key: name"),
        ({"spec": {"containers": {"name": "main"}}}, "spec.containers: cannot merge object into list"),
        ({"metadata": {"labels": ["a"]}}, "metadata.labels: cannot merge list into object"),
        ({"metadata": {"labels": "a"}}, "metadata.labels: cannot merge scalar into object"),
        ({"metadata": {"$patch": "merge"}}, "unknown patch type"),
        (
            {"spec": {"containers": [{"name": "x", "$patch": "merge"}]}},
            "merging lists cannot yet be specified",
        ),
        ({"spec": {"containers": ["main"]}}, "list element types are not identical"),
        ({"metadata": {"finalizers": [["a"]]}}, "lists of lists are not supported"),
        ({"spec": {"$setElementOrder/containers": [{"name": "main"}]}}, "$setElementOrder is not supported"),
        ({"spec": {"$retainKeys": ["containers"], "hostname": "h"}}, "is patched but not retained"),
    ],
)
def test_patches_that_cannot_apply(patch: dict, fragment: str) -> None:
    with pytest.raises(PatchError) as info:
        strategic_merge_patch(pod(), patch)
    assert fragment in str(info.value)


def test_original_items_without_the_merge_key_cannot_merge() -> None:
    with pytest.raises(PatchError, match="does not contain declared merge key: name"):
        strategic_merge_patch(
            {"spec": {"containers": [{"image": "x"}]}}, {"spec": {"containers": [{"name": "a"}]}}
        )


def test_patch_error_is_a_value_error() -> None:
    assert issubclass(PatchError, ValueError)
    with pytest.raises(ValueError):
        strategic_merge_patch(pod(), [])  # type: ignore[arg-type]
