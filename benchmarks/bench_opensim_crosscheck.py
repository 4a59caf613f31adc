"""OpenSim cross-check and plausibility figures (docs/opensim-crosscheck.md).

    python benchmarks/bench_opensim_crosscheck.py [--plot docs/images/opensim-crosscheck.png]

Prints, for OpenSim's subject01 example processed with models/isb-cast.toml: Pearson r, RMS
difference and the peaks of each sign of the sagittal ankle, knee and hip moments against
InverseDynamicsOutput.sto over each foot's stance; then the plausibility figures of
walking2.c3d and Qualisys.c3d with models/isb.toml (mass from the plates); and timings.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
REALDATA = ROOT.parent / "shared" / "realdata"

from gaitid.io.atomic import atomic_path  # noqa: E402
from gaitid.io.c3d import read_c3d  # noqa: E402
from gaitid.pipeline import process  # noqa: E402
from gaitid.validation.crosscheck import opensim_crosscheck, sagittal_moment  # noqa: E402

PLAUSIBILITY = {"opensim-core/walking2.c3d": {"plates": {1: "right", 2: "left"}}, "ezc3d-testfiles/Qualisys.c3d": {}}


def plausibility(rel: str, **settings) -> dict:
    """Mass (kg, from the plates), peak vertical GRF (BW) and peak plantarflexor moment (N.m/kg)
    per side over the plate contacts, processed with models/isb.toml."""
    trial = read_c3d(REALDATA / rel)
    res = process(trial, model="isb", subject="plates", **settings)  # mass from the same plate contacts
    est = res.subject.mass_estimate
    out = {"mass": est.mass, "method": est.method}
    for side in ("Left", "Right"):
        on = res.loads[side].state == "plate"
        if not on.any():
            continue
        grf = float(np.nanmax(res.loads[side].force_lab[on, 2]) / (est.mass * 9.81))
        shank = res.kinematics.motion[side][1]
        ankle = sagittal_moment(res.joint_loads[side].moment_lab[0], shank.R) / est.mass  # internal, lab
        out[side] = {"grf_bw": grf, "plantarflexor_nm_kg": float(-np.nanmin(ankle[on])), "stance_frames": int(on.sum())}
    return out


def plot(cc, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 2, figsize=(9, 8), sharex=True)
    names = {"ankle": "ankle_angle (+ dorsiflexor)", "knee": "knee_angle (+ extensor)", "hip": "hip_flexion (+ flexor)"}
    for c, side in enumerate(("right", "left")):
        for r, joint in enumerate(("ankle", "knee", "hip")):
            ax = axes[r, c]
            st = cc.stance[side]
            ax.fill_between(cc.time, 0, 1, where=st, color="0.9", transform=ax.get_xaxis_transform(), label="stance")
            ax.plot(cc.time, cc.reference[side][joint], color="C1", label="OpenSim ID (Gait2392)")
            ax.plot(cc.time, cc.ours[side][joint], color="C0", label="gaitid isb-cast")
            f = cc.figures[side][joint]
            ax.set_title(f"{side} {names[joint]}: r = {f.r:.3f}", fontsize=9)
            ax.axhline(0, color="k", lw=0.5)
            if c == 0:
                ax.set_ylabel("N.m")
    for ax in axes[-1]:
        ax.set_xlabel("time (s)")
    axes[0, 0].legend(fontsize=7, loc="lower left")
    fig.suptitle("OpenSim subject01_walk1: sagittal joint moments (OpenSim signs)", fontsize=10)
    fig.tight_layout()
    with atomic_path(path) as tmp:  # temporary file, then rename
        fig.savefig(tmp, dpi=110)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--plot", type=Path, help="write the overlay figure (PNG) here")
    args = ap.parse_args()
    t0 = time.perf_counter()
    cc = opensim_crosscheck(REALDATA / "opensim-models")
    dt = time.perf_counter() - t0
    print(f"OpenSim subject01_walk1, models/isb-cast.toml, 72.6 kg ({dt:.2f} s incl. reading)")
    for side in ("right", "left"):
        for joint, f in cc.figures[side].items():
            print(f"  {side:5s} {joint:5s} n={int(cc.stance[side].sum()):2d}  r={f.r:.3f}  RMS={f.rms:5.1f} N.m  "
                  f"neg peak {f.peak_neg[0]:7.1f} vs {f.peak_neg[1]:7.1f} ({100 * f.peak_neg_diff:+4.0f} %)  "
                  f"pos peak {f.peak_pos[0]:6.1f} vs {f.peak_pos[1]:6.1f} ({100 * f.peak_pos_diff:+4.0f} %)")
    for geometry in ("gait2392", "gait2392-ik", "gait2392-ik-bodies"):
        g = opensim_crosscheck(REALDATA / "opensim-models", geometry=geometry)
        print(f"geometry={geometry}")
        for side in ("right", "left"):
            for joint, f in g.figures[side].items():
                print(f"  {side:5s} {joint:5s} r={f.r:.4f}  RMS={f.rms:5.2f} N.m  neg peak {f.peak_neg[0]:7.1f} vs "
                      f"{f.peak_neg[1]:7.1f} ({100 * f.peak_neg_diff:+4.0f} %)  pos peak {f.peak_pos[0]:6.1f} vs "
                      f"{f.peak_pos[1]:6.1f} ({100 * f.peak_pos_diff:+4.0f} %)")
    for key, rms in cc.kinematics.cluster_residuals.items():
        print(f"  cluster {key}: fit RMS median {1000 * np.nanmedian(rms):.2f} mm, max {1000 * np.nanmax(rms):.2f} mm")
    for rel, settings in PLAUSIBILITY.items():
        t0 = time.perf_counter()
        p = plausibility(rel, **settings)
        dt = time.perf_counter() - t0
        print(f"{rel}: mass {p['mass']:.1f} kg ({p['method']}), {dt:.2f} s")
        for side in ("Left", "Right"):
            if side in p:
                q = p[side]
                print(f"  {side:5s} peak vertical GRF {q['grf_bw']:.2f} BW, peak plantarflexor moment "
                      f"{q['plantarflexor_nm_kg']:.2f} N.m/kg ({q['stance_frames']} stance frames)")
    from scipy.spatial.transform import Rotation

    from gaitid.model.clusters import rigid_fit

    n = 100_000
    ref = np.random.default_rng(0).random((4, 3)) * 0.1
    moved = np.einsum("nij,kj->nki", Rotation.random(n, random_state=1).as_matrix(), ref) + 1.0
    t0 = time.perf_counter()
    rigid_fit(ref, moved)
    dt = time.perf_counter() - t0
    print(f"cluster rigid fit (4 markers): {n} frames in {dt:.3f} s ({1e6 * dt / n:.1f} us/frame)")
    if args.plot:
        plot(cc, args.plot)
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
