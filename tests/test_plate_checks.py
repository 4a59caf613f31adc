"""The force-plate checks (gaitid/io/plate_checks.py, gaitid/contacts/cop_check.py): quiet on every clean
real and synthetic trial, and each mutation of a real plate set-up named with its plate, parameter and figures."""

from __future__ import annotations

import math
import re
from dataclasses import replace

import numpy as np
import pytest

from gaitid.core.checks import PASSED, WARNED
from gaitid.core.errors import DataError, SettingsError
from gaitid.core.resources import sample_data_dir
from gaitid.core.settings import Settings
from gaitid.io.c3d import read_c3d
from gaitid.io.plate_checks import plate_geometry_check, plate_units_check, unit_value
from gaitid.pipeline import process
from tests.c3d_mutations import mutated
from tests.conftest import REAL_C3D, realdata_path
from tests.plate_mutations import (
    channel_scale,
    channel_units,
    corner_order,
    corners_moved,
    corners_swapped,
    origin_scaled,
)

S = Settings()
WALK = sample_data_dir() / "walk_synthetic.c3d"
ZOO = "biomechzoo/HC030A05.c3d"  # plate 1: the left foot's step at 3.54-4.17 s; plate 2: the right foot's


def geometry(trial, **kw):
    s = replace(S, **kw)
    return plate_geometry_check(trial, s.plate_corner_tolerance_m, s.plate_origin_offset_m, s.plate_origin_depth_m)


def units(trial, **kw):
    return plate_units_check(trial, replace(S, **kw).plate_cop_outside_m)


def check(result, name):
    return next(c for c in result.checks if c.name == name)


@pytest.mark.realdata
@pytest.mark.parametrize("path", [p for p in REAL_C3D if p.name != "PiG_Calibration3_FF.c3d"], ids=lambda p: p.name)
def test_every_real_plate_set_up_passes_geometry_and_units(path):
    trial = read_c3d(path)  # every real C3D but the one static that has no force plate
    assert trial.force_plates
    g, u = geometry(trial), units(trial)
    assert (g.status, u.status) == (PASSED, PASSED), (g.warnings, u.warnings)
    n = len(trial.force_plates)
    assert f"{n} with Z into the floor" in g.detail and f"{n} of {n} plate(s) push up" in g.detail
    assert re.search(r"COP median inside every plate, \d+\.\d cm inside the edge at the closest", u.detail), u.detail


@pytest.mark.realdata
@pytest.mark.parametrize("relative", [ZOO, "c3d-parser/MH0222_BP06.c3d"])
def test_clean_contacts_have_the_cop_under_the_foot_with_margin(relative):
    result = process(realdata_path(relative))
    checks = {c.name: c for c in result.checks}
    assert all(checks[n].status == PASSED for n in ("plate geometry", "plate units", "COP under the foot"))
    # the figures behind the thresholds (docs/checks.md): COP within 2 cm of the foot, travel >= 61 %
    d = float(checks["COP under the foot"].detail.split("median ")[1].split(" cm")[0])
    assert d < S.cop_foot_margin_m * 100 / 5


@pytest.mark.parametrize("kind", ["walk", "treadmill", "stairs"])
def test_the_synthetic_trials_pass_every_plate_check(tmp_path, kind):
    path = WALK
    if kind == "treadmill":
        from gaitid.validation.synthetic.treadmill_trial import write_treadmill
        path = tmp_path / "treadmill.c3d"
        write_treadmill(path, duration_s=6.0, truth=False)
    elif kind == "stairs":
        from gaitid.validation.synthetic.stairs import write_stairs
        path = tmp_path / "stairs.c3d"
        write_stairs(path, truth=False)
    result = process(path)
    assert [check(result, n).status for n in ("plate geometry", "plate units", "COP under the foot")] == [PASSED] * 3
    # a treadmill's contacts come from the belts' ownership: each valid one-belt contact is judged too
    # (with the crossings' shared belt decomposed, 10; 8 with decompose_shared_plates=False)
    n = {"walk": 2, "treadmill": 10, "stairs": 4}[kind]
    assert check(result, "COP under the foot").detail.startswith(f"{n} contact(s)")


