"""The C3D copy written chunk by chunk is the file ezc3d writes in one go, and writing it leaks nothing.

write_c3d hands ezc3d at most ``WRITE_CHUNK_VALUES`` values at a time (ezc3d keeps every value it
writes as a C++ object) and splices the chunks' data into one file; the reference is a single
ezc3d write of the whole trial (the chunk size set above the trial's size), compared byte for byte.
"""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np
import pytest

import gaitid.io.c3d as c3d
from gaitid.core.trial import Analogs, Trial
from gaitid.io.c3d import read_c3d, write_c3d
from gaitid.io.c3d_check import check_c3d
from tests.conftest import REPO

SAMPLE = REPO / "sample_data"


def _one_marker_trial(n: int, first: int = 1, analog: bool = False) -> Trial:
    rng = np.random.default_rng(n + first)
    markers = rng.normal(size=(n, 1, 3))
    markers[::7] = np.nan  # gaps are written as ezc3d writes them (residual -1)
    analogs = Analogs(1000.0, ["EMG1"], ["V"], rng.normal(size=(n * 10, 1))) if analog else None
    return Trial(None, 100.0, first, ["A"], markers, analogs=analogs)


def _both(monkeypatch, tmp_path, trial: Trial, frames_per_chunk: int, **kwargs) -> tuple[bytes, bytes]:
    """(the whole trial in one ezc3d write, the chunked write) as bytes."""
    monkeypatch.setattr(c3d, "WRITE_CHUNK_VALUES", 10**15)
    whole = write_c3d(trial, tmp_path / "whole.c3d", **kwargs).read_bytes()
    monkeypatch.setattr(c3d, "WRITE_CHUNK_VALUES", c3d._values_per_frame(trial, kwargs.get("extra_points") or {})
                        * frames_per_chunk)
    chunked = write_c3d(trial, tmp_path / "chunked.c3d", **kwargs).read_bytes()
    return whole, chunked


@pytest.mark.parametrize("frames_per_chunk", [1, 7, 379])
def test_sample_walk_in_chunks_is_the_single_write(monkeypatch, tmp_path, frames_per_chunk):
    """Markers, virtual points, model outputs, extra points, 8 plates at 1 kHz, events, subject."""
    trial = read_c3d(SAMPLE / "walk_synthetic.c3d")
    extra = {"LAnkleMoment": ("MOMENTS", np.linspace(0, 1, trial.n_frames * 3).reshape(-1, 3)),
             "RNewPoint": ("ANGLES", np.full((trial.n_frames, 3), 2.5))}
    whole, chunked = _both(monkeypatch, tmp_path, trial, frames_per_chunk, extra_points=extra, file_lab=True)
    assert chunked == whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chunked.c3d", "whole.c3d"]  # no scratch file left
    back = read_c3d(tmp_path / "chunked.c3d")
    assert back.n_frames == trial.n_frames
    assert np.allclose(back.force_plates[0].analog.force, trial.force_plates[0].analog.force, atol=1e-3)


@pytest.mark.parametrize("n, first, analog, frames_per_chunk", [
    (40_000, 1, False, 9_999),  # POINT:FRAMES past 32767 (stored as a negative int16)
    (40_960, 3, True, 9_999),  # data bytes a whole number of blocks: ezc3d adds an empty block
    (70_000, 5, True, 30_000),  # more than 65535 frames: header capped, TRIAL/LONG_FRAMES carry the count
    (10_000, 60_000, False, 4_000),  # a late first frame: the header's last frame capped at 65535
])
def test_long_trials_in_chunks_are_the_single_write(monkeypatch, tmp_path, n, first, analog, frames_per_chunk):
    trial = _one_marker_trial(n, first, analog)
    whole, chunked = _both(monkeypatch, tmp_path, trial, frames_per_chunk)
    assert len(chunked) == len(whole) and chunked == whole
    layout = check_c3d(tmp_path / "chunked.c3d")
    assert layout.n_frames == n
    back = read_c3d(tmp_path / "chunked.c3d")
    assert back.first_frame == first and back.n_frames == n
    assert np.array_equal(np.isnan(back.markers), np.isnan(trial.markers))
    assert np.nanmax(np.abs(back.markers - trial.markers)) < 1e-6  # float32 mm


def test_unexpected_ezc3d_output_stops_the_write(monkeypatch, tmp_path):
    """If ezc3d stored the frame count otherwise than this writer completes it, no file is left."""
    trial = _one_marker_trial(100)
    monkeypatch.setattr(c3d, "WRITE_CHUNK_VALUES", c3d._values_per_frame(trial, {}) * 30)
    monkeypatch.setattr(c3d, "_end_block", lambda start, data_bytes: start // 512 + data_bytes // 512 + 2)
    with pytest.raises(Exception, match="does not expect"):
        write_c3d(trial, tmp_path / "out.c3d")
    assert list(tmp_path.iterdir()) == []


def test_writing_leaks_no_memory(tmp_path):
    """ezc3d's float64 copy of the camera masks is never freed by ezc3d itself (56 bytes per point and
    frame); write_c3d hands it float64 arrays: repeated writes leave no allocation behind."""
    trial = _one_marker_trial(20_000)
    write_c3d(trial, tmp_path / "warm.c3d")
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for k in range(3):
            write_c3d(trial, tmp_path / f"out{k}.c3d")
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    per_write_leak = 7 * 8 * trial.n_frames  # the masks' copy: 1.1 MB a write
    assert grown < 0.1 * per_write_leak
    assert (tmp_path / "out0.c3d").read_bytes() == (tmp_path / "warm.c3d").read_bytes()
