"""Trial -> solver inputs against the synthetic walker's exact kinematics (gaitid.validation.synthetic).

The synthetic trial places Plug-in Gait markers on analytically moving segments, so the
joint centres and thigh/shank frames must be reproduced to rounding, and the numerical
angular velocities, angular accelerations and centre-of-mass accelerations must converge
to the exact ones at second order in the sampling interval.
"""

from __future__ import annotations

import numpy as np
import pytest

from gaitid.core.trial import Subject, Trial
from gaitid.model.assembly import build_segments

synthetic = pytest.importorskip("gaitid.validation.synthetic")


def _trial(rate: float, duration_frames_100hz: int = 380):
    p = synthetic.GaitParams(point_rate=rate, n_frames=int(round(duration_frames_100hz * rate / 100)))
    syn = synthetic.make_gait_trial(p)
    labels = list(syn.markers)
    trial = Trial(
        path=None, point_rate=rate, first_frame=1, marker_labels=labels,
        markers=np.stack([syn.markers[m] for m in labels], axis=1),
        subject=Subject(mass=p.mass, leg_length_left=p.leg_length, leg_length_right=p.leg_length,
                        knee_width_left=p.knee_width, knee_width_right=p.knee_width,
                        ankle_width_left=p.ankle_width, ankle_width_right=p.ankle_width,
                        inter_asis_distance=p.inter_asis, marker_diameter=p.marker_diameter),
    )
    return syn, trial


@pytest.fixture(scope="module")
def at_100hz():
    syn, trial = _trial(100.0)
    return syn, build_segments(trial, marker_cutoff_hz=None, max_gap_frames=0)


def test_joint_centres_and_frames_are_exact(at_100hz):
    syn, mk = at_100hz
    for side, S in (("left", "L"), ("right", "R")):
        truth = syn.joint_centres(S)
        for jc in ("hip", "knee", "ankle"):
            np.testing.assert_allclose(mk.joint_centres[f"{side}.{jc}"], truth[jc], atol=1e-9)
        for seg in ("thigh", "shank"):
            np.testing.assert_allclose(mk.frames[f"{side}.{seg}"], syn.kinematics[f"{S}_{seg}"].R, atol=1e-9)
    np.testing.assert_allclose(mk.root.R, syn.kinematics["pelvis"].R, atol=1e-9)


def _errors(rate):
    syn, trial = _trial(rate)
    mk = build_segments(trial, marker_cutoff_hz=None, max_gap_frames=0)
    k = int(rate // 10)  # ignore 0.1 s at each end (one-sided differences)
    out = {"omega": 0.0, "alpha": 0.0, "com_acc": 0.0}
    for side, S in (("left", "L"), ("right", "R")):
        for name, seg in zip(mk.chains[side.capitalize()].names[1:], mk.motion[side.capitalize()][1:]):
            # shank, thigh: rigid frames of the synthetic segments
            exact = syn.kinematics[f"{S}_{name}"]
            omega_lab = np.einsum("nij,nj->ni", seg.R, seg.omega_seg)
            alpha_lab = np.einsum("nij,nj->ni", seg.R, seg.alpha_seg)
            com_acc = syn.kinematics[f"{S}_{name}"].point(synthetic.segment_parameters(syn.params)[name]["com_seg"])[2]
            out["omega"] = max(out["omega"], np.abs(omega_lab - exact.omega)[k:-k].max())
            out["alpha"] = max(out["alpha"], np.abs(alpha_lab - exact.alpha)[k:-k].max())
            out["com_acc"] = max(out["com_acc"], np.abs(seg.com_acc_lab - com_acc)[k:-k].max())
    return out


def test_derivatives_converge_to_the_exact_motion_at_second_order():
    e100, e200 = _errors(100.0), _errors(200.0)
    # the synthetic shank peaks near 8 rad/s with sharp swing harmonics: 0.018 rad/s at 100 Hz
    assert e100["omega"] < 0.05
    for key in e100:
        ratio = e100[key] / e200[key]
        assert 3.0 < ratio < 5.0, f"{key}: error ratio {ratio:.2f} for h -> h/2 (expected ~4)"


def test_named_plug_in_gait_frame_functions_agree_with_the_model(at_100hz):
    from gaitid.model import frames as fr

    syn, mk = at_100hz
    for side, S in (("left", "L"), ("right", "R")):
        hip, knee = mk.joint_centres[f"{side}.hip"], mk.joint_centres[f"{side}.knee"]
        R = fr.limb_frame(hip, knee, syn.markers[S + "KNE"], side)
        np.testing.assert_allclose(R, syn.kinematics[f"{S}_thigh"].R, atol=1e-9)
        R_unc = fr.foot_frame_uncorrected(mk.joint_centres[f"{side}.ankle"], syn.markers[S + "TOE"], mk.frames[f"{side}.shank"])
        np.testing.assert_allclose(mk.frames[f"{side}.foot"], R_unc, atol=1e-12)  # no foot offsets given
