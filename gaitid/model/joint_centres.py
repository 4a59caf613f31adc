"""Joint-centre estimators, batch-first over frames (all lengths in m).

- :func:`davis_hip_centre` -- Davis et al. (1991) regression, as Plug-in Gait / CGM1 uses it.
- :func:`chord_joint_centre` -- Plug-in Gait's "chord function" (knee and ankle).
- :func:`midpoint` -- the mean of points (e.g. medial and lateral epicondyles).
- :func:`harrington_hip_centre` -- Harrington et al. (2007) regression on pelvis width and depth.

Every function returns NaN for a frame whose inputs are NaN or degenerate.
"""

from __future__ import annotations

import numpy as np

from gaitid.core.rotation import cross, unit

# Davis et al. (1991) constants as used by Plug-in Gait (CGM1): theta = 28.4 deg, beta = 18 deg.
DAVIS_THETA = 0.500000178813934  # rad (28.4 deg in Vicon's implementation)
DAVIS_BETA = 0.314000427722931  # rad (18 deg)


def is_left(side: str) -> bool:
    """True for the left side ('Left' or 'left'), False for the right; ValueError otherwise."""
    low = str(side).lower()
    if low not in ("left", "right"):
        raise ValueError(f"side must be 'Left' or 'Right', not {side!r}")
    return low == "left"


def asis_trochanter_distance(leg_length: float) -> float:
    """ASIS-to-greater-trochanter distance (m) from leg length (m): 0.1288 L - 0.04856 (Davis 1991, as in CGM1)."""
    return 0.1288 * leg_length - 0.04856


def davis_hip_centre(
    leg_length: float,
    inter_asis_distance: float,
    marker_radius: float,
    side: str,
    asis_trochanter: float | None = None,
    mean_leg_length: float | None = None,
) -> np.ndarray:
    """Hip joint centre in the pelvis frame (m), Davis et al. (1991) as implemented by Plug-in Gait.

    The pelvis frame has its origin at the mid-point of the ASIS markers, x anterior, y left
    (from RASI to LASI), z up. With C = 0.115 L_mean - 0.0153 (m), a = inter-ASIS / 2,
    X_t = asis_trochanter + marker_radius:

        x = -X_t cos(beta) + C cos(theta) sin(beta)
        y = +/-(a - C sin(theta))            (+ for the left hip)
        z = -X_t sin(beta) - C cos(theta) cos(beta)

    ``leg_length`` is this side's (used for the default ASIS-trochanter distance),
    ``mean_leg_length`` the mean of both sides (Plug-in Gait's C); it defaults to ``leg_length``.
    Verified on Plug-in Gait's own output (``LFEP`` in the ``PEL`` frame, PiG_Motion3_FF.c3d).
    """
    left = is_left(side)
    x_t = (asis_trochanter_distance(leg_length) if asis_trochanter is None else asis_trochanter) + marker_radius
    c = 0.115 * (leg_length if mean_leg_length is None else mean_leg_length) - 0.0153
    a = inter_asis_distance / 2.0
    x = -x_t * np.cos(DAVIS_BETA) + c * np.cos(DAVIS_THETA) * np.sin(DAVIS_BETA)
    y = a - c * np.sin(DAVIS_THETA)
    z = -x_t * np.sin(DAVIS_BETA) - c * np.cos(DAVIS_THETA) * np.cos(DAVIS_BETA)
    return np.array([x, y if left else -y, z])


def harrington_hip_centre(pelvis_width: float, pelvis_depth: float, side: str) -> np.ndarray:
    """Hip joint centre in the pelvis frame (m), Harrington et al. (2007, J Biomech 40:595) eq.
    with pelvis width PW (inter-ASIS distance) and depth PD (mid-ASIS to mid-PSIS), in mm:

        ISB pelvis (X anterior, Y up, Z right):  X = -0.24 PD - 9.9,  Y = -0.30 PW - 10.9,
                                                 Z = +/-(0.33 PW + 7.3)   (+ right hip)

    returned in gaitid's pelvis axes (origin mid-ASIS, x anterior, y left, z up):
    x = X, y = -Z, z = Y, converted to m. PW, PD in m, measured between the landmarks
    (marker radius not subtracted; Harrington's landmarks were palpated bone)."""
    left = is_left(side)
    pw, pd = pelvis_width * 1000.0, pelvis_depth * 1000.0
    x = -0.24 * pd - 9.9
    up = -0.30 * pw - 10.9
    lateral = 0.33 * pw + 7.3
    return np.array([x, lateral if left else -lateral, up]) / 1000.0


