"""The solver on a realistic walking trial with exact ground truth (gaitid.validation.synthetic).

The synthetic trial's analytic leg motion (both legs, 3.5 strides) and ground reaction go
straight into the solver (no markers, no filtering); its truth comes from seed 003's
twist-wrench RNEA on a 15-joint screw chain per leg, a formulation independent of ours.
Gait magnitudes (vertical force ~1.1 BW, ankle moment ~100 N.m) to 1e-9 relative.
"""

from __future__ import annotations

import numpy as np
import pytest
from chain_segments import Seg, split

from gaitid.dynamics import ExternalLoad, inverse_dynamics

synthetic_trial = pytest.importorskip("gaitid.validation.synthetic.sample_trial")
synthetic_params = pytest.importorskip("gaitid.validation.synthetic.params")


@pytest.fixture(scope="module")
def trial():
    return synthetic_trial.make_gait_trial()


def leg_chain(trial, side):
    """Foot, shank, thigh of one leg as SegmentMotion, and the ground reaction on the foot."""
    sp = synthetic_params.segment_parameters(trial.params)
    segs = []
    for name in ("foot", "shank", "thigh"):
        f = trial.kinematics[f"{side}_{name}"]
        com, _, acc = f.point(sp[name]["com_seg"])
        segs.append(Seg(
            name=name, mass=sp[name]["mass"], inertia_seg=sp[name]["inertia_seg"], R=f.R, com_lab=com,
            com_acc_lab=acc, omega_seg=np.einsum("nji,nj->ni", f.R, f.omega),
            alpha_seg=np.einsum("nji,nj->ni", f.R, f.alpha), proximal_lab=f.o,
            distal_lab=segs[-1].proximal_lab if segs else np.full_like(f.o, np.nan)))
    grf = trial.grf[side]
    cop = np.where(np.isnan(grf.cop), 0.0, grf.cop)  # swing: zero force, the point does not matter
    return segs, [ExternalLoad(0, grf.force, cop, grf.free_moment)]


@pytest.mark.parametrize("side", ["R", "L"])
@pytest.mark.parametrize("method", ["recursive", "block"])
def test_walking_leg_matches_the_twist_wrench_truth(trial, side, method):
    segs, loads = leg_chain(trial, side)
    out = inverse_dynamics(*split(segs), loads, gravity_lab=synthetic_params.GRAVITY_LAB, frame="lab", method=method)
    truth = trial.truth[side]
    assert out.joints == ["ankle", "knee", "hip"]
    for j, joint in enumerate(out.joints):
        m_ref, f_ref = truth.moment_lab[joint], truth.force_lab[joint]
        assert np.max(np.abs(out.moment[j] - m_ref)) <= 1e-9 * np.max(np.abs(m_ref))
        assert np.max(np.abs(out.force_lab[j] - f_ref)) <= 1e-9 * np.max(np.abs(f_ref))
    # realistic magnitudes: this is walking, not a toy
    assert 60 < np.max(np.abs(out.moment[0])) < 250  # N.m: the ankle in push-off
    assert np.min(out.force_lab[0][:, 2]) < -500  # N: the shank pushes down on the foot in stance


def test_walking_contributions(trial):
    """In stance the ground reaction dominates the ankle; in swing it is zero and the hip's
    load is inertial plus gravity; the parts add up to the total."""
    segs, loads = leg_chain(trial, "R")
    out = inverse_dynamics(*split(segs), loads, gravity_lab=synthetic_params.GRAVITY_LAB, frame="lab")
    stance = trial.contact["R"] > 0
    ankle_ext = np.linalg.norm(out.moment_parts["external"][0], axis=1)
    ankle_tot = np.linalg.norm(out.moment[0], axis=1)
    peak = np.argmax(ankle_tot)
    assert stance[peak] and ankle_ext[peak] > 0.9 * ankle_tot[peak]
    assert np.all(out.moment_parts["external"][2][~stance] == 0.0)
    for j in range(3):
        total = sum(out.moment_parts[p][j] for p in out.moment_parts)
        assert np.max(np.abs(total - out.moment[j])) <= 1e-12 * np.max(np.abs(out.moment[j]))
