"""Cost of the EMG stage against a whole `gaitid run`-equivalent process() (docs/emg.md).

A trial with 6 EMG channels at 1-2 kHz: the sample walk with 6 synthetic channels at its 1 kHz analog
rate, and Qualisys.c3d (16 'EMG n' channels at 2 kHz, six of them mapped) when ../shared/realdata is
there. Prints the median of the stage alone, of process() with and without the EMG, and the ratio.

    python benchmarks/bench_emg.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from gaitid.emg import emg_stage
from gaitid.io.c3d import read_c3d
from gaitid.pipeline import process
from gaitid.validation.synthetic.emg_bursts import Burst, with_emg

ROOT = Path(__file__).resolve().parent.parent
emg_stage_ms: list[float] = []
REAL = ROOT.parent / "shared" / "realdata" / "ezc3d-testfiles" / "Qualisys.c3d"


def median_s(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench(name: str, trial, repeat: int, **kwargs) -> None:
    with_emg_result = process(trial, **kwargs)
    cycles, settings = with_emg_result.cycles, with_emg_result.settings
    stage = median_s(lambda: emg_stage(trial, cycles, settings), repeat)
    whole = median_s(lambda: process(trial, **kwargs), repeat)
    n = len(with_emg_result.emg.used)
    emg_stage_ms.append(1000 * stage)
    print(f"{name}: {n} EMG channels at {trial.analogs.rate:g} Hz, {trial.analogs.values.shape[0]} samples; "
          f"EMG stage {1000 * stage:.1f} ms, process() {1000 * whole:.0f} ms: {100 * stage / (whole - stage):.1f} % "
          f"added")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    muscles = ["Rect", "Hams", "Tib Ant"]
    channels = [Burst(side, m, ((10.0 * k, 10.0 * k + 30.0),)) for side in ("Left", "Right")
                for k, m in enumerate(muscles)]
    bench("sample walk + 6 synthetic channels", with_emg(read_c3d(ROOT / "sample_data" / "walk_synthetic.c3d"),
                                                        channels), args.repeat)
    if REAL.exists():
        mapping = {f"EMG {k}": f"{'L' if k <= 3 else 'R'} {muscles[(k - 1) % 3]}" for k in range(1, 7)}
        mapping.update({f"EMG {k}": "off" for k in range(7, 17)})
        bench("Qualisys.c3d, 6 mapped channels", read_c3d(REAL), args.repeat, model="isb", subject="plates",
              emg_channels=mapping)
        import subprocess
        import sys
        import tempfile

        spec = ",".join(f"{k}={v}" for k, v in mapping.items())
        with tempfile.TemporaryDirectory() as out:
            cmd = [sys.executable, "-m", "gaitid.cli", "run", str(REAL), "--model", "isb", "--mass", "plates",
                   "--emg", spec, "--no-report", "-o", out]
            run = median_s(lambda: subprocess.run(cmd, check=True, capture_output=True), max(3, args.repeat // 2))
        print(f"  a lone `gaitid run --no-report` of it: {1000 * run:.0f} ms (the EMG stage is "
              f"{100 * emg_stage_ms[-1] / 1000 / run:.1f} % of it)")


if __name__ == "__main__":
    main()
