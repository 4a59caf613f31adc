"""Speed of the OpenSim readers and writers: prints seconds per call.

Real files are read in place from ../shared/realdata (skipped when absent); a large
synthetic trial (10 000 frames x 60 markers, 2 GRF forces at 1 kHz) shows scaling.
Run from the repository root: PYTHONPATH=. python benchmarks/bench_opensim_io.py
"""

from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parent.parent))  # run from a checkout too

import tempfile
import time
from pathlib import Path

import numpy as np

from gaitid.core.trial import Trial
from gaitid.io.mot import write_mot
from gaitid.io.opensim import read_opensim_trial, write_grf_mot
from gaitid.io.trc import read_trc, write_trc

REALDATA = Path(__file__).resolve().parent.parent.parent / "shared" / "realdata" / "opensim-models"


def best_of(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    if REALDATA.is_dir():
        trc = REALDATA / "subject01_walk1.trc"
        xml = REALDATA / "subject01_walk1_grf.xml"
        print(f"read_trc subject01_walk1 (151 x 41):           {best_of(lambda: read_trc(trc)) * 1e3:7.1f} ms")
        print(f"read_opensim_trial walk1 + GRF 600 Hz + XML:    "
              f"{best_of(lambda: read_opensim_trial(trc, external_loads_xml=xml)) * 1e3:7.1f} ms")
    else:
        print(f"real data absent ({REALDATA}): skipped")
    rng = np.random.default_rng(0)
    n, m, rate = 10_000, 60, 100.0
    markers = rng.normal(size=(n, m, 3)) + [0.0, 0.0, 1.0]
    trial = Trial(path=None, point_rate=rate, first_frame=1, marker_labels=[f"M{k}" for k in range(m)], markers=markers)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        out = tmp / "big.trc"
        print(f"write_trc 10000 x 60:                           {best_of(lambda: write_trc(trial, out)) * 1e3:7.1f} ms")
        print(f"read_trc 10000 x 60:                            {best_of(lambda: read_trc(out)) * 1e3:7.1f} ms")
        t = np.arange(n * 10) / (rate * 10)
        grf = np.column_stack([rng.normal(size=(t.size, 3)) * 10 + [0, 700, 0], np.full((t.size, 3), 0.5),
                               rng.normal(size=(t.size, 3))])
        labels = [f"ground_force_{a}" for a in ("vx", "vy", "vz", "px", "py", "pz")] + ["ground_torque_x",
                                                                                       "ground_torque_y",
                                                                                       "ground_torque_z"]
        mot = tmp / "big.mot"
        print(f"write_mot 100000 x 9:                           "
              f"{best_of(lambda: write_mot(mot, labels, t, grf)) * 1e3:7.1f} ms")
        print(f"read_opensim_trial 10000 frames + 1 kHz GRF:    "
              f"{best_of(lambda: read_opensim_trial(out, mot)) * 1e3:7.1f} ms")
        full = read_opensim_trial(out, mot)
        print(f"write_grf_mot 100000 samples:                   "
              f"{best_of(lambda: write_grf_mot(full, tmp / 'g.mot')) * 1e3:7.1f} ms")


if __name__ == "__main__":
    main()
