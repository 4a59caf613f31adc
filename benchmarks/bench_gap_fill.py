"""Cut gaps into one marker at a time in mid-stance of the clean real trials; fill; compare with the uncut trial.

    python benchmarks/bench_gap_fill.py [--lengths 0.1 0.3 0.5] [--quick]
    python benchmarks/bench_gap_fill.py --cost
    python benchmarks/bench_gap_fill.py --methods      # each method forced on the same gaps
                                                       # (rigid_static: the trials with a static)
    python benchmarks/bench_gap_fill.py --events --lengths 0.05 0.1 0.15 0.2 0.3 0.4 0.5

For every clean Plug-in Gait trial in ../shared/realdata, every marker of (knee, thigh, tibia, ankle,
heel, toe, ASIS, sacrum/PSIS) on one side, and every gap length, the gap is centred on the middle of
the first kinetic cycle's stance of that side. Printed per method and gap length: the marker
reconstruction RMS (mm) over the gap; the sagittal hip/knee/ankle moment RMS difference (N.m/kg)
over the gapped stance; cycles lost; the largest event shift (frames). Also the cost of the fill
(ms) against process() on the cut trial.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
REAL = ROOT.parent / "shared" / "realdata"

TRIALS = {  # file: process() options
    "btkdata/PiG_Motion-FlatFoot-Full.c3d": {"static": str(REAL / "btkdata/PiG_Calibration-FlatFoot-Full.c3d")},
    "btkdata/PiG_Motion3_FF.c3d": {"static": str(REAL / "btkdata/PiG_Calibration3_FF.c3d")},
    "btkdata/FunctionalWalk.c3d": {},
    "biomechzoo/HC030A05.c3d": {},
    "c3d-parser/MH0222_BP06.c3d": {},
    "python-gaitalytics/test_small.c3d": {},
}
MARKERS = ("KNE", "THI", "TIB", "ANK", "HEE", "TOE", "ASI", "SACR")


def cut(trial, label, a, b):
    """The trial with marker ``label`` NaN on frames [a, b)."""
    m = trial.markers.copy()
    m[a:b, trial.marker_labels.index(label)] = np.nan
    return replace(trial, markers=m)


def stance_middle(result, side):
    """Array index of the middle of the first kinetic cycle's stance of ``side``, with its stance frames."""
    t = result.trial
    for c in result.cycles:
        if c.side == side and c.kinetic:
            a, b = t.index_of_time(c.start_time), t.index_of_time(c.foot_off_time)
            return (a + b) // 2, (a, b)
    return None, None


def sagittal(result, side, a, b):
    out = []
    for joint in ("Hip", "Knee", "Ankle"):
        out.append(result.outputs.curves[side][f"{joint}Moment"][a:b, 0])
    return np.stack(out, 1)


def cost(repeats: int = 7) -> None:
    """Median ms of the gap filling alone and of process(), without gaps and with three 0.3 s gaps."""
    from gaitid import process
    from gaitid.model.gap_fill import fill_marker_gaps
    from gaitid.model.markerset import load_model
    from gaitid.pipeline import load_trial

    cases = [("sample walk", ROOT / "sample_data" / "walk_synthetic.c3d", "plugin-gait", {}, ()),
             ("walking2.c3d (1249 frames, 250 Hz)", REAL / "opensim-core/walking2.c3d", "isb",
              {"subject": "plates"}, ()),
             ("test_small.c3d, 3 gaps of 0.3 s", REAL / "python-gaitalytics/test_small.c3d", "plugin-gait", {},
              (("LKNE", 150), ("RTIB", 200), ("LASI", 120))),
             ("walking2.c3d, 3 gaps of 0.3 s", REAL / "opensim-core/walking2.c3d", "isb", {"subject": "plates"},
              (("LLFC", 600), ("RMT1", 650), ("LASI", 700)))]
    for name, path, model, opts, gaps in cases:
        trial = load_trial(path)
        for label, a in gaps:
            trial = cut(trial, label, a, a + int(round(0.3 * trial.point_rate)))
        m = load_model(model)

        def timed(fn):
            out = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                fn()
                out.append(time.perf_counter() - t0)
            return 1000 * float(np.median(out))

        fill = timed(lambda: fill_marker_gaps(trial, m))
        whole = timed(lambda: process(trial, model=model, **opts))
        print(f"{name:40s} fill {fill:7.2f} ms   process() {whole:7.1f} ms   share {100 * fill / whole:5.1f} %")


def marker_label(trial, side: str, mk: str) -> str | None:
    """The trial's label of marker kind ``mk`` on ``side`` (the sacrum, or that side's PSIS), None when
    the trial has no sample of it."""
    pre = side[0]
    label = {"ASI": pre + "ASI", "SACR": "SACR" if "SACR" in trial.marker_labels else pre + "PSI"}.get(mk, pre + mk)
    if label not in trial.marker_labels or not np.isfinite(trial.point(label)).any():
        return None
    return label


