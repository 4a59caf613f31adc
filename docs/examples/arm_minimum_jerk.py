"""Seed 001: torques of slow and fast arm movements, split into their contributions.

A two-link arm (upper arm, forearm + hand; seed 001's Dempster/Winter parameters for a
1.70 m, 70 kg subject) moves its finger tip on a minimum-jerk path from the arm hanging at
the side to the upper arm forward and horizontal with the elbow flexed 90 degrees, in 4 s
(slow), 0.5 s (fast), and 0.5 s in a horizontal plane (no gravity). Joint angles come from
inverse kinematics, their derivatives from central differences (as in seed 001), and
tau = M q'' + C + G + E from :mod:`gaitid.dynamics.multibody.planar`.

Run: ``python docs/examples/arm_minimum_jerk.py`` -> docs/examples/arm_minimum_jerk.png
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from gaitid.dynamics.multibody import planar  # noqa: E402
from gaitid.dynamics.multibody.anthropometry import arm_chain  # noqa: E402
from gaitid.dynamics.multibody.trajectories import minimum_jerk  # noqa: E402
from gaitid.io.atomic import atomic_path  # noqa: E402

OUT = Path(__file__).resolve().parent / "arm_minimum_jerk.png"


def arm_torques(duration: float, g: float = planar.G_STANDARD, height: float = 1.70, mass: float = 70.0):
    """Time (s) and the PlanarDynamics of seed 001's reaching movement."""
    chain = arm_chain(height, mass)
    L1, L2 = chain.length
    path = minimum_jerk([0.0, -L1 - L2], [L1, L2], duration, rate=100.0)
    q = planar.inverse_kinematics_2link(path.position, L1, L2)
    dt = path.time[1] - path.time[0]
    qd = np.gradient(q, dt, axis=0)
    qdd = np.gradient(qd, dt, axis=0)
    return path.time, planar.inverse_dynamics(chain, q, qd, qdd, tip_force=(0.0, 0.0), g=g)


def main(out: Path = OUT) -> Path:
    cases = [("slow (4 s)", 4.0, planar.G_STANDARD), ("fast (0.5 s)", 0.5, planar.G_STANDARD),
             ("fast, horizontal plane", 0.5, 0.0)]
    fig, axes = plt.subplots(len(cases), 2, figsize=(10, 9), sharex="row", constrained_layout=True)
    for row, (title, duration, g) in enumerate(cases):
        t, dyn = arm_torques(duration, g)
        for j, joint in enumerate(("shoulder", "elbow")):
            ax = axes[row, j]
            ax.plot(t, dyn.inertial[:, j], label="inertial  M q''")
            ax.plot(t, dyn.C[:, j], label="Coriolis/centripetal  C")
            ax.plot(t, dyn.G[:, j], label="gravity  G")
            ax.plot(t, dyn.E[:, j], label="external  E")
            ax.plot(t, dyn.tau[:, j], "k:", label="total  tau")
            ax.set_title(f"{joint}, {title}")
            ax.set_xlabel("time [s]")
            ax.set_ylabel("torque [N.m]")
            ax.grid(True)
    axes[0, 1].legend(fontsize=8, loc="best")
    with atomic_path(out) as tmp:  # temporary file, then rename
        fig.savefig(tmp, dpi=90)
    plt.close(fig)
    return out


if __name__ == "__main__":
    print(main())
