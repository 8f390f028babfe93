"""The version → features map (api/features.py): kube's versioned specs read as kube reads them."""

from __future__ import annotations

import pytest

from kubespread.api.features import (
    BALANCED_ALLOCATION_SCORES_IMPROVEMENT,
    DEFAULT_KUBE_VERSION,
    FEATURES,
    KUBE_VERSION_ENV,
    KUBE_VERSIONS,
    MATCH_LABEL_KEYS_SELECTOR_MERGE,
    MAX_UNAVAILABLE_STATEFUL_SET,
    POD_LEVEL_RESOURCES,
    PREEMPTION_PLACEMENT_MESSAGE,
    FeatureGates,
    KubeVersion,
    VersionError,
    features_for,
)


@pytest.mark.parametrize(
    ("text", "want"),
    [("1.36", (1, 36)), ("v1.33", (1, 33)), ("1.35.4", (1, 35)), ("v1.37.2-gke.1200", (1, 37))],
)
def test_versions_parse_as_server_version_strings(text: str, want: tuple[int, int]) -> None:
    assert KubeVersion.parse(text) == KubeVersion(*want)


@pytest.mark.parametrize("bad", ["", "1", "one.two", "1.36.x.y"])
def test_a_malformed_version_is_one_clear_error(bad: str) -> None:
    with pytest.raises(VersionError, match="not a Kubernetes version"):
        KubeVersion.parse(bad)


def test_only_the_modelled_versions_are_answered() -> None:
    assert [str(v) for v in KUBE_VERSIONS] == ["1.33", "1.34", "1.35", "1.36", "1.37", "1.38"]
    with pytest.raises(VersionError, match=r"1\.32 is not supported \(supported: 1\.33, .*1\.38\)"):
        features_for("1.32")


def test_the_default_is_135_unless_the_environment_says(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KUBE_VERSION_ENV, raising=False)
    assert features_for().version == DEFAULT_KUBE_VERSION == KubeVersion(1, 35)
    monkeypatch.setenv(KUBE_VERSION_ENV, "1.36")
    assert features_for().version == KubeVersion(1, 36)


@pytest.mark.parametrize(
    ("feature", "on_from"),
    [
        (MATCH_LABEL_KEYS_SELECTOR_MERGE, "1.34"),  # Beta, on, from v1.34
        (POD_LEVEL_RESOURCES, "1.34"),  # Alpha in 1.32, Beta on in 1.34
        (BALANCED_ALLOCATION_SCORES_IMPROVEMENT, "1.36"),  # kubernetes#135573
        (PREEMPTION_PLACEMENT_MESSAGE, "1.37"),  # kubernetes#140180
    ],
)
def test_a_feature_is_on_from_the_version_its_spec_says(feature: object, on_from: str) -> None:
    start = KubeVersion.parse(on_from)
    for version in KUBE_VERSIONS:
        assert features_for(version).enabled(feature) == (version >= start), (feature, version)  # type: ignore[arg-type]


def test_max_unavailable_stateful_set_is_beta_but_off_in_135() -> None:
    """v1.35.4 and v1.36 declare it Beta and off (kubernetes#137904 turned it off again)."""
    spec = MAX_UNAVAILABLE_STATEFUL_SET.spec_at(KubeVersion(1, 35))
    assert spec is not None and spec.stage == "Beta" and not spec.default
    assert not features_for("1.36").enabled(MAX_UNAVAILABLE_STATEFUL_SET)
    assert features_for("1.37").enabled(MAX_UNAVAILABLE_STATEFUL_SET)


def test_overrides_win_and_unknown_names_are_refused() -> None:
    gates = features_for("1.36").with_overrides(BalancedAllocationScoresImprovement=False)
    assert not gates.enabled(BALANCED_ALLOCATION_SCORES_IMPROVEMENT)
    assert gates.version == KubeVersion(1, 36)
    with pytest.raises(VersionError, match="unknown feature"):
        FeatureGates().with_overrides(NoSuchGate=True)


def test_every_feature_has_a_reference_and_a_summary() -> None:
    for name, feature in FEATURES.items():
        assert feature.name == name and feature.reference and feature.summary
        assert list(feature.specs) == sorted(feature.specs, key=lambda s: s.version)
