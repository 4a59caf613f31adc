"""Accuracy of the EMG on-off timing on synthetic bursts of known timing (docs/emg.md).

The sample walk with three synthetic channels (rectangular bursts of white noise, 50:1 on:off, the
truth exact per cycle: gaitid.validation.synthetic.emg_bursts), ten noise seeds. For each edge
cut-off (``emg_onset_hz``; 'none': the 6 Hz envelope's own crossings) and threshold fraction
(``emg_onset_fraction``) prints the RMS and the worst |detected - true| onset or offset in % of the
1 s cycle (edges at 0 % and 100 % of a cycle are the cycle's, not the detector's, and are left out)
and the cycles whose number of bursts is wrong.

    python benchmarks/bench_emg_timing.py [--seeds 10]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from gaitid.core.settings import Settings
from gaitid.emg import emg_stage
from gaitid.io.c3d import read_c3d
from gaitid.pipeline import process
from gaitid.validation.synthetic.emg_bursts import Burst, with_emg

ROOT = Path(__file__).resolve().parent.parent
BURSTS = [Burst("Left", "Tib Ant", ((0.0, 12.0), (60.0, 100.0))), Burst("Right", "Gast", ((20.0, 50.0),)),
          Burst("Left", "Rect", ((5.0, 15.0), (85.0, 95.0)))]


def errors(timing, bursts) -> tuple[list[float], int]:
    """The signed errors (% of the cycle) of the inner edges, and the cycles with a wrong burst count."""
    errs, wrong = [], 0
    for b in bursts:
        rows = timing[timing.channel == f"Voltage.{b.side[0]} {b.muscle}"]
        for _, group in rows.groupby("cycle"):
            group = group[group.burst > 0].sort_values("burst")
            if len(group) != len(b.bursts):
                wrong += 1
                continue
            for (on, off), row in zip(b.bursts, group.itertuples()):
                errs += [row.onset_percent - on] * (on > 0) + [row.offset_percent - off] * (off < 100)
    return errs, wrong


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    walk = read_c3d(ROOT / "sample_data" / "walk_synthetic.c3d")
    cycles = process(walk).cycles
    print("| edges on | threshold (fraction of range) | RMS error (% cycle) | worst (% cycle) | cycles with a wrong count |")
    print("|---|---|---|---|---|")
    trials = [with_emg(walk, BURSTS, seed=s) for s in range(args.seeds)]
    for edge in (None, 10.0, 20.0, 30.0, 50.0, 100.0):
        for fraction in (0.1, 0.25, 0.5):
            settings = Settings(emg_onset_hz=edge, emg_onset_fraction=fraction)
            errs, wrong = [], 0
            for trial in trials:
                e, w = errors(emg_stage(trial, cycles, settings).timing, BURSTS)
                errs += e
                wrong += w
            e = np.abs(errs)
            name = "6 Hz envelope" if edge is None else f"{edge:g} Hz"
            print(f"| {name} | {fraction:g} | {np.sqrt(np.mean(e ** 2)):.2f} | {e.max():.2f} | {wrong} |")


if __name__ == "__main__":
    main()
