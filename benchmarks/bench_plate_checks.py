"""Cost of the force-plate checks (plate geometry, plate units, COP under the foot) against process().

    PYTHONPATH=. python benchmarks/bench_plate_checks.py

Times each on the synthetic sample walk and the largest real trials with plates (read in place
from ../shared/realdata): python-gaitalytics/test_small.c3d (the largest file) and
opensim-core/walking2.c3d (the most frames: 1249 at 250 Hz; ISB model, mass from the plates). Best of 5.
"""

from __future__ import annotations

import time
import warnings
from functools import partial
from pathlib import Path

from gaitid.contacts.cop_check import cop_foot_check
from gaitid.core.resources import sample_data_dir
from gaitid.io.plate_checks import plate_geometry_check, plate_units_check
from gaitid.model.gait_markers import gait_markers
from gaitid.model.markerset import load_model
from gaitid.pipeline import process

REAL = Path(__file__).resolve().parents[1].parent / "shared" / "realdata"


def best(f, n=5) -> float:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        out.append(time.perf_counter() - t)
    return min(out)


def main() -> None:
    warnings.simplefilter("ignore")
    for path, options in ((sample_data_dir() / "walk_synthetic.c3d", {}),
                          (REAL / "python-gaitalytics" / "test_small.c3d", {}),
                          (REAL / "opensim-core" / "walking2.c3d", {"model": "isb", "subject": "plates"})):
        if not path.exists():
            print(f"{path}: absent, skipped")
            continue
        r = process(path, **options)
        s, t = r.settings, r.trial
        markers = gait_markers(load_model(s.model), t)
        geo = best(partial(plate_geometry_check, t, s.plate_corner_tolerance_m, s.plate_origin_offset_m,
                           s.plate_origin_depth_m))
        uni = best(partial(plate_units_check, t, s.plate_cop_outside_m))
        cop = best(partial(cop_foot_check, t, markers, r.foot_contacts, s.cop_foot_margin_m, s.cop_min_travel))
        full = best(partial(process, path, **options), 3)
        print(f"{path.name}: {t.n_frames} frames, {len(t.force_plates)} plates: geometry {geo * 1e3:.2f} ms, "
              f"units {uni * 1e3:.2f} ms, COP {cop * 1e3:.2f} ms; process() {full * 1e3:.0f} ms "
              f"({100 * (geo + uni + cop) / full:.2f} %)")


if __name__ == "__main__":
    main()
