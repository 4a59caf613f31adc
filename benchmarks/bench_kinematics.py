"""Segment kinematics on the real files: accuracy against Plug-in Gait and speed.

Run: python benchmarks/bench_kinematics.py [--repeat N]

For every real Plug-in Gait file in ../shared/realdata it prints
1. accuracy: RMS differences between gaitid's Plug-in Gait model (markers unfiltered, as
   Vicon's stored outputs are) and the file's own joint centres (mm), segment frames (deg)
   and joint angles (deg, sagittal / frontal / transverse);
2. derivative accuracy: angular velocity / acceleration from R against a closed-form rotation
   (peak |omega| about 6.5 rad/s) at 50-400 Hz, and the observed order of convergence;
3. speed: time to read the C3D, to go from Trial to solver inputs (``build_segments``,
   default 6 Hz filtering) and to solve both legs (``inverse_dynamics``), and the share of
   that end-to-end time taken by the kinematics.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gaitid import GaitIDError, read_c3d  # noqa: E402
from gaitid.dynamics.solve import inverse_dynamics  # noqa: E402
from gaitid.dynamics.types import ExternalLoad  # noqa: E402
from gaitid.model.assembly import build_segments  # noqa: E402
from gaitid.model.frames import frame_from_axis_points  # noqa: E402

REAL = Path(__file__).resolve().parent.parent.parent / "shared" / "realdata"
CASES = [  # file, static trial, subject overrides
    ("btkdata/PiG_Motion3_FF.c3d", "btkdata/PiG_Calibration3_FF.c3d", None),
    ("btkdata/PiG_Motion-FlatFoot-Full.c3d", "btkdata/PiG_Calibration-FlatFoot-Full.c3d", {"marker_radius": 0.008}),
    ("biomechzoo/HC030A05.c3d", None, None),
    ("python-gaitalytics/test_small.c3d", None, None),
    ("btkdata/FunctionalWalk.c3d", None, None),
    ("c3d-parser/MH0222_BP06.c3d", None, None),
]


def rms(x) -> float:
    return float(np.sqrt(np.nanmean(np.asarray(x, float) ** 2)))


def frame_angle(Ra, Rb):
    c = (np.trace(np.swapaxes(Ra, -1, -2) @ Rb, axis1=1, axis2=2) - 1) / 2
    return np.degrees(np.arccos(np.clip(c, -1, 1)))


def accuracy(trial, mk) -> list[str]:
    rows = []
    for side, S in (("left", "L"), ("right", "R")):
        jc = [rms(1000 * np.linalg.norm(mk.joint_centres[f"{side}.{j}"] - trial.point(S + p), axis=1))
              for j, p in (("hip", "FEP"), ("knee", "FEO"), ("ankle", "TIO"))]
        fr = [rms(frame_angle(mk.frames[f"{side}.{s}"], frame_from_axis_points(*(trial.point(S + c + x) for x in "OALP"))))
              for s, c in (("thigh", "FE"), ("shank", "TI"), ("foot", "FO"))]
        ang = []
        for j in ("Hip", "Knee", "Ankle"):
            out = trial.model_outputs.get(f"{S}{j}Angles") or trial.model_outputs.get(f"{S}{j}AnglesV")
            d = mk.angles_deg[f"{S}{j}Angles"] - out.values
            ang.append("/".join(f"{v:.2f}" for v in np.sqrt(np.nanmean(d**2, axis=0))))
        rows.append(f"  {S}  centres hip/knee/ankle mm {jc[0]:.2f} {jc[1]:.2f} {jc[2]:.2f} | frames thigh/shank/foot deg "
                    f"{fr[0]:.2f} {fr[1]:.2f} {fr[2]:.2f} | angles hip {ang[0]} knee {ang[1]} ankle {ang[2]}")
    return rows


def derivative_convergence() -> None:
    """R(t) = R1(t) R2(t) about a fixed lab axis a then a body axis b (the test's closed form)."""
    from scipy.spatial.transform import Rotation

    from gaitid.core import rotation
    a = np.array([0.2, 1.0, 0.1]) / np.linalg.norm([0.2, 1.0, 0.1])
    b = np.array([0.0, 0.3, 1.0]) / np.linalg.norm([0.0, 0.3, 1.0])
    w1, w2 = 2 * np.pi, 4 * np.pi
    print(f"{'rate Hz':>8s} {'max |omega err| rad/s':>22s} {'max |alpha err| rad/s^2':>24s}")
    prev = None
    for rate in (50.0, 100.0, 200.0, 400.0):
        t = np.arange(0, 2, 1 / rate)
        q1, dq1, ddq1 = 0.9 * np.sin(w1 * t), 0.9 * w1 * np.cos(w1 * t), -0.9 * w1**2 * np.sin(w1 * t)
        q2, dq2, ddq2 = (0.15 * np.sin(w2 * t + 0.5), 0.15 * w2 * np.cos(w2 * t + 0.5),
                         -0.15 * w2**2 * np.sin(w2 * t + 0.5))
        R1 = Rotation.from_rotvec(q1[:, None] * a).as_matrix()
        R = R1 @ Rotation.from_rotvec(q2[:, None] * b).as_matrix()
        R1b = R1 @ b
        w_lab = dq1[:, None] * a + dq2[:, None] * R1b
        al_lab = ddq1[:, None] * a + ddq2[:, None] * R1b + (dq1 * dq2)[:, None] * np.cross(a, R1b)
        w_seg, _ = rotation.angular_velocity(R, rate)
        al_seg, _ = rotation.angular_acceleration(R, w_seg, rate)
        k = int(rate // 10)
        ew = np.abs(np.einsum("nij,nj->ni", R, w_seg) - w_lab)[k:-k].max()
        ea = np.abs(np.einsum("nij,nj->ni", R, al_seg) - al_lab)[k:-k].max()
        order = "" if prev is None else f"   order {np.log2(prev[0] / ew):.2f} / {np.log2(prev[1] / ea):.2f}"
        print(f"{rate:8.0f} {ew:22.2e} {ea:24.2e}{order}")
        prev = (ew, ea)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    if not REAL.is_dir():
        print(f"real data not found at {REAL}")
        return
    print("== accuracy vs Plug-in Gait (unfiltered markers; RMS over frames) ==")
    for rel, static_rel, ov in CASES:
        try:
            trial = read_c3d(REAL / rel)
            static = read_c3d(REAL / static_rel) if static_rel else None
        except (GaitIDError, FileNotFoundError) as exc:
            print(f"{rel}: skipped ({exc})")
            continue
        for model, kw in (("plugin-gait", {"static": static, "subject": ov}), ("plugin-gait-segments", {})):
            mk = build_segments(trial, model, marker_cutoff_hz=None, **kw)
            print(f"{rel} [{model}]" + (f" static={Path(static_rel).name}" if kw.get("static") else ""))
            print("\n".join(accuracy(trial, mk)))
    print()
    print("== angular velocity / acceleration from R vs closed form (central differences) ==")
    derivative_convergence()
    print()
    print("== speed (median of %d runs; kinematics = Trial -> solver inputs, 6 Hz filter) ==" % args.repeat)
    print(f"{'file':40s} {'frames':>6s} {'read ms':>8s} {'kinem ms':>9s} {'solve ms':>9s} {'kinem share':>11s} {'us/frame':>9s}")
    for rel, _, ov in CASES:
        path = REAL / rel
        t_read, t_kin, t_solve = [], [], []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            trial = read_c3d(path)
            t1 = time.perf_counter()
            mk = build_segments(trial, subject=ov)
            t2 = time.perf_counter()
            for side in ("left", "right"):
                foot = mk[side][0]
                zero = np.zeros_like(foot.com_lab)
                inverse_dynamics(mk[side], [ExternalLoad(0, zero, foot.com_lab, zero)], proximal_R=mk.root.R)
            t3 = time.perf_counter()
            t_read.append(t1 - t0)
            t_kin.append(t2 - t1)
            t_solve.append(t3 - t2)
        r, k, s = (1000 * float(np.median(v)) for v in (t_read, t_kin, t_solve))
        print(f"{rel:40s} {trial.n_frames:6d} {r:8.1f} {k:9.1f} {s:9.1f} {100 * k / (r + k + s):10.0f}% "
              f"{1e3 * k / trial.n_frames:9.1f}")


if __name__ == "__main__":
    main()
