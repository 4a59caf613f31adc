"""Shared test fixtures: where the real data lives, and skipping when it does not."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# Real trials are read in place from ../shared/realdata beside the checkout (never copied);
# GAITID_REALDATA overrides the location.
REALDATA = Path(os.environ.get("GAITID_REALDATA", REPO.parent / "shared" / "realdata"))

REAL_C3D = sorted(REALDATA.glob("*/*.c3d")) if REALDATA.is_dir() else []


def realdata_path(relative: str) -> Path:
    """Path of a file in the real-data folder, or skip the test with the reason."""
    path = REALDATA / relative
    if not path.exists():
        pytest.skip(f"real data not available: {path} is absent (tests read ../shared/realdata in place)")
    return path


@pytest.fixture
def realdata() -> Path:
    if not REALDATA.is_dir():
        pytest.skip(f"real data not available: {REALDATA} is absent (tests read ../shared/realdata in place)")
    return REALDATA


def markers_for(trial, model: str | None = None):
    """The gait markers (heel, toe, ankle, pelvis) a model names, resolved for a trial; by default
    Plug-in Gait's when the trial has its heel marker, else the ISB model's (Qualisys, OpenSim names)."""
    from gaitid.model.gait_markers import gait_markers
    from gaitid.model.markerset import load_model

    if model is None:
        model = "plugin-gait" if trial.has_points("LHEE") or not trial.marker_labels else "isb"
    return gait_markers(load_model(model), trial)


def synthetic_trial(kind: str, folder: Path) -> Path:
    """A synthetic trial's file: the sample walk ('walk'), or a 6 s treadmill or the stairs written
    into ``folder`` (without their truth files)."""
    from gaitid.core.resources import sample_data_dir

    if kind == "walk":
        return sample_data_dir() / "walk_synthetic.c3d"
    from gaitid.validation.synthetic.stairs import write_stairs
    from gaitid.validation.synthetic.treadmill_trial import write_treadmill

    path = folder / f"{kind}.c3d"
    write_treadmill(path, duration_s=6.0, truth=False) if kind == "treadmill" else write_stairs(path, truth=False)
    return path