def _rotate_about_line(point: np.ndarray, pivot: np.ndarray, axis: np.ndarray, angle: float) -> np.ndarray:
    """Rotate points (n, 3) by ``angle`` rad about the line through ``pivot`` along ``axis`` (Rodrigues)."""
    u = unit(axis)
    a = point - pivot
    c, s = np.cos(angle), np.sin(angle)
    return pivot + a * c + cross(u, a) * s + u * np.sum(u * a, axis=-1, keepdims=True) * (1 - c)


def _chord(wand: np.ndarray, proximal: np.ndarray, marker: np.ndarray, offset: float, angle_offset: float = 0.0):
    u = unit(proximal - marker)
    d = np.linalg.norm(proximal - marker, axis=-1)
    a = wand - marker
    w = unit(-(a - u * np.sum(a * u, axis=-1, keepdims=True)))  # in-plane, normal to u, away from the wand
    with np.errstate(invalid="ignore"):
        if angle_offset == 0.0:
            cos_t = offset / d
            sin_t = np.sqrt(1.0 - cos_t**2)  # NaN when the marker is closer than offset to the proximal centre
        else:
            # triangle marker-J-proximal with angle gamma at J: law of sines gives the angle at the marker
            gamma = np.pi / 2 + angle_offset
            t = np.pi - gamma - np.arcsin(offset * np.sin(gamma) / d)
            cos_t, sin_t = np.cos(t), np.sin(t)
    return marker + offset * (cos_t[..., None] * u + sin_t[..., None] * w)


def chord_joint_centre(
    wand: np.ndarray,
    proximal: np.ndarray,
    marker: np.ndarray,
    offset: float,
    wand_rotation: float = 0.0,
    iterations: int = 4,
    angle_offset: float = 0.0,
) -> np.ndarray:
    """Plug-in Gait chord function: the joint centre J (n, 3) m, lab frame.

    J lies in the plane of ``wand``, ``proximal`` (the joint centre above) and ``marker``
    (the lateral joint marker), at distance ``offset`` (joint width / 2 + marker radius)
    from ``marker``, with a right angle proximal-J-marker, on the side of the line
    marker->proximal away from the wand. Closed form: u = unit(proximal - marker),
    d = |proximal - marker|, w the in-plane unit normal to u pointing away from the wand,
    J = marker + offset (cos(t) u + sin(t) w) with cos(t) = offset / d.

    ``wand_rotation`` (rad) is Plug-in Gait's static wand offset (ThighRotation,
    ShankRotation): the wand is first rotated by this angle, right-handed, about the
    segment's long axis (the line through ``proximal`` along J -> proximal); as that axis
    depends on J, the construction is iterated (``iterations`` times; it converges to
    1e-5 m in 2-3). Matches Plug-in Gait's own knee centres to 0.00 mm on four real files
    (see docs/plugin-gait.md for the sign per side).

    ``angle_offset`` (rad) opens the angle proximal-J-marker to pi/2 + angle_offset (Plug-in
    Gait's AnkleAbAdd; J then follows from the law of sines in the triangle marker-J-proximal).
    """
    wand = np.asarray(wand, float)
    proximal = np.asarray(proximal, float)
    marker = np.asarray(marker, float)
    joint = _chord(wand, proximal, marker, offset, angle_offset)
    if wand_rotation:
        for _ in range(iterations):
            rotated = _rotate_about_line(wand, proximal, proximal - joint, wand_rotation)
            joint = _chord(rotated, proximal, marker, offset, angle_offset)
    return joint


def midpoint(*points: np.ndarray) -> np.ndarray:
    """Mean of the given points (n, 3), NaN where any is NaN."""
    return np.mean(np.stack([np.asarray(p, float) for p in points]), axis=0)
