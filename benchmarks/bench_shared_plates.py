"""Each foot's share of a plate both feet load, against the truth (docs/contacts.md "Both feet on one plate").

1. Real overground walks (../shared/realdata) whose two plates, each under its own foot in double
   support, are merged into one (tests/plate_merge.py): the decomposed loads on the merged trial
   against the measured loads of the original, per foot on every frame the merged plate is
   shared; force RMS in % body weight, COP RMS where the foot carries >= 100 N, and the sagittal
   (X) and frontal (Y) ankle, knee and hip moments (N.m/kg) from the original's kinematics with
   the decomposed loads in place of the measured ones.
2. The synthetic treadmills (exact truth): split belt with 3 crossing steps in 10 strides, split
   belt with the right foot across the line on every step, with both feet across it on every
   step, single belt; force RMS against the
   truth, kinetic cycles with and without the decomposition, and how often the truth lies in the
   first-order 95 % band of the ground reaction on the decomposed frames, with and without the
   decomposition's error source (docs/uncertainty.md).
3. Cost: the decomposition's time against process() on the synthetic treadmill.

    PYTHONPATH=. python benchmarks/bench_shared_plates.py [--treadmills]   (--treadmills: 2 and 3 only)
"""

from __future__ import annotations

import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.compare_results import REAL, REAL_OPTIONS  # noqa: E402
from gaitid import process  # noqa: E402
from gaitid.contacts import plate_ownership  # noqa: E402
from gaitid.contacts.decompose import with_split  # noqa: E402
from gaitid.contacts.foot_loads import FootLoad, foot_loads  # noqa: E402
from gaitid.contacts.ownership import BOTH  # noqa: E402
from gaitid.cycles.outputs import output_curves  # noqa: E402
from gaitid.model.markerset import load_model  # noqa: E402
from gaitid.pipeline import joint_loads, load_trial  # noqa: E402
from tests.plate_merge import MERGES, merge_plates  # noqa: E402

JOINTS = ("AnkleMoment", "KneeMoment", "HipMoment")


