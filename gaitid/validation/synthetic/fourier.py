"""Periodic curves with exact derivatives: truncated Fourier series of the stride, and the
textbook normal-gait joint-angle curves they are fitted to."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.interpolate import CubicSpline

from gaitid.validation.synthetic.params import GaitParams


@dataclass(frozen=True)
class Fourier:
    """f(t) = a0 + slope t + sum_k a_k cos(k w t) + b_k sin(k w t), w = 2 pi / period; exact derivatives."""

    period: float
    a0: float
    a: np.ndarray
    b: np.ndarray
    slope: float = 0.0
    shift: float = 0.0  # evaluates f(t - shift)

    def __call__(self, t: np.ndarray, d: int = 0) -> np.ndarray:
        t = np.asarray(t, float) - self.shift
        w = 2.0 * np.pi / self.period
        k = np.arange(1, len(self.a) + 1)
        kw = k * w
        ph = np.outer(t, kw)
        c, s = np.cos(ph), np.sin(ph)
        # d-th derivative of cos/sin: rotate by d quarter turns
        if d == 0:
            val = c @ self.a + s @ self.b + self.a0 + self.slope * t
        elif d == 1:
            val = (-s * kw) @ self.a + (c * kw) @ self.b + self.slope
        elif d == 2:
            val = (-c * kw**2) @ self.a + (-s * kw**2) @ self.b
        else:
            raise ValueError("Fourier derivative order must be 0, 1 or 2")
        return val

    def derivs(self, t: np.ndarray, cache: dict | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(f, f', f'') at ``t``, the same numbers as ``self(t, d)`` for d = 0, 1, 2, with the
        cosines and sines computed once. ``cache`` (a dict kept by the caller for one ``t``)
        shares them between curves with the same period, shift and number of harmonics."""
        key = (self.period, self.shift, len(self.a))
        if cache is not None and key in cache:
            tt, kw, c, s = cache[key]
        else:
            tt = np.asarray(t, float) - self.shift
            w = 2.0 * np.pi / self.period
            kw = np.arange(1, len(self.a) + 1) * w
            ph = np.outer(tt, kw)
            c, s = np.cos(ph), np.sin(ph)
            if cache is not None:
                cache[key] = (tt, kw, c, s)
        f0 = c @ self.a + s @ self.b + self.a0 + self.slope * tt
        f1 = (-s * kw) @ self.a + (c * kw) @ self.b + self.slope
        f2 = (-c * kw**2) @ self.a + (-s * kw**2) @ self.b
        return f0, f1, f2

    def shifted(self, dt: float) -> "Fourier":
        return Fourier(self.period, self.a0, self.a, self.b, self.slope, self.shift + dt)


