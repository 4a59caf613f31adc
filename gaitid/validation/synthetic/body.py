"""Exact rigid-body kinematics of the synthetic walker: segment frames from products of
elementary rotations, the pelvis path fitted for a rolling, non-sliding stance foot, markers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gaitid.validation.synthetic.fourier import PATH_HARMONICS, PATH_TAPER, Fourier, fourier_from_samples
from gaitid.validation.synthetic.params import MARKERS, SIDE_SIGN, SIDES, SOLE_X, GaitParams, davis_hjc, marker_offsets


def elementary_rotation(axis: int, angle: np.ndarray) -> np.ndarray:
    """(n, 3, 3) rotation by ``angle`` (rad) about coordinate axis 0/1/2 (right-handed)."""
    c, s = np.cos(angle), np.sin(angle)
    R = np.zeros(angle.shape + (3, 3))
    i, j = (axis + 1) % 3, (axis + 2) % 3
    R[..., axis, axis] = 1.0
    R[..., i, i] = c
    R[..., j, j] = c
    R[..., j, i] = s
    R[..., i, j] = -s
    return R


@dataclass
class Frame:
    """Exact motion of one rigid frame: R (n,3,3) segment->lab, origin o/v/a (n,3) lab,
    omega/alpha (n,3) lab (rad/s, rad/s^2)."""

    R: np.ndarray
    o: np.ndarray
    v: np.ndarray
    a: np.ndarray
    omega: np.ndarray
    alpha: np.ndarray

    def point(self, r_seg: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Position, velocity, acceleration (lab) of the point fixed at ``r_seg`` (3,) in this frame
        (velocity and acceleration None for a pose-only frame)."""
        r = self.R @ r_seg
        w = self.omega
        if w is None:
            return self.o + r, None, None
        return (self.o + r, self.v + np.cross(w, r),
                self.a + np.cross(self.alpha, r) + np.cross(w, np.cross(w, r)))

    def child(self, r_seg: np.ndarray, rotations: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]]) -> "Frame":
        """Frame at point ``r_seg`` of this one, turned by successive elementary rotations
        (axis, q, q', q'') about the current axes: omega = sum u_k q_k',
        alpha = sum (u_k q_k'' + omega_<k x u_k q_k')."""
        o, v, a = self.point(r_seg)
        R, w, al = self.R, self.omega, self.alpha
        for axis, q, qd, qdd in rotations:
            if w is not None:
                u = R[:, :, axis]
                al = al + u * qdd[:, None] + np.cross(w, u) * qd[:, None]
                w = w + u * qd[:, None]
            R = R @ elementary_rotation(axis, q)
        return Frame(R, o, v, a, w, al)


def _angles(curves: dict[str, Fourier], t: np.ndarray, names: list[tuple[str, float]], axes=(1, 0, 2),
            cache: dict | None = None):
    """[(axis, q, q', q'')] for Cardan Y-X-Z rotations from curve names with signs."""
    out = []
    for axis, (name, sign) in zip(axes, names):
        f0, f1, f2 = curves[name].derivs(t, cache)
        out.append((axis, sign * f0, sign * f1, sign * f2))
    return out


