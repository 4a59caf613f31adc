"""Dump every table of process() on a fixed set of configurations, and compare two dumps.

A refactoring must not change a number. Dump before, dump after, compare:

    python benchmarks/compare_results.py dump /tmp/before      # at the old commit
    python benchmarks/compare_results.py dump /tmp/after       # at the new one
    python benchmarks/compare_results.py compare /tmp/before /tmp/after [--rtol 1e-12]

The configurations: every real trial in ../shared/realdata with the options a user would give
(default, Plug-in Gait settings, its static, the ISB model, the mass from the plates, other frames
and conventions), the synthetic walk (with overrides, segment parameters and uncertainty), and the
synthetic treadmill, stairs and walkway trials. A configuration that fails records its error text,
which must then be the same. Tables compared: frames, curves, curves_summary, parameters,
parameters_summary, contacts, event_comparison, the warnings, the data checks (name, status, detail,
warnings), the subject and its sources.
"""

from __future__ import annotations

import argparse
import pickle
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT.parent / "shared" / "realdata"
SAMPLE = ROOT / "sample_data"


REAL_OPTIONS = {  # the options each real trial needs (tests/test_ownership.py)
    "btkdata/PiG_Motion-FlatFoot-Full.c3d": {"static": str(REAL / "btkdata/PiG_Calibration-FlatFoot-Full.c3d")},
    "btkdata/PiG_Motion3_FF.c3d": {"static": str(REAL / "btkdata/PiG_Calibration3_FF.c3d")},
    "btkdata/FunctionalWalk.c3d": {},
    "btkdata/PlugInC3D.c3d": {"subject": {"mass": 66.7, "leg_length": 0.9, "knee_width": 0.1, "ankle_width": 0.07}},
    "biomechzoo/HC030A05.c3d": {},
    "c3d-parser/MH0222_BP06.c3d": {},
    "python-gaitalytics/test_small.c3d": {},
    "ezc3d-testfiles/Qualisys.c3d": {"model": "isb", "subject": "plates"},
    "opensim-core/walking2.c3d": {"model": "isb", "subject": "plates"},
    "opensim-models/subject01_walk1.trc": {"model": "isb-cast", "subject": 72.6,
                                           "static": str(REAL / "opensim-models/subject01_static.trc")},
}


def configurations(synthetic_dir: Path) -> dict[str, tuple[str, dict]]:
    from gaitid.core.settings import Settings

    out: dict[str, tuple[str, dict]] = {}
    for name, base in REAL_OPTIONS.items():
        path = REAL / name
        out[f"{name}|default"] = (str(path), base)
        out[f"{name}|plugin-gait"] = (str(path), {**base, "settings": Settings.plugin_gait()})
        out[f"{name}|proximal-external-detected"] = (str(path), {**base, "frame": "proximal",
                                                               "convention": "external", "events": "detected"})
        if "subject" not in base:
            out[f"{name}|plates-mass"] = (str(path), {**base, "subject": "plates"})
    for name in ("btkdata/Eb015pi.c3d", "btkdata/Gait.c3d", "btkdata/PlugInC3D.c3d", "biomechzoo/HC030A05.c3d"):
        out[f"{name}|refused"] = (str(REAL / name), {"model": "isb"})
    walk, static = SAMPLE / "walk_synthetic.c3d", SAMPLE / "static_synthetic.c3d"
    out["sample|default"] = (str(walk), {})
    out["sample|static"] = (str(walk), {"static": str(static)})
    out["sample|lab-bwheight"] = (str(walk), {"static": str(static), "frame": "lab", "normalise": "bw-height",
                                              "plates": {1: "Left"}})
    out["sample|segments"] = (str(walk), {"segment_parameters": {"thigh": {"mass": 7.2, "com_from_proximal": 0.433,
                                                                            "inertia": [0.139, 0.139, 0.030]}}})
    out["sample|uncertainty"] = (str(walk), {"static": str(static), "uncertainty": {"samples": 40, "seed": 3}})
    out["sample|lab-none"] = (str(walk), {"frame": "lab", "normalise": "none", "force_cutoff_hz": None,
                                          "subject": {"mass": 80.0, "height": 1.8}})
    for name in ("treadmill.c3d", "stairs.c3d", "walkway.c3d"):
        out[f"synthetic|{name}"] = (str(synthetic_dir / name), {})
    return out


