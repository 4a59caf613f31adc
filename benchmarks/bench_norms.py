"""Time building normative data and scoring against it, and check the cost grows linearly.

    python benchmarks/bench_norms.py

Controls are copies of the synthetic sample (6 cycles each) with independent noise; the
norms are built from 5, 10, 20 and 40 of them in one run and the CPU time per control is
printed with its ratio to the smallest set (1.0 = linear). Also: the clinical parameters of
one trial and its GPS/GDI against the norms. CPU seconds (the machine is shared).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from gaitid.cycles.clinical import result_clinical_parameters  # noqa: E402
from gaitid.cycles.scores import gait_scores  # noqa: E402
from gaitid.norms import ControlTables, build_norms, control_from_result  # noqa: E402
from gaitid.pipeline import process  # noqa: E402


def cpu(fn, *args, **kw):
    t = time.process_time()
    out = fn(*args, **kw)
    return out, time.process_time() - t


def main() -> None:
    result = process(ROOT / "sample_data" / "walk_synthetic.c3d")
    base = control_from_result(result)
    rng = np.random.default_rng(0)
    controls = [ControlTables(f"c{i}", base.curves.assign(value=base.curves["value"]
                                                            + rng.normal(0, 0.3, len(base.curves))),
                              base.parameters, base.cycles, base.settings, subject=f"s{i}") for i in range(40)]
    first = None
    norms = None
    for n in (5, 10, 20, 40):
        norms, t = cpu(build_norms, controls[:n])
        per = t / n
        first = first or per
        print(f"build_norms: {n:3d} controls ({6 * n:4d} cycles) {t:6.2f} s CPU, {per * 1000:6.1f} ms per control, "
              f"ratio to 5 controls {per / first:4.2f}")
    _, t = cpu(result_clinical_parameters, result)
    print(f"clinical parameters of one trial ({len(result.cycles)} cycles): {t * 1000:.0f} ms CPU")
    _, t = cpu(gait_scores, result, norms)
    print(f"gait_scores (GVS, GPS, GDI) of one trial: {t * 1000:.0f} ms CPU")


if __name__ == "__main__":
    main()