def test_unit_strings():
    assert unit_value("Nmm") == ("moment", pytest.approx(1e-3)) and unit_value("N.m") == ("moment", 1.0)
    assert unit_value("ntmm") == ("moment", pytest.approx(1e-3)) and unit_value(" N ") == ("force", 1.0)
    assert unit_value("V") is None and unit_value("") is None


@pytest.mark.realdata
def test_a_corner_off_the_rectangle_is_named_with_its_figures():
    trial = read_c3d(realdata_path(ZOO))
    p = trial.force_plates[1]
    bent = p.corners.copy()
    bent[2, 0] += 0.012  # corner 3 moved 12 mm along the lab X (the plate's 463.5 mm side)
    moved = replace(trial, force_plates=[trial.force_plates[0], replace(p, corners=bent)])
    (w,) = geometry(moved).warnings
    assert w.startswith("force plate 2: FORCE_PLATFORM:CORNERS do not form a flat rectangle")
    assert "sides 463.6/475.6" in w and "off by up to 12.0 mm" in w
    assert geometry(moved, plate_corner_tolerance_m=0.013).status == PASSED
    assert p.corners[2, 0] == bent[2, 0] - 0.012  # the caller's plate untouched


@pytest.mark.realdata
@pytest.mark.parametrize("edit", [corner_order(1, (0, 3, 2, 1)), channel_scale(1, [2], -1.0)], ids=["mirrored", "Fz"])
def test_a_plate_pushing_down_that_turned_the_lab_over_is_a_data_error(tmp_path, edit):
    # before: the reader took the lab's vertical from the plates' forces and turned it upside down
    path = mutated(realdata_path(ZOO), tmp_path, "down.c3d", edit)
    with pytest.raises(DataError) as exc:
        read_c3d(path)
    text = str(exc.value)
    assert "points along -Z, but the markers stand along +Z: force plate(s) 1 do not push up" in text
    assert "down.c3d" in text and "gaitid does not turn the lab" in text


@pytest.mark.realdata
def test_a_plate_whose_force_turned_the_lab_on_its_side_is_a_data_error(tmp_path):
    """The synthetic walk's only plate with a negated Fz: its mean force points along +X (the
    fore-aft push), and the reader turned the lab on its side; the contacts then failed with a
    'degenerate force-plate outline' naming neither file nor plate."""
    from gaitid.core.resources import sample_data_dir

    path = mutated(sample_data_dir() / "walk_synthetic.c3d", tmp_path, "side.c3d", channel_scale(1, [2], -1.0))
    with pytest.raises(DataError, match=r"points along \+X, but the markers stand along \+Z: force plate\(s\) 1 do not"):
        read_c3d(path)


@pytest.mark.realdata
def test_a_mirrored_plate_among_others_is_a_warning(tmp_path):
    path = mutated(realdata_path("python-gaitalytics/test_small.c3d"), tmp_path, "mirror.c3d", corner_order(1, (0, 3, 2, 1)))
    trial = read_c3d(path)
    assert np.allclose(trial.lab_rotation, np.eye(3))  # the other plates keep the lab upright
    g = geometry(trial)
    assert g.status == WARNED and len(g.warnings) == 2
    assert g.warnings[0].startswith("force plate 1: the force on the subject points down (mean vertical -500 N over 65 loaded frames")
    assert g.warnings[1].startswith("force plate 1: FORCE_PLATFORM:CORNERS are numbered in mirrored order")


@pytest.mark.realdata
def test_origin_in_the_wrong_unit_is_named_and_a_flipped_sign_changes_nothing(tmp_path):
    src = realdata_path(ZOO)
    (w,) = geometry(read_c3d(mutated(src, tmp_path, "o.c3d", origin_scaled(1, 1000.0)))).warnings
    assert w.startswith("force plate 1 (type 2): FORCE_PLATFORM:ORIGIN (330.2, 228.6, 40335.2) mm")
    # types 1-5 read |z| (ezc3d rule), so a flipped ORIGIN gives the same wrench: nothing to warn about
    flipped = read_c3d(mutated(src, tmp_path, "f.c3d", origin_scaled(1, -1.0)))
    assert geometry(flipped).status == PASSED
    np.testing.assert_array_equal(flipped.force_plates[0].point.cop, read_c3d(src).force_plates[0].point.cop)