def merged_errors(name: str) -> dict | None:
    a, b = MERGES[name]
    trial = load_trial(REAL / name)
    opts = dict(REAL_OPTIONS.get(name, {}))
    try:
        r0 = process(trial, **opts)
    except Exception as exc:  # a trial the pipeline refuses (markers the model lacks)
        return {"name": name, "error": str(exc).split(": ", 1)[-1][:60]}
    merged = merge_plates(trial, a, b)
    own = with_split(merged, r0.markers, plate_ownership(merged, r0.markers))
    col = own.plates.index(a)
    loads = foot_loads(merged, [], r0.event_choice.events, own)
    bw = r0.subject.subject.mass * 9.81
    row = {"name": name, "mass": r0.subject.subject.mass}
    mixed, frames = {}, {}
    errs = {"F": [], "cop": []}
    n_shared = n_dec = 0
    for side in ("Left", "Right"):
        shared = (own.owner[:, col] == BOTH) & (own.sharing[side][:, col] | own.touches[side][:, col])
        dec = shared & (loads[side].source == "decomposed")
        truth = r0.loads[side]
        known = dec & (truth.state == "plate") & np.isfinite(truth.force_lab).all(1)
        n_shared += int(shared.sum())
        n_dec += int(dec.sum())
        est = loads[side]
        errs["F"].append((est.force_lab[known] - truth.force_lab[known]) / bw)
        heavy = known & (truth.force_lab[:, 2] >= 100)
        errs["cop"].append(est.cop_lab[heavy, :2] - truth.cop_lab[heavy, :2])
        F, P, T = truth.force_lab.copy(), truth.cop_lab.copy(), truth.free_moment_lab.copy()
        F[known], P[known], T[known] = est.force_lab[known], est.cop_lab[known], est.free_moment_lab[known]
        mixed[side] = FootLoad(side, F, P, T, truth.state)
        frames[side] = known
    E = np.concatenate(errs["F"])
    C = np.concatenate(errs["cop"])
    row.update(shared=n_shared, decomposed=n_dec, n=len(E))
    row.update({f"F{ax}_rms_bw": float(np.sqrt(np.mean(E[:, k] ** 2))) if len(E) else np.nan
                for k, ax in enumerate("xyz")})
    row["cop_rms_m"] = float(np.sqrt(np.mean(np.sum(C ** 2, axis=1)))) if len(C) else np.nan
    model = load_model(r0.settings.model)
    joints = joint_loads(r0.kinematics, mixed, r0.settings)
    out = output_curves(r0.kinematics, joints, mixed, model, r0.settings, r0.subject.subject)
    # over the decomposed frames, and over the whole stances holding them (runs of measured load)
    stances = {}
    for s in ("Left", "Right"):
        plate = r0.loads[s].state == "plate"
        edges = np.flatnonzero(np.diff(np.r_[0, plate.astype(int), 0]))
        st = np.zeros_like(plate)
        for i, j in zip(edges[::2], edges[1::2]):
            if frames[s][i:j].any():
                st[i:j] = True
        stances[s] = st
    for j in JOINTS:
        for k, plane in ((0, "sag"), (1, "front")):
            for key, sel in (("", frames), ("_stance", stances)):
                d = np.concatenate([out.curves[s][j][sel[s], k] - r0.outputs.curves[s][j][sel[s], k]
                                    for s in ("Left", "Right")])
                d = d[np.isfinite(d)]
                row[f"{j}_{plane}{key}"] = float(np.sqrt(np.mean(d ** 2))) if d.size else np.nan
    # kinetic cycles through process() on the merged trial, against the original's
    r1 = process(merged, **{**opts, **({"subject": r0.subject.subject.mass} if opts.get("subject") == "plates" else {})})
    row["kinetic"] = (sum(c.kinetic for c in r1.cycles), sum(c.kinetic for c in r0.cycles))
    return row


TREADMILLS = {  # name: write_treadmill keywords (12 s: 11 cycles per side)
    "split belt, 3 crossing steps in 10 strides": {},
    "split belt, right foot across the line every step": {"crossings": (("R", 0),), "crossing_period": 1},
    "split belt, both feet across the line every step": {"crossings": (("R", 0), ("L", 0)), "crossing_period": 1},
    "single belt": {"layout": "single"},
}


def band_coverage(r, truth, dec: dict) -> float:
    """% of the decomposed frames' ground-reaction components (both feet) whose truth lies within
    the first-order 95 % band (nominal +- 1.96 SD)."""
    m = r.subject.subject.mass
    f = r.frames
    hits = []
    for side in ("Left", "Right"):
        sel = f[(f.side == side) & (f.variable == "GroundReactionForce")]
        for k, comp in enumerate("XYZ"):
            s = sel[sel.component == comp].set_index("frame")
            idx = np.searchsorted(np.asarray(r.trial.frames), s.index.to_numpy())
            t = truth[f"{side[0]}_grf_lab_{'xyz'[k]}_N"].to_numpy()[idx] / m
            v, sd = s["value"].to_numpy(), s["uncertainty_sd"].to_numpy()
            ok = dec[side][idx] & np.isfinite(v)
            hits.append(np.abs(v[ok] - t[ok]) <= 1.96 * sd[ok])
    return 100.0 * float(np.mean(np.concatenate(hits)))