def methods(lengths) -> None:
    """Marker reconstruction RMS (mm) of each method on the same mid-stance gaps, every method
    forced: spline (any length), rigid body (where three segment markers remain), PCA."""
    from gaitid.core.signal import fill_gaps
    from gaitid.model.gap_fill import fill_marker_gaps
    from gaitid.model.markerset import load_model
    from gaitid import process
    from gaitid.pipeline import load_trial

    model = load_model("plugin-gait")
    errs = {}
    for name, opts in TRIALS.items():
        trial = load_trial(REAL / name)
        ref = process(trial, **opts)
        static = load_trial(opts["static"]) if "static" in opts else None
        for side in ("Left", "Right"):
            mid, _ = stance_middle(ref, side)
            if mid is None:
                continue
            for mk in MARKERS:
                label = marker_label(trial, side, mk)
                if label is None:
                    continue
                for length in lengths:
                    g = int(round(length * trial.point_rate))
                    a, i = mid - g // 2, trial.marker_labels.index(label)
                    gapped = cut(trial, label, a, a + g)
                    truth = trial.markers[a:a + g, i]
                    got = {"spline": fill_gaps(gapped.markers[:, i], 10 ** 6)[a:a + g]}
                    for method, kw in (("rigid", {"pca": False}), ("pca", {"rigid": False})):
                        out, rec = fill_marker_gaps(gapped, model, max_gap_frames=0, **kw)
                        if rec.filled:
                            got[method] = out.markers[a:a + g, i]
                    if "rigid" in got and "pca" in got:
                        got["pca, where rigid applies"] = got["pca"]
                    if static is not None and "rigid" in got:  # the same gaps, the static's shape
                        out, rec = fill_marker_gaps(gapped, model, max_gap_frames=0, pca=False, static=static)
                        if rec.filled and rec.filled[0].method == "rigid_static":
                            got["rigid_static"] = out.markers[a:a + g, i]
                            got["rigid, where rigid_static applies"] = got["rigid"]
                            got["pca, where rigid_static applies"] = got["pca"]
                    for method, x in got.items():
                        errs.setdefault((method, length), []).append(1000 * np.sqrt(np.mean(np.sum((x - truth) ** 2, 1))))
    print("| method | gap (s) | gaps | median (mm) | 90th percentile (mm) | max (mm) |")
    print("|---|---|---|---|---|---|")
    order = ("spline", "rigid", "pca, where rigid applies", "rigid_static", "rigid, where rigid_static applies",
             "pca, where rigid_static applies", "pca")
    for (method, length), e in sorted(errs.items(), key=lambda kv: (order.index(kv[0][0]), kv[0][1])):
        e = np.array(e)
        print(f"| {method} | {length:.1f} | {len(e)} | {np.median(e):.1f} | {np.percentile(e, 90):.1f} | {e.max():.1f} |")


def events(lengths) -> None:
    """Kinematic events (Zeni; strikes at the heel impact and at the heel maximum) of the filled trial
    against the uncut one:
    every strike of every clean trial with a gap centred on it in that side's heel marker, every foot
    off with a gap in the toe marker; each method forced (the spline over any length, PCA over any
    length; the foot has two markers in Plug-in Gait: no rigid fill). Printed per method and gap
    length: events, median and largest |shift| (frames), events moved more than 1 frame, lost."""
    from gaitid.core.signal import fill_gaps
    from gaitid.events import zeni_events
    from gaitid.model.gait_markers import gait_markers
    from gaitid.model.gap_fill import fill_marker_gaps
    from gaitid.model.markerset import load_model
    from gaitid.pipeline import load_trial

    model = load_model("plugin-gait")
    shifts = {}
    for name, refine in ((n, r) for n in TRIALS for r in (True, False)):
        trial = load_trial(REAL / name)
        markers = gait_markers(model, trial)
        ref = zeni_events(trial, markers, refine_strike=refine)
        for e in ref:
            if not refine and e.label != "Foot Strike":
                continue
            foot = markers.foot(e.context)
            label = foot.heel if e.label == "Foot Strike" else foot.toe
            kind = ("strike (heel impact)" if refine else "strike (heel maximum)") if e.label == "Foot Strike" \
                else "foot off (toe minimum)"
            if label not in trial.marker_labels:
                continue
            i, k = trial.marker_labels.index(label), trial.index_of_time(e.time)
            for length in lengths:
                g = int(round(length * trial.point_rate))
                a = k - g // 2
                if a < 1 or a + g >= trial.n_frames or not np.isfinite(trial.markers[a - 1:a + g + 1, i]).all():
                    continue
                gapped = cut(trial, label, a, a + g)
                filled = {"spline": replace(gapped, markers=gapped.markers.copy())}
                filled["spline"].markers[:, i] = fill_gaps(gapped.markers[:, i], 10 ** 6)
                out, rec = fill_marker_gaps(gapped, model, max_gap_frames=0)
                if rec.filled:
                    filled[rec.filled[0].method] = out
                for method, t in filled.items():
                    got = [x for x in zeni_events(t, markers, refine_strike=refine)
                           if x.label == e.label and x.context == e.context]
                    near = min((abs(x.frame - e.frame) for x in got), default=99)
                    shifts.setdefault((kind, method, length), []).append(near if near <= 15 else 99)
    print("| event (marker) | method | gap (s) | events | median shift (frames) | max (frames) | moved > 1 frame | lost |")
    print("|---|---|---|---|---|---|---|---|")
    for (what, method, length), s in sorted(shifts.items()):
        s = np.array(s)
        kept = s[s < 99]
        print(f"| {what} | {method} | {length:.2f} | {len(s)} | {np.median(kept) if kept.size else np.nan:.0f} | "
              f"{kept.max() if kept.size else np.nan:.0f} | {int((kept > 1).sum())} | {int((s == 99).sum())} |")