@pytest.mark.realdata
def test_moment_units_label_contradicting_the_units_read_names_both(tmp_path):
    path = mutated(realdata_path(ZOO), tmp_path, "nm.c3d", channel_units(1, slice(3, 6), b"Nm"))
    (w,) = units(read_c3d(path)).warnings
    assert w.startswith("force plate 1: channel(s) 'Moment.Mx1', 'Moment.My1', 'Moment.Mz1' labelled 'Nm'")
    assert "read in 'N.mm'" in w and "differ by x1000" in w and "gaitid keeps reading 'N.mm'" in w


@pytest.mark.realdata
def test_moments_too_large_put_the_cop_outside_the_plate(tmp_path):
    path = mutated(realdata_path(ZOO), tmp_path, "big.c3d", channel_scale(1, slice(3, 6), 1000.0))
    (w,) = units(read_c3d(path)).warnings
    assert w.startswith("force plate 1: its centre of pressure lies outside the plate on most loaded frames")
    assert re.search(r"COP median \d+\.\d cm outside the plate edge at worst", units(read_c3d(path)).detail)
    assert units(read_c3d(path), plate_cop_outside_m=math.inf).status == PASSED


@pytest.mark.realdata
def test_moments_too_small_leave_the_cop_still_and_are_named(tmp_path):
    # before: the contact stayed valid and the left ankle moment was off by up to 1.2 N.m/kg, no warning
    result = process(mutated(realdata_path(ZOO), tmp_path, "small.c3d", channel_scale(1, slice(3, 6), 1e-3)))
    (w,) = check(result, "COP under the foot").warnings
    assert w.startswith("force plate 1: over its contact at 3.54-4.17 s the centre of pressure stays still")
    assert "heel-toe 17 cm" in w and w in result.warnings


@pytest.mark.realdata
def test_a_translated_plate_is_named_with_the_offset(tmp_path):
    result = process(mutated(realdata_path(ZOO), tmp_path, "moved.c3d", corners_moved(1, (300.0, 0.0, 0.0))))
    (w,) = check(result, "COP under the foot").warnings
    assert w.startswith("force plate 1: over its contact at 3.54-4.17 s the centre of pressure lies a median 29.6 cm")
    assert "it sits (+29, +4) cm (lab X, Y)" in w
    assert check(process(result.trial.path, cop_foot_margin_m=0.35), "COP under the foot").status == PASSED


@pytest.mark.realdata
def test_swapped_and_rotated_corners_are_named(tmp_path):
    src = realdata_path(ZOO)
    swapped = check(process(mutated(src, tmp_path, "swap.c3d", corners_swapped(1, 2))), "COP under the foot")
    assert [w.split(" over")[0] for w in swapped.warnings] == ["force plate 1:", "force plate 2:"]
    rotated = check(process(mutated(src, tmp_path, "rot.c3d", corner_order(1, (1, 2, 3, 0)))), "COP under the foot")
    (w,) = rotated.warnings
    assert "travels 1.2 cm along the left foot" in w and "13.8 cm across it" in w and "turned against the lab" in w


@pytest.mark.parametrize("name", ["plate_corner_tolerance_m", "plate_origin_offset_m", "plate_origin_depth_m",
                                  "plate_cop_outside_m", "cop_foot_margin_m"])
def test_plate_thresholds_are_validated(name):
    with pytest.raises(SettingsError, match=name):
        Settings(**{name: 0.0})
    Settings(**{name: math.inf})
    with pytest.raises(SettingsError, match="cop_min_travel"):
        Settings(cop_min_travel=1.5)


@pytest.mark.realdata
def test_a_plate_given_to_the_wrong_foot_by_override_is_named():
    result = process(realdata_path(ZOO), plates={1: "Right"})  # plate 1 carries the left foot's step
    (w,) = check(result, "COP under the foot").warnings
    assert w.startswith("force plate 1: over its contact at 3.54-4.17 s the centre of pressure lies a median")
    assert "35.9 cm from the right foot it is given to" in w and "the contact given to the wrong foot (a plate override" in w


