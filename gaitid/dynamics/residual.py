"""The whole body's residual force and moment: Newton's and Euler's laws for the whole body against
the measured external load, the dynamic consistency of a trial (docs/checks.md).

For the whole body, m a_com = F_ext + m g. What kinematics and plates leave unexplained is the
residual force R = m a_com - F_ext - m g (N, lab): the force OpenSim's residual reduction puts on
the pelvis (its residual actuators), and the figure AddBiomechanics reports, zero for a body whose
mass, motion and ground reaction agree. :func:`residual_force` computes it per frame, as arrays,
and its summary over the frames where the external force is wholly measured.

Both sides are compared in the same band: the centre of mass comes from low-pass filtered markers,
so the force is filtered at the same cutoff (zero-lag Butterworth, :func:`gaitid.core.signal.
butter_lowpass`, over each finite run), then differentiated and subtracted frame by frame. A frame
is judged when it is usable (the caller's mask: every loaded foot measured), its acceleration and
force are finite, and so are the ``margin_frames`` on either side of it: the filter and the second
difference smear a frame's neighbours into it, so the ends of the trial and the edges of every
usable run are left out.

The residual moment (:func:`residual_moment`) is Euler's law about the body's centre of mass G:
M = dH_G/dt - sum over the feet of ((p - G) x F + T), gravity having no moment about G. The rate
of change of the angular momentum of rigid parts i (mass m_i, centre of mass r_i, acceleration
a_i, inertia I_i about r_i in the part's frame, angular velocity and acceleration w_i, al_i in that
frame, R_i part -> lab) is :func:`angular_momentum_rate`: sum R_i (I_i al_i + w_i x I_i w_i) +
m_i (r_i - G) x a_i. About G, not the lab origin: about another point P the moment gains
(G - P) x the residual force, which a lab origin metres away from the walkway turns into a large
moment that says nothing about the moments. The external moment about the lab origin and the
force are filtered together at the markers' cutoff, as the force is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gaitid.core.rotation import cross
from gaitid.core.signal import butter_lowpass, finite_rows, second_derivative
from gaitid.core.vocabulary import GRAVITY_M_S2
from gaitid.dynamics.types import Body, SegmentMotion

MARGIN_S = 0.1  # s left out at the trial's ends and at each edge of a usable run


@dataclass(frozen=True)
class Residual:
    """The residual force of one trial.

    force_lab: (n, 3) N, lab, m a_com - F_ext - m g on the judged frames, NaN elsewhere.
    judged: (n,) bool, the frames the summary covers. weight_n: m g (N). The summary, as fractions
    of body weight over the judged frames (NaN when none): ``rms`` of the residual's magnitude,
    ``peak`` its largest magnitude (at frame index ``peak_index``, -1 when none), ``vertical_rms``
    and ``horizontal_rms`` of its Z and XY parts, ``mean_vertical`` the mean of its Z part (a wrong
    mass or plate gain shows as a constant vertical residual; noise and the model's errors average out).
    """

    force_lab: np.ndarray
    judged: np.ndarray
    weight_n: float
    rms: float
    peak: float
    peak_index: int
    vertical_rms: float
    horizontal_rms: float
    mean_vertical: float

    @property
    def n_judged(self) -> int:
        return int(self.judged.sum())

    @classmethod
    def none_judged(cls, force_lab: np.ndarray, weight_n: float) -> Residual:
        """The residual of a trial with no frame judged: ``force_lab`` (n, 3) as computed (NaN
        where not judged: everywhere), every figure NaN, no peak (-1)."""
        nan = math.nan
        return cls(force_lab, np.zeros(force_lab.shape[0], bool), weight_n, nan, nan, -1, nan, nan, nan)


def eroded(mask: np.ndarray, k: int) -> np.ndarray:
    """(n,) bool: the frames of ``mask`` whose ``k`` neighbours on each side are in ``mask`` too (frames
    within ``k`` of either end of the array are out): a binary erosion, linear in n."""
    mask = np.asarray(mask, bool)
    if k <= 0:
        return mask.copy()
    n = mask.size
    out = np.zeros(n, bool)
    if n <= 2 * k:
        return out
    c = np.concatenate([[0], np.cumsum(mask, dtype=np.int64)])
    window = c[2 * k + 1:] - c[: n - 2 * k]  # frames of the mask in [i - k, i + k] for i = k .. n - k - 1
    out[k: n - k] = window == 2 * k + 1
    return out


def residual_force(com_lab: np.ndarray, mass: float, rate: float, force_lab: np.ndarray, usable: np.ndarray, *,
                   gravity: float = GRAVITY_M_S2, cutoff_hz: float | None = 6.0, order: int = 4,
                   margin_frames: int | None = None) -> Residual:
    """The residual force (module docstring) of a body of ``mass`` kg whose centre of mass is at
    ``com_lab`` (n, 3) m, lab frame Z up, sampled at ``rate`` Hz, under the total external force
    ``force_lab`` (n, 3) N, lab, on the body (NaN where unknown), judged on the frames ``usable``
    (n,) bool. The force is low-pass filtered at ``cutoff_hz`` (None: as given), the centre of mass
    is taken as given (filter it first). ``margin_frames``: frames left out on either side of every
    unusable frame and at the ends (default 0.1 s)."""
    com = np.asarray(com_lab, float)
    force = np.asarray(force_lab, float)
    n = com.shape[0]
    if force.shape != (n, 3) or com.shape != (n, 3) or np.shape(usable) != (n,):
        raise ValueError(f"centre of mass {com.shape}, force {force.shape} and mask {np.shape(usable)} must be "
                         "(n, 3), (n, 3), (n,)")
    k = int(round(MARGIN_S * rate)) if margin_frames is None else int(margin_frames)
    acc = second_derivative(com, rate)
    if cutoff_hz is not None:
        force = butter_lowpass(force, rate, cutoff_hz, order)
    ok = np.asarray(usable, bool) & finite_rows(acc) & finite_rows(force)
    judged = eroded(ok, k)
    weight = float(mass) * gravity
    res = np.full((n, 3), np.nan)
    frames = np.flatnonzero(judged)
    if not frames.size:
        return Residual.none_judged(res, weight)
    part = mass * acc[frames] - force[frames]
    part[:, 2] += weight
    res[frames] = part
    r = part / weight
    size, at, rms, horizontal_rms, vertical_rms = _magnitudes(r)
    return Residual(res, judged, weight, rms, float(size[at]), int(frames[at]), vertical_rms, horizontal_rms,
                    float(np.mean(r[:, 2])))


def _magnitudes(r: np.ndarray) -> tuple[np.ndarray, int, float, float, float]:
    """Of vectors ``r`` (m, 3), m >= 1: their magnitudes (m,), the index of the largest, and the RMS of
    the magnitudes, of the XY parts' and of the Z parts' (the figures of :class:`Residual` and
    :class:`ResidualMoment`), from one array of squares; np.linalg.norm's and np.mean's arithmetic
    (a mean: the sum over the count, without np.mean's wrapper)."""
    m = len(r)
    sq = r * r
    horizontal = sq[:, 0] + sq[:, 1]
    size = np.sqrt(horizontal + sq[:, 2])  # the squares added in order, as norm does
    return (size, int(size.argmax()), math.sqrt((size ** 2).sum() / m), math.sqrt(horizontal.sum() / m),
            math.sqrt(sq[:, 2].sum() / m))


@dataclass(frozen=True)
class ResidualMoment:
    """The residual moment of one trial about the body's centre of mass (module docstring).

    moment_lab: (n, 3) N.m, lab axes, dH_G/dt - the feet's moment about G on the judged frames, NaN
    elsewhere. judged: (n,) bool. mass: kg. The summary in N.m per kg of body mass over the judged
    frames (NaN when none): ``rms`` of its magnitude, ``horizontal_rms`` of its part about the lab's
    horizontal axes (X, Y: what a centre of pressure displaced under the body weight changes),
    ``vertical_rms`` of its part about Z (free moments, and the trunk's and arms' twist the model
    does not track), ``peak`` its largest magnitude at frame index ``peak_index`` (-1 when none).
    """

    moment_lab: np.ndarray
    judged: np.ndarray
    mass: float
    rms: float
    horizontal_rms: float
    vertical_rms: float
    peak: float
    peak_index: int

    @property
    def n_judged(self) -> int:
        return int(self.judged.sum())

    @classmethod
    def none_judged(cls, n: int, mass: float) -> ResidualMoment:
        """The residual moment of a trial of ``n`` frames with no frame judged: NaN throughout, no peak (-1)."""
        nan = math.nan
        return cls(np.full((n, 3), np.nan), np.zeros(n, bool), float(mass), nan, nan, nan, nan, -1)


def angular_momentum_rate(parts: list[tuple[Body, SegmentMotion]], point_lab: np.ndarray,
                          frames: np.ndarray | None = None) -> np.ndarray:
    """(n, 3) N.m, lab: the rate of change of the angular momentum of rigid ``parts`` (each a
    :class:`Body` with its :class:`SegmentMotion`) about ``point_lab`` (n, 3) m, for the centre of
    mass of the parts (or any point at rest): sum R (I al + w x I w) + m (r - point) x a_com; all
    parts at once. ``frames``: the (sorted) frame indices to return, (len(frames), 3) (default all)."""
    if frames is None:
        lo, hi, pick = 0, None, slice(None)
    else:
        frames = np.asarray(frames, int)
        lo, hi = (int(frames[0]), int(frames[-1]) + 1) if frames.size else (0, 0)
        pick = frames - lo
    if not parts:
        return np.zeros(np.shape(point_lab))[lo:hi][pick]
    # per-frame parameters (perturbed chains): their mean
    per_frame = [body.per_frame for body, _ in parts]  # asked once per part
    mass = np.array([np.mean(body.mass) if pf else body.mass for (body, _), pf in zip(parts, per_frame)],
                    float)[:, None, None]
    # the parts stacked (np.array of equal shapes: np.stack's copy without its checks, which cost more here)
    inertia = np.array([body.inertia_seg.mean(axis=0) if pf else body.inertia_seg
                        for (body, _), pf in zip(parts, per_frame)])
    w, al, R, com, acc = (np.array([getattr(motion, name)[lo:hi] for _, motion in parts])  # the frames' span
                          for name in ("omega_seg", "alpha_seg", "R", "com_lab", "com_acc_lab"))
    inertia_t = np.swapaxes(inertia, 1, 2)  # rows v (p, n, 3) @ I^T = I v
    spin = al @ inertia_t + cross(w, w @ inertia_t)  # I al + w x I w, part frame
    lab = np.einsum("pnij,pnj->pni", R, spin)
    return (lab + mass * cross(com - np.asarray(point_lab, float)[lo:hi], acc)).sum(axis=0)[pick]


def residual_moment(parts: list[tuple[Body, SegmentMotion]], com_lab: np.ndarray, mass: float, rate: float,
                    force_lab: np.ndarray, moment_lab: np.ndarray, usable: np.ndarray, *,
                    cutoff_hz: float | None = 6.0, order: int = 4, margin_frames: int | None = None,
                    motion_cutoff_hz: float | None = None) -> ResidualMoment:
    """The residual moment (module docstring) of a body of ``mass`` kg made of the rigid ``parts``,
    whose centre of mass is ``com_lab`` (n, 3) m, lab frame, under the external force ``force_lab``
    (n, 3) N and the external moment ``moment_lab`` (n, 3) N.m about the lab origin (NaN where
    unknown), judged on the frames of ``usable`` (n,) bool whose ``margin_frames`` (default 0.1 s)
    on either side are usable too (none within that of the ends) and where it is finite. The force
    and moment are low-pass filtered together at ``cutoff_hz`` (None: as given); the parts' motion is
    taken as given (filter it first), or its angular momentum's rate filtered at ``motion_cutoff_hz``.
    Computed on the judged frames only (without ``motion_cutoff_hz``)."""
    com = np.asarray(com_lab, float)
    n = com.shape[0]
    load = np.concatenate([np.asarray(force_lab, float), np.asarray(moment_lab, float)], axis=1)
    if load.shape != (n, 6) or com.shape != (n, 3) or np.shape(usable) != (n,):
        raise ValueError(f"centre of mass {com.shape}, force and moment {load.shape} and mask {np.shape(usable)} "
                         "must be (n, 3), (n, 6), (n,)")
    k = int(round(MARGIN_S * rate)) if margin_frames is None else int(margin_frames)
    if cutoff_hz is not None:
        load = butter_lowpass(load, rate, cutoff_hz, order)
    frames = np.flatnonzero(eroded(np.asarray(usable, bool), k))
    if motion_cutoff_hz is not None:
        rate_h = butter_lowpass(angular_momentum_rate(parts, com), rate, motion_cutoff_hz, order)[frames]
    else:
        rate_h = angular_momentum_rate(parts, com, frames)
    external = load[frames]
    part = rate_h - (external[:, 3:] - cross(com[frames], external[:, :3]))  # minus the external moment about G
    ok = finite_rows(part)
    frames, part = frames[ok], part[ok]
    if not frames.size:
        return ResidualMoment.none_judged(n, mass)
    res = np.full((n, 3), np.nan)
    res[frames] = part
    judged = np.zeros(n, bool)
    judged[frames] = True
    size, at, rms, horizontal_rms, vertical_rms = _magnitudes(part / mass)
    return ResidualMoment(res, judged, float(mass), rms, horizontal_rms, vertical_rms, float(size[at]), int(frames[at]))