def main(argv=None):
    from gaitid import process
    from gaitid.pipeline import load_trial

    ap = argparse.ArgumentParser()
    ap.add_argument("--lengths", type=float, nargs="*", default=[0.1, 0.2, 0.3, 0.4, 0.5])
    ap.add_argument("--quick", action="store_true", help="two trials, three markers")
    ap.add_argument("--cost", action="store_true", help="only the cost: fill vs process(), ms")
    ap.add_argument("--methods", action="store_true", help="only the marker RMS of every method, forced")
    ap.add_argument("--events", action="store_true", help="only the kinematic events with gaps over them")
    args = ap.parse_args(argv)
    if args.events:
        return events(args.lengths)
    if args.cost:
        return cost()
    if args.methods:
        return methods(args.lengths)
    rows = []
    trials = dict(list(TRIALS.items())[:2]) if args.quick else TRIALS
    for name, opts in trials.items():
        trial = load_trial(REAL / name)
        ref = process(trial, **opts)
        for side in ("Left", "Right"):
            mid, stance = stance_middle(ref, side)
            if mid is None:
                continue
            for mk in (MARKERS[:3] if args.quick else MARKERS):
                label = marker_label(trial, side, mk)
                if label is None:
                    continue
                for length in args.lengths:
                    g = int(round(length * trial.point_rate))
                    a = mid - g // 2
                    b = a + g
                    gapped = cut(trial, label, a, b)
                    t0 = time.perf_counter()
                    res = process(gapped, **opts)
                    dt = time.perf_counter() - t0
                    fill = [f for f in res.fills.filled if f.label == label]
                    method = fill[0].method if fill else "none"
                    truth = trial.point(label)[a:b]
                    got = res.trial.point(label)[a:b]
                    err = np.sqrt(np.nanmean(np.sum((got - truth) ** 2, 1))) * 1000 if fill else np.nan
                    s0, s1 = stance
                    mom = sagittal(res, side, s0, s1) - sagittal(ref, side, s0, s1)
                    mrms = float(np.sqrt(np.nanmean(mom ** 2, axis=0)).max()) if np.isfinite(mom).any() else np.nan
                    lost = sum(c.kinetic for c in ref.cycles) - sum(c.kinetic for c in res.cycles)
                    ev0 = sorted((e.label, e.context, e.frame) for e in ref.events)
                    ev1 = sorted((e.label, e.context, e.frame) for e in res.events)
                    shift = max((abs(x[2] - y[2]) for x, y in zip(ev0, ev1)), default=0) if len(ev0) == len(ev1) else 99
                    rows.append((name.split("/")[-1], label, length, method, err, mrms, lost, shift, dt))
                    print(f"{name.split('/')[-1]:28s} {label:5s} {length:.1f}s {method:6s} marker {err:6.1f} mm  "
                          f"moment {mrms:.4f} N.m/kg  cycles lost {lost}  event shift {shift}  {dt*1000:.0f} ms",
                          flush=True)
    print("\nmethod  gap_s  n  marker_RMS_mm(median,max)  sagittal_moment_RMS_N.m/kg(median,max)  cycles_lost  max_event_shift")
    for method in ("rigid_static", "rigid", "pca", "none"):
        for length in args.lengths:
            sel = [r for r in rows if r[3] == method and r[2] == length]
            if sel:
                e = np.array([r[4] for r in sel]); m = np.array([r[5] for r in sel])
                print(f"{method:6s} {length:.1f} {len(sel):3d}  {np.nanmedian(e):6.1f} {np.nanmax(e):6.1f}   "
                      f"{np.nanmedian(m):.4f} {np.nanmax(m):.4f}   {sum(r[6] for r in sel)}  {max(r[7] for r in sel)}")


if __name__ == "__main__":
    main()
