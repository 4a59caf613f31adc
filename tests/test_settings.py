import pytest

from gaitid.core.errors import SettingsError
from gaitid.core.settings import Settings


def test_defaults_are_the_documented_ones():
    s = Settings()
    assert (s.marker_cutoff_hz, s.force_cutoff, s.frame, s.convention, s.normalise) == (6.0, 6.0, "distal", "internal", "mass")
    assert s.max_gap_frames == 10 and s.contact_threshold_n == 20.0 and s.cop_threshold_n == 10.0


@pytest.mark.parametrize(
    "change",
    [
        {"frame": "thigh"},
        {"convention": "both"},
        {"marker_cutoff_hz": -1},
        {"force_cutoff_hz": "fast"},
        {"filter_order": 3},
        {"plates": {1: "middle"}},
        {"plates": {"x": "left"}},
        {"normalise": "bw"},
        {"flat_foot": 1},
        {"flat_foot": "on"},
    ],
)
def test_bad_values_are_rejected_with_the_setting_named(change):
    name = next(iter(change))
    with pytest.raises(SettingsError, match=name):
        Settings(**change)


def test_replace_validates_and_rejects_unknown_names():
    s = Settings().replace(convention="external", plates={"2": "Left"})
    assert s.convention == "external" and s.plates == {2: "Left"}  # the vocabulary's spelling
    with pytest.raises(SettingsError, match="unknown setting"):
        Settings().replace(cutoff=4)


def test_plugin_gait_mirror():
    s = Settings.plugin_gait()
    assert (s.frame, s.convention, s.bsip, s.force_cutoff) == ("distal", "external", "plugin-gait", None)


def test_flat_foot_options_map_onto_the_setting():
    import argparse

    from gaitid.cli.options import add_settings_arguments, settings_from_args

    parser = argparse.ArgumentParser()
    add_settings_arguments(parser)
    assert Settings().flat_foot is None  # the files' choice, else off (Nexus)
    assert settings_from_args(parser.parse_args([])).flat_foot is None
    assert settings_from_args(parser.parse_args(["--flat-foot"])).flat_foot is True
    assert settings_from_args(parser.parse_args(["--no-flat-foot"])).flat_foot is False


def test_no_decompose_maps_onto_the_setting():
    import argparse

    from gaitid.cli.options import add_settings_arguments, settings_from_args

    parser = argparse.ArgumentParser()
    add_settings_arguments(parser)
    assert Settings().decompose_shared_plates is True
    assert settings_from_args(parser.parse_args([])).decompose_shared_plates is True
    assert settings_from_args(parser.parse_args(["--no-decompose"])).decompose_shared_plates is False
    with pytest.raises(SettingsError, match="decompose_shared_plates"):
        Settings(decompose_shared_plates="yes")
