"""Speed of event detection, plate assignment, per-foot loads and cycle tables on real trials.

Run: ``python benchmarks/bench_events.py [path/to/realdata]``; prints one line per trial
(milliseconds per stage, best of 5) and the totals. Reads ../shared/realdata in place.
"""

from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parent.parent))  # run from a checkout too

import sys
import time
import warnings
from pathlib import Path

from gaitid.contacts import assign_contacts
from gaitid.contacts.foot_loads import foot_loads
from gaitid.cycles.clinical import clinical_table
from gaitid.cycles.curves import cycle_curves, cycles_table, gait_cycles, model_output_curves
from gaitid.cycles.parameters import spatiotemporal_parameters
from gaitid.events import gait_events
from gaitid.io.c3d import read_c3d
from gaitid.model.gait_markers import gait_markers
from gaitid.model.markerset import load_model

FILES = [
    "btkdata/FunctionalWalk.c3d", "btkdata/PiG_Motion-FlatFoot-Full.c3d", "btkdata/PiG_Motion3_FF.c3d",
    "btkdata/PlugInC3D.c3d", "biomechzoo/HC030A05.c3d", "c3d-parser/MH0222_BP06.c3d",
    "python-gaitalytics/test_small.c3d", "ezc3d-testfiles/Qualisys.c3d",
]


def best_of(f, n=5):
    best, out = float("inf"), None
    for _ in range(n):
        t0 = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3, out


def main(root: Path) -> None:
    totals = [0.0] * 4
    print(f"{'trial':40s} {'frames':>6s} {'events':>8s} {'assign':>8s} {'loads':>8s} {'cycles':>8s}  (ms)")
    for rel in FILES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trial = read_c3d(root / rel)
        markers = gait_markers(load_model("isb" if "Qualisys" in rel else "plugin-gait"), trial)
        t_as, contacts = best_of(lambda: assign_contacts(trial, markers))
        t_ev, choice = best_of(lambda: gait_events(trial, contacts, markers))
        t_ld, _ = best_of(lambda: foot_loads(trial, contacts, choice.events))

        def tables():
            cyc = gait_cycles(choice.events, contacts)
            curves, units = model_output_curves(trial)
            table = cycle_curves(curves, trial.time, cyc, units)
            return spatiotemporal_parameters(trial, cyc, markers), clinical_table(table, cycles_table(cyc)), table

        t_cy, _ = best_of(tables)
        for k, v in enumerate((t_ev, t_as, t_ld, t_cy)):
            totals[k] += v
        print(f"{rel:40s} {trial.n_frames:6d} {t_ev:8.1f} {t_as:8.1f} {t_ld:8.1f} {t_cy:8.1f}")
    print(f"{'total':40s} {'':6s} " + " ".join(f"{v:8.1f}" for v in totals))


if __name__ == "__main__":
    default = Path(__file__).resolve().parent.parent.parent / "shared" / "realdata"
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else default)
