"""The markers check (gaitid.model.marker_faults) on clean trials and on marker faults written into
copies of them with ezc3d: the kinetics' change each fault makes, and what the check says.

    python benchmarks/bench_marker_faults.py [--cost]

Prints one row per (trial, fault): the largest change of a sagittal joint moment (N.m/kg, any
joint, either side, frames known in both) against the clean trial written the same way, the
warnings the trial had before the check existed (other than the clean trial's), and the check's
status with its first warning. ``--cost``: the check's time per trial against process()'s.
Needs ../shared/realdata beside the checkout (docs/checks.md, markers section).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from compare_results import REAL, REAL_OPTIONS

TRIALS = {k: v for k, v in REAL_OPTIONS.items() if "model" not in v}  # Plug-in Gait markers
TRIALS["sample_data/walk_synthetic.c3d"] = {}


def source(name: str) -> Path:
    return ROOT / name if name.startswith("sample_data") else REAL / name


def swap(a: str, b: str, from_half: bool = False):
    def edit(labels, xyz, rate):  # xyz (4, m, n) in the file's units
        i, j, n = labels.index(a), labels.index(b), xyz.shape[2]
        k = n // 2 if from_half else 0
        xyz[:3, [i, j], k:] = xyz[:3, [j, i], k:]
    return edit


def freeze(a: str, seconds: float = 1.0):
    def edit(labels, xyz, rate):
        i, n = labels.index(a), xyz.shape[2]
        w = round(seconds * rate)
        k = max(0, n // 2 - w // 2)
        xyz[:3, i, k:k + w] = xyz[:3, i, k:k + 1]
    return edit


def knock(a: str, offset_mm=(0.0, 0.0, 50.0)):
    def edit(labels, xyz, rate):
        i, n = labels.index(a), xyz.shape[2]
        xyz[:3, i, n // 2:] += np.asarray(offset_mm)[:, None]  # file units are mm in every trial used
    return edit


FAULTS = {
    "LKNE<->RKNE from mid-trial": swap("LKNE", "RKNE", True),
    "LANK<->RANK all trial": swap("LANK", "RANK"),
    "RTOE frozen 1 s": freeze("RTOE"),
    "LKNE +5 cm up from mid-trial": knock("LKNE", (0.0, 0.0, 50.0)),
    "LKNE +5 cm lab X from mid-trial": knock("LKNE", (50.0, 0.0, 0.0)),
    "RTIB<->RANK all trial": swap("RTIB", "RANK"),
}


def write_mutant(src: Path, dst: Path, edit=None) -> Path:
    """``src`` read and written back by ezc3d, its points edited by ``edit`` (labels, (4, m, n), rate)."""
    import ezc3d

    c = ezc3d.c3d(str(src))
    if edit is not None:
        labels = list(c["parameters"]["POINT"]["LABELS"]["value"])
        xyz = np.array(c["data"]["points"])
        edit(labels, xyz, float(c["parameters"]["POINT"]["RATE"]["value"][0]))
        c["data"]["points"] = xyz
    c.write(str(dst))
    return dst


def sagittal_moments(result) -> dict[str, np.ndarray]:
    out = {}
    for side, curves in result.outputs.curves.items():
        for name, value in curves.items():
            if name.endswith("Moment") and "Ground" not in name:
                out[f"{side} {name}"] = np.asarray(value)[:, 0]
    return out


def largest_change(a, b) -> float:
    ma, mb = sagittal_moments(a), sagittal_moments(b)
    diffs = [np.nanmax(np.abs(ma[k] - mb[k])) for k in ma if k in mb and np.isfinite(ma[k] - mb[k]).any()]
    return float(max(diffs)) if diffs else float("nan")


def run(folder: Path) -> None:
    from gaitid.pipeline import process

    print("| trial | fault | moment change (N.m/kg) | warnings before | markers check |")
    print("|---|---|---|---|---|")
    for name, options in TRIALS.items():
        clean_path = write_mutant(source(name), folder / "clean.c3d")
        clean = process(clean_path, **options)
        check = next(c for c in clean.checks if c.name == "markers")
        print(f"| {name} | none | 0 | - | {check.status} |")
        for fault, edit in FAULTS.items():
            result = process(write_mutant(source(name), folder / "mutant.c3d", edit), **options)
            check = next(c for c in result.checks if c.name == "markers")
            before = [w for w in result.warnings if w not in clean.warnings and w not in check.warnings]
            first = check.warnings[0][:90] + "..." if check.warnings else ""
            print(f"| {name} | {fault} | {largest_change(result, clean):.2f} | {len(before)} | "
                  f"{check.status} ({len(check.warnings)}) {first} |")


def cost() -> None:
    from gaitid.core.settings import Settings
    from gaitid.model.marker_faults import marker_fault_check
    from gaitid.model.markerset import load_model
    from gaitid.pipeline import process

    for name, options in [("sample_data/walk_synthetic.c3d", {}), ("opensim-core/walking2.c3d",
                                                                   REAL_OPTIONS["opensim-core/walking2.c3d"])]:
        path = source(name)
        result = process(path, **options)
        t0 = time.perf_counter()
        for _ in range(5):
            process(path, **options)
        full = (time.perf_counter() - t0) / 5
        model = load_model(result.settings.model)
        s = Settings()
        t0 = time.perf_counter()
        for _ in range(20):
            marker_fault_check(result.trial, model, result.kinematics, length_tolerance_m=s.segment_length_tolerance_m)
        own = (time.perf_counter() - t0) / 20
        print(f"{name}: {result.trial.n_frames} frames, check {1000 * own:.1f} ms, process() {1000 * full:.0f} ms "
              f"({100 * own / full:.1f} %)")


def main(argv=None) -> int:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--cost", action="store_true")
    ns = args.parse_args(argv)
    if ns.cost:
        cost()
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        run(Path(tmp))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
