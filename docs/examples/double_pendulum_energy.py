"""Seed 000's double pendulum: energy drift of explicit Euler vs scipy's solve_ivp.

Two uniform bars (1 kg, 1 m and 1 kg, 0.5 m), released with theta = (pi/10, pi/3) rad and
omega = (2 pi, -6 pi) rad/s, swing freely for 10 s. The seed integrates with explicit Euler
(dt = 1e-4 s); here that is compared with DOP853 (rtol = atol = 1e-10). With no torque the
total energy must stay constant: Euler's relative drift grows to about 1e-2, DOP853's stays
near 1e-9. (The seed's code also has a typo in G, m2 g l2 for m2 g l1: corrected here.)

Run: ``python docs/examples/double_pendulum_energy.py`` -> docs/examples/double_pendulum_energy.png
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from gaitid.dynamics.multibody import forward  # noqa: E402
from gaitid.io.atomic import atomic_path  # noqa: E402

OUT = Path(__file__).resolve().parent / "double_pendulum_energy.png"
BARS = dict(m1=1.0, m2=1.0, l1=1.0, l2=0.5)
THETA0 = np.array([np.pi / 10, np.pi / 3])
OMEGA0 = np.array([2 * np.pi, -6 * np.pi])


def relative_drift(theta, omega):
    E = forward.double_pendulum_energy(theta, omega, **BARS)
    E_rest = forward.double_pendulum_energy([0.0, 0.0], [0.0, 0.0], **BARS)[0]
    return np.abs(E - E[0]) / (E[0] - E_rest)


def main(out: Path = OUT, t_end: float = 10.0, dt_euler: float = 1e-4) -> Path:
    accel = forward.double_pendulum_accel(**BARS)
    t = np.arange(0.0, t_end + dt_euler / 2, dt_euler)
    th_e, om_e = forward.euler(accel, THETA0, OMEGA0, t)
    t_ivp = np.linspace(0.0, t_end, 2001)
    th_i, om_i = forward.integrate(accel, THETA0, OMEGA0, t_ivp, rtol=1e-10, atol=1e-10)
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    ax0.plot(t_ivp, np.degrees(th_i[:, 1]), label="DOP853")
    ax0.plot(t[::100], np.degrees(th_e[::100, 1]), "--", label=f"Euler, dt = {dt_euler:g} s")
    ax0.set_xlabel("time [s]")
    ax0.set_ylabel("theta_2 [deg]")
    ax0.set_title("bar 2 angle (chaotic: the two solutions part)")
    ax0.legend()
    ax1.semilogy(t[1::100], relative_drift(th_e, om_e)[1::100], label="Euler")
    ax1.semilogy(t_ivp[1:], relative_drift(th_i, om_i)[1:] + 1e-16, label="DOP853, rtol = 1e-10")
    ax1.set_xlabel("time [s]")
    ax1.set_ylabel("|E - E0| / (E0 - E_rest)")
    ax1.set_title("energy drift, no torque")
    ax1.legend()
    for ax in (ax0, ax1):
        ax.grid(True)
    with atomic_path(out) as tmp:  # temporary file, then rename
        fig.savefig(tmp, dpi=90)
    plt.close(fig)
    print(f"max relative energy drift over {t_end:g} s: Euler {relative_drift(th_e, om_e).max():.2e}, "
          f"DOP853 {relative_drift(th_i, om_i).max():.2e}")
    return out


if __name__ == "__main__":
    print(main())
