"""Both feet on one plate: two plates of a real walk merged into one (tests/plate_merge.py), the
truth known from the originals, where each foot stands on its own plate in double support."""

from __future__ import annotations

import numpy as np
import pytest

from gaitid.contacts import plate_ownership
from gaitid.contacts.ownership import BOTH
from gaitid.io.c3d import read_c3d
from gaitid.model.gait_markers import gait_markers
from gaitid.model.markerset import load_model
from tests.conftest import realdata_path
from tests.plate_merge import MERGES, merge_plates

MODEL = {"ezc3d-testfiles/Qualisys.c3d": "isb", "opensim-core/walking2.c3d": "isb"}


def test_merged_plate_is_the_sum_of_the_two(realdata):
    """The merged wrench is the two plates' (force, and moment about any point) on every sample
    with a COP, and its outline holds both plates' corners."""
    trial = read_c3d(realdata_path("biomechzoo/HC030A05.c3d"))
    merged = merge_plates(trial, 1, 2)
    assert [fp.index for fp in merged.force_plates] == [1] and len(trial.force_plates) == 2  # input untouched
    a, b = (fp.analog for fp in trial.force_plates)
    w = merged.force_plates[0].analog
    np.testing.assert_allclose(w.force, a.force + b.force)
    ok = np.isfinite(a.cop).all(1) & np.isfinite(b.cop).all(1) & np.isfinite(w.cop).all(1)
    assert ok.sum() > 50  # the double supports, at the analog rate
    q = np.array([0.3, -0.2, 0.0])  # moments about an arbitrary point: the same system of forces

    def moment(x):
        return np.cross(x.cop[ok] - q, x.force[ok]) + x.free_moment[ok]

    np.testing.assert_allclose(moment(w), moment(a) + moment(b), atol=1e-6)
    corners = np.concatenate([fp.corners for fp in trial.force_plates])
    outline = merged.force_plates[0].corners
    assert outline[:, 0].min() <= corners[:, 0].min() and outline[:, 0].max() >= corners[:, 0].max()
    assert outline[:, 1].min() <= corners[:, 1].min() and outline[:, 1].max() >= corners[:, 1].max()


@pytest.mark.parametrize("name", sorted(MERGES))
def test_a_shared_plate_is_never_given_to_one_foot(name):
    """On frames where both original plates carry more than 70 N (each foot pushing on its own plate),
    the merged plate is owned by both feet: never by one foot alone (the trailing foot rolling off its
    toe, fast and with the COP mixed with the leading foot's, was counted off the plate and its
    22-484 N given to the leading foot, 35 frames over these trials)."""
    trial = read_c3d(realdata_path(name))
    a, b = MERGES[name]
    markers = gait_markers(load_model(MODEL.get(name, "plugin-gait")), trial)
    fz = np.column_stack([np.nan_to_num(fp.point.force[:, 2]) for fp in trial.force_plates if fp.index in (a, b)])
    shared = np.all(fz > 70.0, axis=1)
    assert shared.sum() >= 4
    merged = merge_plates(trial, a, b)
    own = plate_ownership(merged, markers)
    owner = own.owner[:, own.plates.index(a)]
    assert np.all(owner[shared] == BOTH), (np.flatnonzero(shared), owner[shared])
    # neither foot's load is measured there: it is not wholly on a plate of its own
    for side in ("Left", "Right"):
        assert not own.measured[side][shared].any()