@dataclass
class PelvisPath:
    """Pelvis origin (mid-ASIS) translation, lab (m): three Fourier series, x with a constant speed."""

    x: Fourier
    y: Fourier
    z: Fourier

    def __call__(self, t: np.ndarray, d: int = 0) -> np.ndarray:
        return np.column_stack([self.x(t, d), self.y(t, d), self.z(t, d)])

    def derivs(self, t: np.ndarray, cache: dict | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Position, velocity, acceleration (n, 3), as ``self(t, d)`` for d = 0, 1, 2."""
        parts = [f.derivs(t, cache) for f in (self.x, self.y, self.z)]
        return tuple(np.column_stack([q[d] for q in parts]) for d in range(3))


def body_kinematics(p: GaitParams, t: np.ndarray, curves: dict[str, Fourier], path: PelvisPath | None,
                    derivatives: bool = True) -> dict[str, Frame]:
    """Exact frames of pelvis and ``{side}_{thigh,shank,foot}`` at times ``t`` (s).

    ``path`` None puts the pelvis origin at the lab origin (used to fit the path).
    ``derivatives`` False: poses only (R, o; the same numbers), velocities and accelerations None."""
    n = len(t)
    zero = np.zeros((n, 3))
    cache: dict = {}
    if path is None:
        o = v = a = zero
    else:
        o, v, a = path.derivs(t, cache)
    if not derivatives:
        v = a = zero = None
    lab = Frame(np.broadcast_to(np.eye(3), (n, 3, 3)), o, v, a, zero, zero)
    pelvis = lab.child(np.zeros(3), _pelvis_rotations(curves, t, cache))
    out = {"pelvis": pelvis}
    for side in SIDES:
        s = SIDE_SIGN[side]
        thigh = pelvis.child(davis_hjc(p, side), _angles(curves, t, [(f"{side}_hip_flex", -1.0), (f"{side}_hip_add", -s),
                                                                       (f"{side}_hip_rot", -s)], cache=cache))
        shank = thigh.child(np.array([0.0, 0.0, -p.thigh_length]),
                            _angles(curves, t, [(f"{side}_knee_flex", 1.0), (f"{side}_knee_var", -s),
                                                (f"{side}_knee_rot", -s)], cache=cache))
        foot = shank.child(np.array([0.0, 0.0, -p.shank_length]),
                           _angles(curves, t, [(f"{side}_ankle_dorsi", -1.0), (f"{side}_ankle_inv", -s),
                                               (f"{side}_ankle_add", -s)], cache=cache))
        out[f"{side}_thigh"], out[f"{side}_shank"], out[f"{side}_foot"] = thigh, shank, foot
    return out


def _pelvis_rotations(curves, t, cache: dict | None = None):
    """R_pelvis = Rz(rotation) Rx(obliquity) Ry(anterior tilt)."""
    return [(2,) + tuple(curves["pelvis_rot"].derivs(t, cache)),
            (0,) + tuple(curves["pelvis_obl"].derivs(t, cache)),
            (1,) + tuple(curves["pelvis_tilt"].derivs(t, cache))]


def stance_phase(p: GaitParams, t: np.ndarray, side: str) -> np.ndarray:
    """Progress through stance in [0, 1] (NaN in swing) of ``side`` at times t."""
    t0 = p.first_strike + (0.0 if side == "R" else p.stride_time / 2.0)
    ph = np.mod(t - t0, p.stride_time) / (p.stride_time * p.stance_fraction)
    return np.where(ph <= 1.0, ph, np.nan)


def _stance_weights(p: GaitParams, t: np.ndarray) -> dict[str, np.ndarray]:
    """Smooth share of support per foot (sums to 1), ramping over double support (fit target only)."""
    ds = p.stance_fraction - 0.5
    w = {}
    for side in SIDES:
        s = stance_phase(p, t, side) * p.stance_fraction  # fraction of the stride into stance
        up = np.clip(s / ds, 0.0, 1.0)
        down = np.clip((p.stance_fraction - s) / ds, 0.0, 1.0)
        w[side] = np.nan_to_num(np.minimum(up, down), nan=0.0)
    tot = w["R"] + w["L"]
    return {k: v / tot for k, v in w.items()}


def fit_pelvis_path(p: GaitParams, curves: dict[str, Fourier]) -> PelvisPath:
    """Pelvis translation such that the stance foot rolls without sliding on the floor z = 0.

    Over one stride (uniform grid), the target pelvis velocity cancels the velocity of the
    stance foot's lowest sole point (weighted over double support), and the target height puts
    that point on the floor; both are fitted by truncated Fourier series (x with a mean speed).
    """
    n = 440
    T = p.stride_time
    t = p.first_strike + T * np.arange(n) / n
    kin = body_kinematics(p, t, curves, None)
    w = _stance_weights(p, t)
    vel = np.zeros((n, 3))
    low = np.zeros(n)
    sole = np.column_stack([SOLE_X, np.zeros_like(SOLE_X), np.full_like(SOLE_X, -p.ankle_height)])
    rows = np.arange(n)
    for side in SIDES:
        foot = kin[f"{side}_foot"]
        pos = np.stack([foot.point(r)[0] for r in sole], axis=1)  # (n, k, 3)
        k = np.argmin(pos[:, :, 2], axis=1)
        v_contact = np.stack([foot.point(r)[1] for r in sole], axis=1)[rows, k]
        vel += w[side][:, None] * v_contact
        low += w[side] * pos[rows, k, 2]
    u = -vel  # required pelvis velocity
    speed = float(np.round(u[:, 0].mean(), 12))
    fx = fourier_from_samples(u[:, 0], T, PATH_HARMONICS, PATH_TAPER)
    fy = fourier_from_samples(u[:, 1], T, PATH_HARMONICS, PATH_TAPER)
    fz = fourier_from_samples(-low, T, PATH_HARMONICS, PATH_TAPER)
    x = _integrate(fx, speed).shifted(p.first_strike)
    y = _integrate(fy, 0.0).shifted(p.first_strike)
    return PelvisPath(x, y, fz.shifted(p.first_strike))


def _integrate(f: Fourier, slope: float) -> Fourier:
    """Antiderivative of the oscillating part of ``f`` (zero mean), with a linear ``slope`` term."""
    w = 2.0 * np.pi / f.period
    k = np.arange(1, len(f.a) + 1) * w
    return Fourier(f.period, 0.0, np.round(-f.b / k, 12), np.round(f.a / k, 12), slope)


def marker_trajectories(p: GaitParams, kin: dict[str, Frame]) -> dict[str, np.ndarray]:
    """Every Plug-in Gait lower-body marker (n, 3) m lab, in MARKERS order."""
    pos = {}
    for side in SIDES:
        for label, (seg, r) in marker_offsets(p, side).items():
            frame = kin["pelvis"] if seg == "pelvis" else kin[f"{side}_{seg}"]
            pos[label] = frame.point(r)[0]
    return {m: pos[m] for m in MARKERS}
