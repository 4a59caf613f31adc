"""Periodic curves with exact derivatives: truncated Fourier series of the stride, and the
textbook normal-gait joint-angle curves they are fitted to."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.interpolate import CubicSpline

from gaitid.synthetic.params import GaitParams


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

    def shifted(self, dt: float) -> "Fourier":
        return Fourier(self.period, self.a0, self.a, self.b, self.slope, self.shift + dt)


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
    return out