def write_synthetic(folder: Path) -> None:
    from gaitid.validation.synthetic.stairs import write_stairs
    from gaitid.validation.synthetic.treadmill_trial import write_treadmill
    from gaitid.validation.synthetic.walkway import write_walkway

    write_treadmill(folder / "treadmill.c3d", duration_s=6.0, truth=False)
    write_stairs(folder / "stairs.c3d", truth=False)
    write_walkway(folder / "walkway.c3d", n_frames=1200, truth=False)


def tables(result) -> dict[str, object]:
    out = {}
    for name in ("frames", "curves", "curves_summary", "parameters", "parameters_summary", "contacts",
                 "event_comparison"):
        value = getattr(result, name)
        out[name] = None if value is None else value.reset_index(drop=True).copy()
    out["warnings"] = list(result.warnings)
    out["checks"] = [(c.name, str(c.status), c.detail, list(c.warnings)) for c in result.checks]
    subject = result.subject
    out["subject"] = repr(getattr(subject, "subject", subject))
    out["sources"] = repr(getattr(subject, "sources", None))
    out["events"] = [(e.label if hasattr(e, "label") else repr(e), getattr(e, "frame", None), getattr(e, "side", None))
                     for e in result.events]
    return out


def dump(folder: Path) -> int:
    sys.path.insert(0, str(ROOT))  # this checkout's gaitid, whatever is installed
    from gaitid import process
    from gaitid.core.errors import GaitIDError

    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        write_synthetic(Path(tmp))
        configs = configurations(Path(tmp))
        for i, (key, (source, kwargs)) in enumerate(configs.items()):
            try:
                value = tables(process(source, **kwargs))
            except GaitIDError as err:
                value = {"error": f"{type(err).__name__}: {err}".replace(tmp, "<tmp>")}
            with open(folder / f"{i:03d}.pkl", "wb") as f:
                pickle.dump((key, value), f)
            print(key, "error" if "error" in value else "ok", file=sys.stderr)
    return 0


def _same(a, b, rtol: float) -> str | None:
    if isinstance(a, pd.DataFrame) and isinstance(b, pd.DataFrame):
        if list(a.columns) != list(b.columns) or a.shape != b.shape:
            return f"shape/columns {a.shape} {list(a.columns)} vs {b.shape} {list(b.columns)}"
        for col in a.columns:
            x, y = a[col], b[col]
            if pd.api.types.is_float_dtype(x) and pd.api.types.is_float_dtype(y):
                xv, yv = x.to_numpy(float), y.to_numpy(float)
                if not np.array_equal(np.isnan(xv), np.isnan(yv)):
                    return f"column {col}: NaN pattern differs"
                ok = ~np.isnan(xv)
                err = np.abs(xv[ok] - yv[ok])
                tol = rtol * np.maximum(1.0, np.abs(xv[ok]))
                if np.any(err > tol):
                    return f"column {col}: max difference {err.max():.3g}"
            elif not x.astype(str).equals(y.astype(str)):
                return f"column {col} differs"
        return None
    if type(a) is not type(b):
        return f"type {type(a).__name__} vs {type(b).__name__}"
    return None if a == b else f"{str(a)[:300]} vs {str(b)[:300]}"


def compare(a: Path, b: Path, rtol: float) -> int:
    files = sorted(p.name for p in a.glob("*.pkl"))
    if sorted(p.name for p in b.glob("*.pkl")) != files:
        print("different configuration sets")
        return 1
    bad = same_error = 0
    for name in files:
        (ka, va), (kb, vb) = (pickle.loads((d / name).read_bytes()) for d in (a, b))
        if ka != kb:
            print(f"{name}: configuration {ka} vs {kb}")
            bad += 1
            continue
        if set(va) != set(vb):
            print(f"{ka}: {sorted(va)} vs {sorted(vb)}")
            bad += 1
            continue
        diffs = [(k, d) for k in va if (d := _same(va[k], vb[k], rtol))]
        for k, d in diffs:
            print(f"{ka}: {k}: {d}")
        bad += bool(diffs)
        same_error += "error" in va and not diffs
    print(f"{len(files)} configurations: {len(files) - bad - same_error} identical, {same_error} with the same "
          f"error, {bad} different (rtol {rtol:g})")
    return 1 if bad else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("folder", type=Path)
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    c.add_argument("--rtol", type=float, default=1e-12)
    args = ap.parse_args(argv)
    if args.command == "dump":
        if not REAL.is_dir():
            print(f"{REAL} is absent: only the synthetic configurations would run", file=sys.stderr)
        return dump(args.folder)
    return compare(args.a, args.b, args.rtol)


if __name__ == "__main__":
    sys.exit(main())
