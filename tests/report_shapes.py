"""The shapes of Result a report must render, each built by processing a trial with options.

One entry per shape in :data:`SHAPES`: a name, how to build the Result (a function of a
:class:`Sources` that knows where the real and the synthetic trials are), and whether it needs the
real data. The expectations the tests check are derived from the Result itself (which side has a
kinetic cycle, which contact has no foot...), so a new shape is one more entry.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from conftest import REALDATA, REPO

SAMPLE = REPO / "sample_data" / "walk_synthetic.c3d"


class Sources:
    """Where the shapes' trials come from: the shipped sample, a long synthetic walk written once
    into a temporary folder, and the real trials (``../shared/realdata``)."""

    def __init__(self, tmp_dir: Path):
        self.tmp_dir = Path(tmp_dir)
        self._long: Path | None = None

    def synthetic(self, kind: str) -> Path:
        """A synthetic treadmill ('treadmill_split', 'treadmill_tandem', 'treadmill_single') or stair trial
        ('stairs_ascent', 'stairs_descent') written once (gaitid.validation.synthetic)."""
        from gaitid.validation import synthetic as S

        path = self.tmp_dir / f"{kind}.c3d"
        if not path.exists():
            write = {"treadmill_split": lambda p: S.write_treadmill(p, duration_s=8.0),
                     "treadmill_tandem": lambda p: S.write_treadmill(p, duration_s=6.0, layout="tandem"),
                     "treadmill_single": lambda p: S.write_treadmill(p, duration_s=6.0, layout="single"),
                     "stairs_ascent": S.write_stairs,
                     "stairs_descent": lambda p: S.write_stairs(p, direction="descent")}[kind]
            write(path)
        return path

    def real(self, relative: str) -> Path:
        return REALDATA / relative

    def long_walk(self) -> Path:
        """A 12 s synthetic walk (22 cycles, plates under two of its steps)."""
        if self._long is None:
            from gaitid.validation.synthetic.params import GaitParams
            from gaitid.validation.synthetic.write import write_sample

            self._long = write_sample(self.tmp_dir / "long", GaitParams(n_frames=1200))[0]
        return self._long


def _process(source, **kwargs):
    from gaitid.pipeline import process

    return process(source, **kwargs)


def _without_plates(path: Path, **kwargs):
    from gaitid.io.c3d import read_c3d

    return _process(dataclasses.replace(read_c3d(path), force_plates=[]), **kwargs)


def _with_emg(path: Path, events: bool = True, bad: bool = False, **kwargs):
    """The trial with synthetic EMG (exact bursts); ``events=False``: its events cut to the first (no
    cycle); ``bad``: its channels flat or clipped."""
    import numpy as np

    from gaitid.io.c3d import read_c3d
    from gaitid.validation.synthetic.emg_bursts import Burst, with_emg

    trial = with_emg(read_c3d(path), [Burst("Left", "Tib Ant", ((0.0, 12.0), (60.0, 100.0))),
                                      Burst("Right", "Gast", ((20.0, 50.0),))])
    if bad:
        values = trial.analogs.values.copy()
        values[:, -2] = 0.001
        values[:, -1] = np.clip(values[:, -1], -1e-4, 1e-4)
        trial = dataclasses.replace(trial, analogs=dataclasses.replace(trial.analogs, values=values))
    if not events:
        trial = dataclasses.replace(trial, events=trial.events[:1])
    return _process(trial, **kwargs)


@dataclass(frozen=True)
class Shape:
    name: str
    build: Callable[[Sources], object]
    realdata: bool = False
    why: str = ""


SHAPES = [
    Shape("walk", lambda s: _process(SAMPLE), why="every cycle, one kinetic cycle per side"),
    Shape("contact without a foot", lambda s: _process(SAMPLE, plates={1: "Invalid"}),
          why="plate 1 overridden invalid: its contact has no foot (side None)"),
    Shape("one side only", lambda s: _process(SAMPLE, plates={2: "Invalid"}), why="right kinetic cycle only"),
    Shape("no kinetic cycle", lambda s: _process(SAMPLE, plates={1: "Invalid", 2: "Invalid"})),
    Shape("kinematics only", lambda s: _without_plates(SAMPLE), why="a trial without force plates"),
    Shape("external convention", lambda s: _process(SAMPLE, convention="external", normalise="bw-height")),
    Shape("split-belt treadmill", lambda s: _process(s.synthetic("treadmill_split")),
          why="both feet on one belt in the double supports around 2 crossing steps: decomposed"),
    Shape("tandem treadmill", lambda s: _process(s.synthetic("treadmill_tandem"))),
    Shape("single-belt treadmill", lambda s: _process(s.synthetic("treadmill_single")),
          why="both feet on the one belt in every double support: every kinetic cycle partly decomposed"),
    Shape("stair ascent", lambda s: _process(s.synthetic("stairs_ascent")), why="plates at step heights"),
    Shape("stair descent", lambda s: _process(s.synthetic("stairs_descent"))),
    Shape("long, every contact invalid", lambda s: _process(s.long_walk(), plates={1: "Invalid", 2: "Invalid"})),
    Shape("long walk", lambda s: _process(s.long_walk()), why="22 cycles, 2 kinetic"),
    Shape("EMG", lambda s: _with_emg(SAMPLE), why="synthetic EMG with exact bursts on both sides"),
    Shape("EMG, no cycle", lambda s: _with_emg(SAMPLE, events=False), why="EMG channels but no complete cycle"),
    Shape("EMG, bad channels", lambda s: _with_emg(SAMPLE, bad=True), why="one flat and one clipped channel"),
    Shape("real: contact without a foot", lambda s: _process(s.real("biomechzoo/HC030A05.c3d"), plates={1: "Invalid"}),
          realdata=True),
    Shape("real: one side only", lambda s: _process(s.real("btkdata/PiG_Motion-FlatFoot-Full.c3d"),
                                                     static=s.real("btkdata/PiG_Calibration-FlatFoot-Full.c3d")),
          realdata=True, why="the right foot's plate contact is rejected"),
    Shape("real: no kinetic cycle", lambda s: _process(s.real("opensim-core/walking2.c3d"), model="isb",
                                                        subject="plates"), realdata=True),
    Shape("real: kinematics only", lambda s: _without_plates(s.real("c3d-parser/MH0222_BP06.c3d")), realdata=True),
]


# Every real walking trial with a usable model, and the options it needs: (file, CLI options, process()
# keyword arguments). PlugInC3D.c3d stores no subject data: its mass is the README's estimate from the
# plates and its leg/knee/ankle sizes are typical adult values (a rendering test, not a kinetics one).
# Not here: the two PiG_Calibration files (static trials) and Eb015pi.c3d / Gait.c3d (no usable model:
# neither has the markers of any model gaitid ships).
R = "{realdata}/"
REAL_TRIALS = [
    ("biomechzoo/HC030A05.c3d", [], {}),
    ("c3d-parser/MH0222_BP06.c3d", [], {}),
    ("python-gaitalytics/test_small.c3d", [], {}),
    ("btkdata/FunctionalWalk.c3d", [], {}),
    ("btkdata/PiG_Motion-FlatFoot-Full.c3d", ["--static", R + "btkdata/PiG_Calibration-FlatFoot-Full.c3d"],
     {"static": R + "btkdata/PiG_Calibration-FlatFoot-Full.c3d"}),
    ("btkdata/PiG_Motion3_FF.c3d", ["--static", R + "btkdata/PiG_Calibration3_FF.c3d"],
     {"static": R + "btkdata/PiG_Calibration3_FF.c3d"}),
    ("ezc3d-testfiles/Qualisys.c3d", ["--model", "isb", "--mass", "plates"], {"model": "isb", "subject": "plates"}),
    ("opensim-core/walking2.c3d", ["--model", "isb", "--mass", "plates"], {"model": "isb", "subject": "plates"}),
    ("opensim-models/subject01_walk1.trc",
     ["--model", "isb-cast", "--static", R + "opensim-models/subject01_static.trc", "--mass", "72.6"],
     {"model": "isb-cast", "static": R + "opensim-models/subject01_static.trc", "subject": 72.6}),
    ("btkdata/PlugInC3D.c3d", None,
     {"subject": {"mass": 66.7, "leg_length": 0.86, "knee_width": 0.10, "ankle_width": 0.07}}),
]


def real_options(options):
    """The options with the real-data folder filled in."""
    fill = lambda v: v.replace(R, f"{REALDATA}/") if isinstance(v, str) else v  # noqa: E731
    if isinstance(options, list):
        return [fill(v) for v in options]
    return {k: fill(v) for k, v in options.items()}