def smoothstep5(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """S(x) = 6x^5 - 15x^4 + 10x^3 on [0, 1] (0 below, 1 above) and its first two derivatives:
    a C2 step (S' and S'' vanish at both ends)."""
    x = np.clip(x, 0.0, 1.0)
    s = x**3 * (10.0 - 15.0 * x + 6.0 * x**2)
    ds = 30.0 * x**2 * (1.0 - x) ** 2
    dds = 60.0 * x * (1.0 - x) * (1.0 - 2.0 * x)
    return s, ds, dds


@dataclass(frozen=True)
class Ramps:
    """A C2 staircase: f(t) = sum_k delta_k S((t - start_k) / (end_k - start_k)), S the quintic
    smoothstep; the ramps must not overlap (sorted by start). Exact first and second derivatives.
    Evaluated with a binary search, so its cost does not grow with the number of ramps."""

    start: np.ndarray
    end: np.ndarray
    delta: np.ndarray

    def __post_init__(self):
        if np.any(self.end <= self.start) or np.any(self.start[1:] < self.end[:-1]):
            raise ValueError("ramps must be sorted, of positive duration and not overlap")

    def derivs(self, t: np.ndarray, cache: dict | None = None):
        t = np.asarray(t, float)
        if len(self.start) == 0:
            z = np.zeros_like(t)
            return z, z.copy(), z.copy()
        before = np.concatenate([[0.0], np.cumsum(self.delta)])  # value reached before ramp k
        k = np.searchsorted(self.start, t, side="right") - 1  # last ramp started at or before t
        kk = np.clip(k, 0, None)
        dur = self.end[kk] - self.start[kk]
        s, ds, dds = smoothstep5((t - self.start[kk]) / dur)
        on = k >= 0
        d = np.where(on, self.delta[kk], 0.0)
        f0 = np.where(on, before[kk] + d * s, 0.0)
        return f0, np.where(on, d * ds / dur, 0.0), np.where(on, d * dds / dur**2, 0.0)

    def __call__(self, t: np.ndarray, d: int = 0) -> np.ndarray:
        return self.derivs(t)[d]


def _quintic_integral(x: np.ndarray) -> np.ndarray:
    """Integral from 0 to x of the quintic smoothstep S: x^6 - 3 x^5 + 2.5 x^4 (x in [0, 1])."""
    return x**6 - 3.0 * x**5 + 2.5 * x**4


@dataclass(frozen=True)
class HeelImpact:
    """The heel strike of a rigid foot as a foot-pitch pulse before each strike (rad, toes up
    positive), exact and C2, zero from the strike on (so stance is untouched).

    With u = t - t_s (t_s the next strike, ``first`` + k ``period``), the heel marker's height
    offset h(u) = -lever * pitch: over [-window, -duration] it rises then falls, reaching a downward
    speed ``speed`` (m/s); over [-duration, 0] that speed falls to 0 by a quintic step (the impact:
    peak deceleration 1.875 speed / duration); h, h', h'' are 0 at both ends. So the foot dips
    its toes by at most 5 deg and the heel lands at ``speed`` instead of gliding in.
    ``lever`` (m/rad) converts heel height to pitch (the heel marker's, about 0.054 m/rad)."""

    first: float
    period: float
    speed: float = 0.15
    duration: float = 0.03
    window: float = 0.12
    lever: float = 0.054

    def derivs(self, t: np.ndarray, cache: dict | None = None):
        t = np.asarray(t, float)
        v, tau, W = self.speed, self.duration, self.window
        c = v * W / (2.0 * (W - tau))  # the rise balances the fall: h(0) = h(-window) = 0
        k = np.ceil((t - self.first) / self.period)
        u = t - (self.first + k * self.period)  # in (-period, 0]
        h, h1, h2 = (np.zeros_like(t) for _ in range(3))
        a = (u >= -W) & (u < -tau)  # approach
        x = (u[a] + W) / (W - tau)
        s, ds, dds = smoothstep5(x)
        h[a] = (W - tau) * (-v * _quintic_integral(x) + c * s)
        h1[a] = -v * s + c * ds
        h2[a] = (-v * ds + c * dds) / (W - tau)
        b = (u >= -tau) & (u <= 0.0)  # impact
        y = (u[b] + tau) / tau
        s, ds, _ = smoothstep5(y)
        h[b] = v * tau / 2.0 - v * tau * (y - _quintic_integral(y))
        h1[b] = -v * (1.0 - s)
        h2[b] = v * ds / tau
        return -h / self.lever, -h1 / self.lever, -h2 / self.lever

    def __call__(self, t: np.ndarray, d: int = 0) -> np.ndarray:
        return self.derivs(t)[d]


@dataclass(frozen=True)
class CurveSum:
    """f(t) = sum of curves (each with ``derivs``); used to add per-step modulations to a Fourier curve."""

    parts: tuple

    def derivs(self, t: np.ndarray, cache: dict | None = None):
        out = [np.zeros(np.shape(t)) for _ in range(3)]
        for part in self.parts:
            for i, v in enumerate(part.derivs(t, cache)):
                out[i] = out[i] + v
        return tuple(out)

    def __call__(self, t: np.ndarray, d: int = 0) -> np.ndarray:
        return self.derivs(t)[d]


def fourier_from_samples(values: np.ndarray, period: float, n_harmonics: int, taper: float | None = None,
                         slope: float = 0.0) -> Fourier:
    """Truncated Fourier series of ``values`` sampled uniformly over one period (least squares = DFT).

    ``taper``: harmonic k is multiplied by exp(-(k / taper)^2 / 2) (a Gaussian smoothing that keeps
    the spectrum of the motion realistic, so finite differences at 100 Hz stay accurate).
    Coefficients are rounded to 1e-12 so the curves are reproducible bit-for-bit.
    """
    n = len(values)
    c = np.fft.rfft(values) / n
    k = np.arange(1, n_harmonics + 1)
    w = np.ones(n_harmonics) if taper is None else np.exp(-0.5 * (k / taper) ** 2)
    a = 2.0 * c.real[1 : n_harmonics + 1] * w
    b = -2.0 * c.imag[1 : n_harmonics + 1] * w
    r = lambda x: np.round(x, 12)  # noqa: E731
    return Fourier(period, float(r(c.real[0])), r(a), r(b), slope)


def keypoint_samples(points: list[tuple[float, float]], n: int) -> np.ndarray:
    """Periodic cubic spline through (percent of cycle, degrees) key points, sampled at
    ``n`` uniform phases from 0 (radians)."""
    pc = np.array([q[0] for q in points] + [points[0][0] + 100.0], float)
    val = np.array([q[1] for q in points] + [points[0][1]], float)
    spline = CubicSpline(pc, np.deg2rad(val), bc_type="periodic")
    return spline(np.mod(100.0 * np.arange(n) / n - pc[0], 100.0) + pc[0])


# Spectrum of the motion: 8 harmonics of the stride (8 Hz) with a Gaussian taper (width 5) for the
# joint angles, 7 untapered harmonics for the pelvis path. Richer spectra make the no-slip fit
# tighter but push the O(h^2) error of 100 Hz finite differences above 0.01 N.m/kg at the hip.
N_HARMONICS = 8  # harmonics kept in every joint-angle curve
ANGLE_TAPER = 5.0  # Gaussian taper width (harmonics) of the joint-angle curves
PATH_HARMONICS = 7  # harmonics of the pelvis translation
PATH_TAPER = None

# Normal-gait joint angles (deg) at % of the gait cycle from foot strike (Perry 1992 / Winter 2009 shapes).
KEYPOINTS = {
    "hip_flex": [(0, 27), (10, 25), (20, 19), (30, 11), (40, 2), (50, -7), (56, -10), (62, -2),
                 (70, 14), (80, 27), (88, 30), (95, 29)],
    "hip_add": [(0, 1), (12, 6), (30, 4), (50, -1), (62, -6), (72, -7), (85, -2)],
    "hip_rot": [(0, 3), (25, 4), (50, -2), (65, -5), (85, 1)],
    "knee_flex": [(0, 4), (6, 11), (14, 18), (22, 15), (32, 8), (42, 4), (50, 7), (56, 15),
                  (62, 33), (68, 55), (73, 60), (80, 50), (88, 25), (95, 6)],
    "knee_var": [(0, 1), (20, 2), (50, 1), (72, 4), (90, 1)],
    "knee_rot": [(0, 1), (20, 4), (50, 2), (70, -4), (90, -1)],
    "ankle_inv": [(0, 3), (15, -3), (40, -2), (60, 4), (80, 3)],
    "ankle_add": [(0, 0), (30, -2), (60, 2), (80, 1)],
    # pelvis, in the right leg's cycle
    "pelvis_tilt": [(0, 10), (20, 11.5), (30, 10.5), (50, 10), (70, 11.5), (80, 10.5)],
    "pelvis_obl": [(0, 0), (12, -3), (30, -1.5), (50, 0), (62, 3), (80, 1.5)],
    "pelvis_rot": [(0, 5), (25, 0), (50, -5), (75, 0)],
}


# Desired foot-floor pitch (deg, toes up positive): heel strike, foot flat 10-40 %, heel rise, toe off at 60 %.
FOOT_PITCH = [(0, 12), (4, 6), (9, 1), (12, 0), (38, 0), (44, -4), (50, -14), (55, -31), (60, -58),
              (65, -70), (72, -54), (80, -22), (88, 2), (94, 14)]


def joint_curves(p: GaitParams) -> dict[str, Fourier]:
    """Angle curves (rad vs time) per ``{side}_{name}`` and ``pelvis_*``; right strikes at ``first_strike``.

    The ankle dorsiflexion is not a key-point curve: it is derived from a desired foot-floor
    pitch (``FOOT_PITCH``, toes up positive) so that the foot is flat in mid-stance:
    dorsi = pitch + tilt - hip_flex + knee_flex (the sagittal rotation sum, mean pelvis tilt).
    """
    out = {}
    n = 512
    samples = {name: keypoint_samples(pts, n) for name, pts in KEYPOINTS.items()}
    tilt = float(np.mean(samples["pelvis_tilt"]))
    samples["ankle_dorsi"] = (keypoint_samples(FOOT_PITCH, n) + tilt - samples["hip_flex"] + samples["knee_flex"])
    for name, val in samples.items():
        f = fourier_from_samples(val, p.stride_time, N_HARMONICS, ANGLE_TAPER)
        if name.startswith("pelvis"):
            out[name] = f.shifted(p.first_strike)
        else:
            out[f"R_{name}"] = f.shifted(p.first_strike)
            out[f"L_{name}"] = f.shifted(p.first_strike + p.stride_time / 2.0)
    for side, t0 in (("R", p.first_strike), ("L", p.first_strike + p.stride_time / 2.0)):
        # the heel lands with an impact (pitch = dorsiflexion + constant sagittal terms)
        out[f"{side}_ankle_dorsi"] = CurveSum((out[f"{side}_ankle_dorsi"], HeelImpact(t0, p.stride_time)))
    return out
