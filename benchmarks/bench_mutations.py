"""Mutations of real trials against the data checks: each must give a right result, a clear error
or a warning naming the problem; every clean trial none (docs/checks.md).

    python benchmarks/bench_mutations.py [--trials a.c3d,b.c3d] [--markdown] [--all-knocks]

For every trial (the clean real trials of ../shared/realdata that carry Plug-in Gait markers and
plates, and the synthetic sample walk) and every mutation (a plate's gain, units, geometry, signs;
the body mass; marker faults; events), the trial is processed clean and mutated, and the outcome
classified:

- ``error``: gaitid refused the file with a message (shown);
- ``warned``: new warnings (those the clean trial does not give), the first shown;
- ``right``: no new warning and the joint moments within 30 % of the clean trial's (the largest
  difference over the six ankle, knee and hip moments on the frames of the kinetic cycles,
  relative to each moment's peak);
- ``rejected``: no new warning, but a plate contact the clean trial uses is rejected with its reason
  (its kinetics NaN; the reason in the contacts table, the report and the command line);
- ``no kinetics``: no new warning, no kinetic cycle left;
- ``SILENT``: no new warning and a moment more than 30 % off: the failure this table exists to find.

Marker mutations are written with ezc3d and compared with the same file written by ezc3d untouched
(ezc3d's writer is not byte-identical to the lab's). Prints one row per case and the counts.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from tests.c3d_mutations import RawC3D  # noqa: E402

import gaitid  # noqa: E402
from gaitid.core.errors import GaitIDError  # noqa: E402
from gaitid.core.resources import sample_data_dir  # noqa: E402

REAL = HERE.parent.parent / "shared" / "realdata"
TRIALS = {  # trial -> process() options (the clean real trials with Plug-in Gait markers and plates)
    "c3d-parser/MH0222_BP06.c3d": {},
    "biomechzoo/HC030A05.c3d": {},
    "btkdata/PiG_Motion3_FF.c3d": {"static": "btkdata/PiG_Calibration3_FF.c3d"},
    "btkdata/PiG_Motion-FlatFoot-Full.c3d": {"static": "btkdata/PiG_Calibration-FlatFoot-Full.c3d"},
    "btkdata/FunctionalWalk.c3d": {},
    "python-gaitalytics/test_small.c3d": {},
    "sample": {"static": "sample-static"},
}
MOMENTS = ("AnkleMoment", "KneeMoment", "HipMoment")
LIMIT = 0.30


# ---- parameter mutations (RawC3D: every other byte the original's) ----

def _plate_channels(c: RawC3D, plate: int) -> np.ndarray:
    rows = c.param("FORCE_PLATFORM", "CHANNEL").dims[0]
    return c.numbers("FORCE_PLATFORM", "CHANNEL").astype(int).reshape(-1, rows)[plate - 1] - 1


def _scale(c: RawC3D, channels, factor: float) -> None:
    scale = c.numbers("ANALOG", "SCALE").copy()
    scale[channels] *= factor
    c.set_numbers("ANALOG", "SCALE", scale, dims=c.param("ANALOG", "SCALE").dims)


def gain(factor: float, plate: int | None = 1, which=slice(None)):
    def edit(c, loaded):
        plates = range(1, c.param("FORCE_PLATFORM", "CHANNEL").dims[1] + 1) if plate is None else [loaded]
        for p in plates:
            _scale(c, _plate_channels(c, p)[which], factor)
    return edit


def mass(factor: float | None = None, value: float | None = None):
    def edit(c, loaded):
        old = float(c.numbers("PROCESSING", "BODYMASS")[0])
        c.set_numbers("PROCESSING", "BODYMASS", [value if value is not None else old * factor],
                      dims=c.param("PROCESSING", "BODYMASS").dims)
    return edit


def corners(kind: str):
    def edit(c, loaded):
        dims = c.param("FORCE_PLATFORM", "CORNERS").dims
        k = c.numbers("FORCE_PLATFORM", "CORNERS").reshape(-1, 4, 3).copy()
        p = loaded - 1
        if kind == "mirrored":
            k[p] = k[p][[1, 0, 3, 2]]
        elif kind == "rotated":
            k[p] = np.roll(k[p], 1, axis=0)
        elif kind == "swapped":
            q = 1 if p == 0 else 0
            k[[p, q]] = k[[q, p]]
        elif kind == "shifted":
            k[p, :, 0] += 300.0 if c.strings("POINT", "UNITS")[0].strip().lower() == b"mm" else 0.3
        c.set_numbers("FORCE_PLATFORM", "CORNERS", k.ravel(), dims=dims)
    return edit


def origin(factor: float):
    def edit(c, loaded):
        dims = c.param("FORCE_PLATFORM", "ORIGIN").dims
        o = c.numbers("FORCE_PLATFORM", "ORIGIN").reshape(-1, 3).copy()
        o[loaded - 1] *= factor
        c.set_numbers("FORCE_PLATFORM", "ORIGIN", o.ravel(), dims=dims)
    return edit


def units(role: str, new: bytes):
    def edit(c, loaded):
        labels = c.strings("ANALOG", "UNITS")
        ch = _plate_channels(c, loaded)
        take = ch[3:6] if role == "moment" else ch[0:3]
        width = max(len(s) for s in labels)
        c.set_strings("ANALOG", "UNITS", [new.ljust(width) if i in take else s for i, s in enumerate(labels)])
    return edit


def point_units(new: bytes):
    def edit(c, loaded):
        c.set_strings("POINT", "UNITS", [new])
    return edit


def events_shift(seconds: float):
    def edit(c, loaded):
        dims = c.param("EVENT", "TIMES").dims
        t = c.numbers("EVENT", "TIMES").reshape(-1, 2).copy()
        t[:, 1] += seconds
        c.set_numbers("EVENT", "TIMES", t.ravel(), dims=dims)
    return edit


# ---- marker mutations (ezc3d) ----

def _markers(kind: str):
    def edit(points: np.ndarray, labels: list[str], rate: float) -> bool:
        n = points.shape[2]
        idx = {name: i for i, name in enumerate(labels)}
        if kind == "knee swap from mid-trial":
            a, b = idx.get("LKNE"), idx.get("RKNE")
            if a is None or b is None:
                return False
            points[:, [a, b], n // 2:] = points[:, [b, a], n // 2:]
        elif kind == "ankle swap":
            a, b = idx.get("LANK"), idx.get("RANK")
            if a is None or b is None:
                return False
            points[:, [a, b], :] = points[:, [b, a], :]
        elif kind == "RTIB<->RANK swap":
            a, b = idx.get("RTIB"), idx.get("RANK")
            if a is None or b is None:
                return False
            points[:, [a, b], :] = points[:, [b, a], :]
        elif kind == "RTOE stuck 1 s":
            a = idx.get("RTOE")
            if a is None:
                return False
            k = int(rate)
            start = max(n // 2 - k // 2, 0)
            points[:3, a, start:start + k] = points[:3, a, start:start + 1]
        elif kind in KNOCKS:
            label, offset_mm = KNOCKS[kind]
            a = idx.get(label)
            if a is None:
                return False
            points[:3, a, n // 2:] += np.asarray(offset_mm, float)[:, None]  # lab axes, mm in every trial used
        return True
    return edit


PARAMETER_CASES = {
    "plate gain x1000": gain(1000.0), "plate gain x2": gain(2.0), "plate gain x0.5": gain(0.5),
    "all plates' gain x1.3": gain(1.3, plate=None), "Fz sign flipped": gain(-1.0, which=[2]),
    "moment gain x1000": gain(1000.0, which=slice(3, 6)), "mass 5000 kg": mass(value=5000.0),
    "mass x1.3": mass(1.3), "mass x0.7": mass(0.7),
    "corners mirrored": corners("mirrored"), "corners rotated one place": corners("rotated"),
    "corners of two plates swapped": corners("swapped"), "plate moved 0.3 m": corners("shifted"),
    "origin x1000": origin(1000.0), "origin sign flipped": origin(-1.0),
    "moment units Nmm->Nm": units("moment", b"Nm"), "force units N->kN": units("force", b"kN"),
    "POINT:UNITS mm->m": point_units(b"m"), "events +2 s": events_shift(2.0), "events -1 s": events_shift(-1.0),
}
KNOCKS = {  # a marker moved from mid-trial to the end: (label, lab offset in mm)
    "LKNE knocked 5 cm": ("LKNE", (50.0, 0.0, 0.0)), "LKNE knocked 5 cm along lab Y": ("LKNE", (0.0, 50.0, 0.0)),
    "LKNE knocked 5 cm up": ("LKNE", (0.0, 0.0, 50.0)), "LKNE knocked 3 cm": ("LKNE", (30.0, 0.0, 0.0)),
    "LANK knocked 5 cm": ("LANK", (50.0, 0.0, 0.0)), "LTIB knocked 5 cm": ("LTIB", (50.0, 0.0, 0.0)),
    "LTHI knocked 5 cm": ("LTHI", (50.0, 0.0, 0.0)), "RASI knocked 5 cm up": ("RASI", (0.0, 0.0, 50.0)),
}
MARKER_CASES = ["knee swap from mid-trial", "ankle swap", "RTIB<->RANK swap", "RTOE stuck 1 s", *KNOCKS]
MORE_KNOCKS = {  # --all-knocks: ten markers, 3 cm along lab X, Y, Z and 5 cm along +X, -X, +Y, -Y, +Z (80 kinds)
    f"{label} knocked {size} cm along {axis}": (label, tuple(sign * 10.0 * size * (i == "XYZ".index(axis[-1]))
                                                              for i in range(3)))
    for label in ("LKNE", "RKNE", "LANK", "LTIB", "LTHI", "RTHI", "RTIB", "LHEE", "LTOE", "RASI")
    for size, axes in ((3, ("X", "Y", "Z")), (5, ("X", "-X", "Y", "-Y", "Z")))
    for axis in axes for sign in ((-1.0,) if axis.startswith("-") else (1.0,))
}


def _resolve(name: str) -> Path:
    if name == "sample":
        return sample_data_dir() / "walk_synthetic.c3d"
    if name == "sample-static":
        return sample_data_dir() / "static_synthetic.c3d"
    return REAL / name


def _run(path: Path, options: dict):
    t0 = time.perf_counter()
    try:
        return gaitid.process(path, **options), time.perf_counter() - t0
    except GaitIDError as exc:
        return exc, time.perf_counter() - t0


def _moments(result) -> dict:
    return {(side, v): result.outputs.curves[side][v] for side in result.outputs.curves for v in MOMENTS
            if v in result.outputs.curves[side]}


def _kinetic_frames(result, side: str) -> np.ndarray:
    """(n,) frames inside the Result's kinetic cycles of ``side``: what its curves report as kinetics."""
    t = result.trial.time
    inside = np.zeros(t.size, bool)
    for c in result.cycles:
        if c.side == side and c.kinetic:
            inside |= (t >= c.start_time) & (t <= c.end_time)
    return inside


