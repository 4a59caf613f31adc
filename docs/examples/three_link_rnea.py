"""Seed 002's three-link arm three ways: printed closed form, corrected closed form, RNEA.

A shoulder-elbow-wrist chain (Winter's table 4.1 ratios for a 1.70 m, 70 kg subject) makes a
0.8 s minimum-jerk movement in joint space while a 10 N spring pulls the hand backwards
(seed 002's F_S, 3 cm beyond the hand's centre of mass). Joint torques from
- seed 002's eqs 24-44 as printed (M_22 without its factor 2),
- the same equations corrected (gaitid.dynamics.multibody.planar.three_link_closed_form),
- the twist-wrench recursive Newton-Euler of seed 003 (gaitid.dynamics.multibody.screw.rnea).
The corrected closed form and RNEA agree to rounding; the printed M_22 typo shows at the elbow.

Run: ``python docs/examples/three_link_rnea.py`` -> docs/examples/three_link_rnea.png
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from gaitid.dynamics.multibody import planar, screw  # noqa: E402
from gaitid.dynamics.multibody.trajectories import minimum_jerk  # noqa: E402
from gaitid.io.atomic import atomic_path  # noqa: E402

OUT = Path(__file__).resolve().parent / "three_link_rnea.png"
# Winter (2009) table 4.1: length / H, mass / M, COM / L from proximal, radius of gyration / L
WINTER = {"upper arm": (0.186, 0.028, 0.436, 0.322), "forearm": (0.146, 0.016, 0.430, 0.303),
          "hand": (0.108, 0.006, 0.506, 0.297)}


def arm(height: float = 1.70, mass: float = 70.0) -> planar.PlanarChain:
    L = np.array([v[0] for v in WINTER.values()]) * height
    m = np.array([v[1] for v in WINTER.values()]) * mass
    d = np.array([v[2] for v in WINTER.values()]) * L
    I = m * (np.array([v[3] for v in WINTER.values()]) * L) ** 2
    return planar.PlanarChain(m, L, d, I)


def torques(spring_force: float = 10.0, spring_distance: float = 0.03):
    chain = arm()
    path = minimum_jerk(np.radians([-80.0, 10.0, 0.0]), np.radians([30.0, 60.0, -20.0]), 0.8, rate=200.0)
    q, qd, qdd = path.position, path.velocity, path.acceleration
    corrected = planar.three_link_closed_form(chain, q, qd, qdd, spring_force, spring_distance)
    # the printed eq 31 has l2 d3 cos(a3) once instead of twice
    m3, l2, d3 = chain.mass[2], chain.length[1], chain.com[2]
    printed = corrected.tau - m3 * l2 * d3 * np.cos(q[:, 2])[:, None] * qdd[:, 1:2] * np.array([0.0, 1.0, 0.0])
    theta_hand = q.sum(axis=1)  # the spring (-F_S along X) in the tip frame, at d3 + d_S
    # the hand's "length" is where the spring acts, so the tip frame sits there
    sc_tip = screw.planar_screw_chain(chain.mass, np.r_[chain.length[:2], chain.com[2] + spring_distance], chain.com, chain.inertia)
    F_tip = np.zeros((q.shape[0], 6))
    F_tip[:, 3] = spring_force * np.cos(theta_hand)  # what the hand exerts on the spring: +F_S along X
    F_tip[:, 4] = -spring_force * np.sin(theta_hand)
    rnea = screw.rnea(sc_tip, q, qd, qdd, g=[0.0, -9.81, 0.0], F_tip=F_tip).tau
    return path.time, printed, corrected.tau, rnea


def main(out: Path = OUT) -> Path:
    t, printed, corrected, rnea = torques()
    fig, axes = plt.subplots(2, 3, figsize=(12, 6), sharex=True, constrained_layout=True)
    for j, joint in enumerate(("shoulder", "elbow", "wrist")):
        ax = axes[0, j]
        ax.plot(t, corrected[:, j], label="closed form, corrected")
        ax.plot(t, rnea[:, j], "--", label="RNEA (seed 003)")
        ax.plot(t, printed[:, j], ":", label="closed form as printed")
        ax.set_title(joint)
        ax.set_ylabel("torque [N.m]")
        ax.grid(True)
        ax = axes[1, j]
        ax.semilogy(t, np.abs(rnea[:, j] - corrected[:, j]) + 1e-18, label="|RNEA - corrected|")
        ax.semilogy(t, np.abs(printed[:, j] - corrected[:, j]) + 1e-18, label="|printed - corrected|")
        ax.set_ylim(1e-17, 10)
        ax.set_xlabel("time [s]")
        ax.set_ylabel("difference [N.m]")
        ax.grid(True)
    axes[0, 0].legend(fontsize=8)
    axes[1, 0].legend(fontsize=8)
    with atomic_path(out) as tmp:  # temporary file, then rename
        fig.savefig(tmp, dpi=90)
    plt.close(fig)
    print(f"max |RNEA - corrected closed form| = {np.abs(rnea - corrected).max():.1e} N.m; "
          f"max |printed - corrected| = {np.abs(printed - corrected).max():.2f} N.m")
    return out


if __name__ == "__main__":
    print(main())
