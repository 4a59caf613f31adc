"""The multibody examples run and save their plots; the arm example's end posture is static."""

from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np

EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"


def test_arm_example_runs_and_ends_in_static_balance(tmp_path):
    mod = runpy.run_path(str(EXAMPLES / "arm_minimum_jerk.py"))
    out = mod["main"](tmp_path / "arm.png")
    assert out.stat().st_size > 10_000
    # slow movement, last frame: upper arm horizontal, forearm vertical, at rest:
    # shoulder torque = g (m1 d1 + m2 L1), elbow torque = 0 (seed 001's G with q = (0, 90 deg))
    t, dyn = mod["arm_torques"](4.0)
    from gaitid.dynamics.multibody.anthropometry import arm_chain

    chain = arm_chain(1.70, 70.0)
    expected = 9.81 * (chain.mass[0] * chain.com[0] + chain.mass[1] * chain.length[0])
    np.testing.assert_allclose(dyn.tau[-1], [expected, 0.0], atol=0.02)


def test_double_pendulum_example_runs(tmp_path):
    mod = runpy.run_path(str(EXAMPLES / "double_pendulum_energy.py"))
    out = mod["main"](tmp_path / "dp.png", t_end=0.2, dt_euler=1e-3)
    assert out.stat().st_size > 10_000


def test_three_link_example_rnea_equals_corrected_closed_form(tmp_path):
    mod = runpy.run_path(str(EXAMPLES / "three_link_rnea.py"))
    t, printed, corrected, rnea = mod["torques"]()
    np.testing.assert_allclose(rnea, corrected, atol=1e-10)
    assert np.abs(printed[:, 1] - corrected[:, 1]).max() > 0.01  # the typo shows at the elbow
    assert mod["main"](tmp_path / "three.png").stat().st_size > 10_000