@pytest.mark.realdata
def test_corners_whose_edges_cross_are_refused_naming_the_plate(tmp_path):
    """Corners 2 and 3 exchanged: taken in order the outline is a bow tie, and the plate's axes from
    corners 1, 2 and 4 are skewed: refused, where before it was read."""
    from gaitid.core.errors import FileFormatError

    path = mutated(realdata_path(ZOO), tmp_path, "crossed.c3d", corner_order(1, (0, 2, 1, 3)))
    with pytest.raises(FileFormatError, match=r"force plate 1: FORCE_PLATFORM:CORNERS do not go round the plate"):
        read_c3d(path)


def test_contact_medians_are_numpys_median_of_each_contacts_numbers():
    """The COP check takes every contact's medians in one call (contacts as NaN-padded columns), or one
    call per contact when a contact is much longer than the rest: np.median's value of each contact's
    known numbers either way, and their count."""
    from gaitid.contacts.cop_check import _contact_medians

    rng = np.random.default_rng(4)
    for sizes in ([3, 40, 41, 7], [1, 1], [5000, 3, 4, 2, 6], [0, 12]):
        values = np.round(rng.normal(size=(sum(sizes), 6)), 2)
        values[rng.random(values.shape) < 0.2] = np.nan
        values[:sizes[0], 5] = np.nan  # a contact without a number in a column: NaN
        medians, counts = _contact_medians(values, sizes)
        for k, part in enumerate(np.split(values, np.cumsum(sizes)[:-1])):
            for j in range(values.shape[1]):
                known = part[np.isfinite(part[:, j]), j]
                assert counts[k, j] == known.size
                assert (np.isnan(medians[k, j]) if not known.size else medians[k, j] == np.median(known))


def test_a_contact_given_to_no_foot_or_to_a_foot_unseen_is_judged_against_the_nearer_foot():
    """The COP check measures each contact against the foot it is given to, and against every foot
    (for the nearer) only when it is given to none or that foot's markers are unknown in half its
    frames: either way the figure is np.median of the COP's distance to the foot's triangle."""
    from gaitid.contacts import distance_to_triangle
    from gaitid.contacts.cop_check import LOADED_N, cop_foot_check

    r = process(WALK)
    trial, s = r.trial, r.settings

    def cop_check(t, contacts):
        return cop_foot_check(t, r.markers, contacts, s.cop_foot_margin_m, s.cop_min_travel)

    given = cop_check(trial, r.foot_contacts)
    assert given.status == PASSED and given.detail.startswith("2 contact(s)")
    # given to no foot: judged against the nearer, the same foot on a clean walk, so the same figures
    assert cop_check(trial, [replace(c, side=None) for c in r.foot_contacts]) == given
    # the right foot's markers unknown over its own contact: judged against the left foot, far off
    (right,) = [c for c in r.foot_contacts if c.side == "Right"]
    (iv,) = right.intervals
    plate = trial.force_plates[iv.plate - 1].point
    a, b = iv.span((trial.first_frame - 1) / trial.point_rate, trial.force_plates[iv.plate - 1].analog.rate)
    frames = trial.indices_between(a, b)
    frames = frames[(plate.force[frames, 2] >= LOADED_N) & np.isfinite(plate.cop[frames, :2]).all(axis=1)]
    markers = trial.markers.copy()
    markers[frames, trial.marker_labels.index("RHEE")] = np.nan
    (w,) = cop_check(replace(trial, markers=markers), r.foot_contacts).warnings
    left = [trial.point(lab)[frames, :2] for lab in ("LHEE", "LTOE", "LANK")]
    expected = np.median(distance_to_triangle(plate.cop[frames, :2], *left))
    assert f"force plate {iv.plate}: over its contact at {a:.2f}-{b:.2f} s the centre of pressure lies a median " \
           f"{expected * 100:.1f} cm from the nearer (left) foot" in w
    assert expected > 0.2