def deviation(clean, mutated) -> float:
    """The largest moment difference, over the frames of the mutated trial's kinetic cycles,
    relative to the clean moment's peak; NaN when the mutated trial reports no such moment."""
    worst, any_common = 0.0, False
    a, b = _moments(clean), _moments(mutated)
    for key, c in a.items():
        m = b.get(key)
        if m is None or c.shape != m.shape:
            continue
        both = np.isfinite(c).all(1) & np.isfinite(m).all(1) & _kinetic_frames(mutated, key[0])
        peak = np.nanmax(np.abs(c)) if np.isfinite(c).any() else 0.0
        if not both.any() or not peak > 0:
            continue
        any_common = True
        worst = max(worst, float(np.max(np.abs(m[both] - c[both]))) / peak)
    return worst if any_common else float("nan")


def outcome(clean, mutated) -> tuple[str, str, float]:
    if isinstance(mutated, GaitIDError):
        return "error", str(mutated).splitlines()[0], float("nan")
    new = [w for w in mutated.warnings if w not in clean.warnings]
    dev = deviation(clean, mutated)
    if new:
        return "warned", new[0], dev
    was = {(c.plates, c.reason) for c in clean.foot_contacts if not c.valid}
    rejected = [c for c in mutated.foot_contacts if not c.valid and (c.plates, c.reason) not in was]
    if rejected:  # NaN with the reason recorded (contacts table, report, command line)
        return "rejected", rejected[0].reason, dev
    if not np.isfinite(dev):
        return "no kinetics", "", dev
    return ("right" if dev <= LIMIT else "SILENT"), "", dev


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", help="comma-separated keys of TRIALS (default: all present)")
    ap.add_argument("--cases", help="comma-separated substrings of the case names")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    ap.add_argument("--width", type=int, default=110, help="characters of each message shown")
    ap.add_argument("--all-knocks", action="store_true",
                    help="instead of the cases above, 80 knocks: ten markers, 3 and 5 cm along the lab axes")
    args = ap.parse_args(argv)
    if args.all_knocks:
        KNOCKS.update(MORE_KNOCKS)
    import ezc3d

    names = args.trials.split(",") if args.trials else list(TRIALS)
    rows, counts, false_alarms = [], {}, []
    tmp = Path(tempfile.mkdtemp(prefix="gaitid-mutations-"))
    try:
        for name in names:
            path = _resolve(name)
            if not path.is_file():
                print(f"skip {name}: {path} absent")
                continue
            options = {k: _resolve(v) for k, v in TRIALS[name].items()}
            clean, _ = _run(path, options)
            if isinstance(clean, GaitIDError):
                print(f"skip {name}: the clean trial fails: {clean}")
                continue
            warned_checks = [c.name for c in clean.checks if c.status == "warned"]
            if warned_checks:
                false_alarms.append((name, warned_checks))
            loaded = next((c.plates[0] for c in clean.foot_contacts if c.valid), 1)
            stem = Path(name).stem
            cases = []
            for case, edit in ({} if args.all_knocks else PARAMETER_CASES).items():
                cases.append((case, "raw", edit))
            for case in (MORE_KNOCKS if args.all_knocks else MARKER_CASES):
                cases.append((case, "ezc3d", _markers(case)))
            if args.cases:
                cases = [c for c in cases if any(s in c[0] for s in args.cases.split(","))]
            base = None
            for case, how, edit in cases:
                out = tmp / f"{stem}_{len(rows)}.c3d"
                try:
                    if how == "raw":
                        c = RawC3D(path.read_bytes())
                        edit(c, loaded)
                        out.write_bytes(c.to_bytes())
                        reference = clean
                    else:
                        if base is None:
                            base_path = tmp / f"{stem}_ezc3d.c3d"
                            ezc3d.c3d(str(path)).write(str(base_path))
                            base = _run(base_path, options)[0]
                        e = ezc3d.c3d(str(path))
                        pts = e["data"]["points"]
                        labels = list(e["parameters"]["POINT"]["LABELS"]["value"])
                        if not edit(pts, labels, float(e["parameters"]["POINT"]["RATE"]["value"][0])):
                            continue
                        e["data"]["points"] = pts
                        e.write(str(out))
                        reference = base
                except (KeyError, IndexError, ValueError) as exc:  # the trial lacks what the case changes
                    rows.append((name, case, "n/a", f"cannot mutate: {type(exc).__name__} {exc}"[:args.width],
                                 float("nan")))
                    continue
                mutated, _ = _run(out, options)
                kind, message, dev = outcome(reference, mutated)
                counts[kind] = counts.get(kind, 0) + 1
                rows.append((name, case, kind, message[:args.width], dev))
                print(f"{name:38s} {case:30s} {kind:11s} {100 * dev:7.1f} %  {message[:args.width]}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.markdown:
        print("\n| trial | mutation | outcome | largest moment difference | message |\n|---|---|---|---|---|")
        for name, case, kind, message, dev in rows:
            d = f"{100 * dev:.0f} %" if np.isfinite(dev) else "-"
            print(f"| {name} | {case} | {kind} | {d} | {message} |")
    print("\noutcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print(f"clean trials with a warned check (false alarms): {false_alarms or 'none'}")
    return 1 if counts.get("SILENT") or false_alarms else 0


if __name__ == "__main__":
    raise SystemExit(main())