def treadmill_rows(folder: Path) -> list[str]:
    import pandas as pd

    from gaitid.uncertainty import SOURCES, UncertaintySettings
    from gaitid.validation.synthetic.treadmill_trial import write_treadmill

    lines = []
    for k, (name, kwargs) in enumerate(TREADMILLS.items()):
        path = folder / f"treadmill{k}.c3d"
        write_treadmill(path, duration_s=12.0, **kwargs)
        truth = pd.read_csv(folder / f"treadmill{k}_truth.csv", dtype={"R_plates": str, "L_plates": str},
                            keep_default_na=False, na_values=[""])
        r = process(str(path), uncertainty=UncertaintySettings(samples=0))
        r_off = process(str(path), decompose_shared_plates=False)
        without = process(str(path), uncertainty=UncertaintySettings(
            samples=0, sources=tuple(s for s in SOURCES if s != "decomposition")))
        bw = r.subject.subject.mass * 9.81
        dec = {side: r.loads[side].source == "decomposed" for side in ("Left", "Right")}
        cover = f"{band_coverage(r, truth, dec):.0f} / {band_coverage(without, truth, dec):.0f}"
        for side in ("Left", "Right"):
            T = truth[[f"{side[0]}_grf_lab_{a}_N" for a in "xyz"]].to_numpy()[dec[side]]
            e = (r.loads[side].force_lab[dec[side]] - T) / bw
            rms = np.sqrt(np.mean(e ** 2, axis=0)) * 100
            kin = sum(c.kinetic for c in r.cycles if c.side == side)
            kin_off = sum(c.kinetic for c in r_off.cycles if c.side == side)
            n_c = sum(c.side == side for c in r.cycles)
            lines.append(f"| {name}, {side} | {int(dec[side].sum())} | {rms[0]:.1f} | {rms[1]:.1f} | {rms[2]:.1f} | "
                         f"{kin}/{n_c} (off: {kin_off}/{n_c}) | {cover} |")
    # cost: the decomposition alone against process(), on the first treadmill (6 s)
    path = folder / "treadmill_6s.c3d"
    write_treadmill(path, duration_s=6.0)
    r = process(str(path))
    trial = load_trial(str(path))
    own = plate_ownership(trial, r.markers)
    t0 = time.perf_counter()
    for _ in range(5):
        with_split(trial, r.markers, own)
    dt = (time.perf_counter() - t0) / 5
    t0 = time.perf_counter()
    process(str(path))
    total = time.perf_counter() - t0
    lines.append(f"\ncost on the 6 s synthetic treadmill ({trial.n_frames} frames): decomposition {dt * 1e3:.1f} ms, "
                 f"process() {total * 1e3:.0f} ms ({100 * dt / total:.1f} %)")
    return lines


def main() -> None:
    warnings.simplefilter("ignore")
    if "--treadmills" not in sys.argv[1:]:
        real_rows()
    print("\n| synthetic (12 s, exact truth) | decomposed frames | Fx | Fy | Fz (% BW RMS) | kinetic cycles | "
          "GRF truth in the 95 % band on decomposed frames, % (with / without the decomposition source) |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for line in treadmill_rows(Path(tmp)):
            print(line)


def real_rows() -> None:
    print("| merged trial | shared foot-frames | decomposed | Fx | Fy | Fz (% BW RMS) | COP (mm RMS) | "
          "ankle | knee | hip sagittal (N.m/kg RMS: decomposed frames / whole stances) | ankle | knee | hip frontal "
          "| kinetic cycles merged / original |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in MERGES:
        if not (REAL / name).exists():
            print(f"| {name} | real data absent |")
            continue
        row = merged_errors(name)
        if "error" in row:
            print(f"| {name} | not processed: {row['error']} |")
            continue
        print(f"| {name} | {row['shared']} | {row['decomposed']} | {100 * row['Fx_rms_bw']:.1f} | "
              f"{100 * row['Fy_rms_bw']:.1f} | {100 * row['Fz_rms_bw']:.1f} | {1000 * row['cop_rms_m']:.0f} | "
              + " | ".join(f"{row[f'{j}_sag']:.3f} / {row[f'{j}_sag_stance']:.3f}" for j in JOINTS) + " | "
              + " | ".join(f"{row[f'{j}_front']:.3f} / {row[f'{j}_front_stance']:.3f}" for j in JOINTS)
              + f" | {row['kinetic'][0]} / {row['kinetic'][1]} |")


if __name__ == "__main__":
    main()
