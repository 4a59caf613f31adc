"""Checks of a trial's force-plate set-up: the plates' geometry (FORCE_PLATFORM:CORNERS and ORIGIN,
the direction of their force) and the units of their channels (ANALOG:UNITS against what the
reader used, and the centre of pressure they give). Each returns a
:class:`~gaitid.core.checks.Check`; the thresholds are :class:`~gaitid.core.settings.Settings`
fields (docs/checks.md, "Force plates").

The C3D standard numbers a plate's corners in its +x+y, -x+y, -x-y, +x-y quadrants, with the
plate's Z axis pointing down into the floor: seen from above (lab Z up) the corners 1-2-3-4
run clockwise, and ``(c1 - c2) x (c1 - c4)`` (the reader's plate Z, :func:`gaitid.io.forceplates.plate_frame`)
points down. Every real file checked (Vicon, Qualisys, Motion Analysis, c3d.org samples) does so.
A mirrored order gives a right-handed plate frame with Z up: the reader then exchanges the
plate's Fx and Fy and reverses its Fz, and when that plate carries most of the load the reader's
vertical (from the plates' forces, :mod:`gaitid.io.vertical`) turns the whole lab upside down.
The checks judge the plates against the vertical of the *markers* (body height), which no plate
can turn over, and never correct a plate.
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from gaitid.core.checks import Check
from gaitid.core.errors import DataError
from gaitid.core.rotation import norm
from gaitid.core.signal import finite_rows, median
from gaitid.core.trial import ForcePlate, Trial
from gaitid.io.forceplates import force_scale, length_scale
from gaitid.io.vertical import LOADED_N, up_from_markers

SENSOR_TYPES = (3, 6, 7)  # ORIGIN = (a, b, az0): sensor half-spacings and the surface's depth
LOADED_COP_N = 50.0  # a frame's COP counts when the plate's vertical force is at least this (N)
_MOMENT = re.compile(r"^(n|nt|newton|kn|lbf|lb)(m|mm|cm|dm|in|inch)$")
_FORCE = re.compile(r"^(n|nt|newton|newtons|kn|lbf|lb)$")


def _unit_key(unit: str) -> str:
    return re.sub(r"[\s.*·_\-]", "", unit.strip().lower())


@lru_cache(maxsize=256)
def unit_value(unit: str) -> tuple[str, float] | None:
    """('force', N per unit) or ('moment', N.m per unit) of an ANALOG:UNITS string ('Nmm', 'N.m', 'ntmm',
    'N'), or None when it names neither (e.g. 'V', '')."""
    key = _unit_key(unit)
    m = _MOMENT.match(key)
    if m:
        return "moment", force_scale(m.group(1)) * length_scale(m.group(2))
    if _FORCE.match(key):
        return "force", force_scale("n" if key == "newtons" else key)
    return None


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b of two 3-vectors (np.cross costs ten times this on one pair)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def _outline(corners: np.ndarray) -> tuple[np.ndarray, ...]:
    """Of a plate outline (4, 3) m, lab: unit x, y (in-plane, from the corners as the reader does) and
    z = x × y; the centre (3,); the half-sizes (2,) along x and y (|c1c2| / 2, |c1c4| / 2), m
    (read-only: computed once per outline)."""
    c = np.asarray(corners, float)
    return _outline_of(c.shape, c.tobytes())


@lru_cache(maxsize=64)
def _outline_of(shape: tuple[int, ...], corners_bytes: bytes) -> tuple[np.ndarray, ...]:
    corners = np.frombuffer(corners_bytes).reshape(shape)
    x = corners[0] - corners[1]
    y = corners[0] - corners[3]
    z = _cross(x, y)
    half = 0.5 * np.array([np.linalg.norm(x), np.linalg.norm(y)])
    y = _cross(z, x)
    out = x / np.linalg.norm(x), y / np.linalg.norm(y), z / np.linalg.norm(z), corners.mean(axis=0), half
    for a in out:
        a.setflags(write=False)
    return out


def markers_up(trial: Trial) -> np.ndarray | None:
    """Up in the trial's lab as the markers' layout says (:func:`gaitid.io.vertical.up_from_markers`), or None."""
    if not trial.markers.size:
        return None
    return up_from_markers(trial.markers[:: max(1, trial.n_frames // 20)])  # 20 frames tell the body's height


def _shape_figures(c: np.ndarray) -> tuple[float, str]:
    """Worst deviation (m) of the corners (4, 3) from a planar rectangle, and its figures in mm (once
    per plate outline: a lab's plates keep theirs from trial to trial)."""
    c = np.ascontiguousarray(c, float)
    return _shape_of(c.shape, c.tobytes())


@lru_cache(maxsize=64)
def _shape_of(shape: tuple[int, ...], corners_bytes: bytes) -> tuple[float, str]:
    c = np.frombuffer(corners_bytes).reshape(shape)
    sides = norm(c - np.roll(c, -1, axis=0))  # |c1c2|, |c2c3|, |c3c4|, |c4c1|
    diag = norm(c[[0, 1]] - c[[2, 3]])
    centred = c - c.mean(axis=0)
    normal = np.linalg.svd(centred)[2][-1]
    off_plane = float(np.abs(centred @ normal).max())
    dev = max(abs(sides[0] - sides[2]), abs(sides[1] - sides[3]), abs(diag[0] - diag[1]), off_plane)
    mm = 1e3
    figures = (f"sides {sides[0] * mm:.1f}/{sides[2] * mm:.1f} and {sides[1] * mm:.1f}/{sides[3] * mm:.1f} mm, "
               f"diagonals {diag[0] * mm:.1f}/{diag[1] * mm:.1f} mm, corners up to {off_plane * mm:.1f} mm off one plane")
    return float(dev), figures


def _mean_loaded_force(p: ForcePlate) -> tuple[np.ndarray, int]:
    """Mean force (3,) N, lab, over the point frames with |F| > LOADED_N, and their number."""
    f = p.point.force
    mag = norm(f)
    loaded = np.isfinite(mag) & (mag > LOADED_N)
    count = np.count_nonzero(loaded)
    return (f[loaded].sum(axis=0) / count if count else np.full(3, np.nan)), count  # (np.mean's sum and division)


def plate_geometry_check(trial: Trial, corner_tolerance_m: float, origin_offset_m: float,
                         origin_depth_m: float) -> Check:
    """'plate geometry': each plate's corners a planar rectangle (opposite sides, diagonals and
    flatness within ``corner_tolerance_m``), numbered so that its Z axis points into the floor, its
    ORIGIN under the surface centre (``|x|, |y| <= origin_offset_m``, ``|z| <= origin_depth_m``;
    types 3/6/7: the sensors' half-spacings inside the plate), its force on the subject pointing
    up. Up is the markers' (body height); without markers, the trial's +Z.

    Raises DataError when a plate pushes down and the markers say the lab is upside down (the
    reader turned it over from the plates' forces): every kinetic number would be wrong.
    """
    name = "plate geometry"
    if not trial.force_plates:
        return Check.not_run(name, "the trial has no force plate")
    up = markers_up(trial)
    up_from = "the markers' vertical"
    if up is None:
        up, up_from = np.array([0.0, 0.0, 1.0]), "the lab's +Z (no markers to tell)"
    warnings, worst, n_down = [], 0.0, 0
    suspects = []
    n_outline = 0
    for p in trial.force_plates:
        c = np.asarray(p.corners, float)
        tag = f"force plate {p.index}"
        mean_f, n_loaded = _mean_loaded_force(p)
        if n_loaded and float(mean_f @ up) < 0:
            suspects.append(p.index)
            chans = ", ".join(f"'{ch}'" for ch in p.channels[:3])
            warnings.append(
                f"{tag}: the force on the subject points down (mean vertical {float(mean_f @ up):+.0f} N over "
                f"{n_loaded} loaded frames, by {up_from}): corners in mirrored order, a negated gain "
                f"(ANALOG:SCALE of {chans}) or an amplifier wired in reverse; gaitid finds no contact on a plate "
                "pushing down")
        if not np.isfinite(c).all():
            continue
        n_outline += 1
        dev, figures = _shape_figures(c)
        worst = max(worst, dev)
        if dev > corner_tolerance_m:
            warnings.append(
                f"{tag}: FORCE_PLATFORM:CORNERS do not form a flat rectangle ({figures}; off by up to "
                f"{dev * 1e3:.1f} mm, tolerance {corner_tolerance_m * 1e3:g} mm, Settings.plate_corner_tolerance_m): "
                "a corner mistyped or measured on another plate; its COP and moments are placed wrongly")
        z = _outline(c)[2]
        if float(z @ up) > 0:
            if p.index not in suspects:
                suspects.append(p.index)
            warnings.append(
                f"{tag}: FORCE_PLATFORM:CORNERS are numbered in mirrored order: the plate's Z axis "
                "(corner1-corner2) x (corner1-corner4) points up, out of the floor, by "
                f"{up_from}; the C3D standard numbers the corners in the plate's +x+y, -x+y, -x-y, +x-y "
                "quadrants, clockwise seen from above, so that Z points into the floor. With this order the "
                "plate's Fx and Fy are exchanged and its Fz reversed: fix the corner order in the lab's set-up "
                "(gaitid does not re-order corners)")
        else:
            n_down += 1
        o = np.asarray(p.origin, float)
        if not np.isfinite(o).all():
            continue
        if p.type in SENSOR_TYPES:
            half = 0.5 * np.array([np.linalg.norm(c[0] - c[1]), np.linalg.norm(c[0] - c[3])])  # only these need it
            bad = o[0] <= 0 or o[1] <= 0 or o[0] > half[0] or o[1] > half[1] or abs(o[2]) > origin_depth_m
            expect = (f"sensor half-spacings a, b positive and inside the plate's half-sizes "
                      f"({half[0] * 1e3:.0f}, {half[1] * 1e3:.0f} mm), depth |az0| <= {origin_depth_m * 1e3:g} mm")
        else:
            bad = max(abs(o[0]), abs(o[1])) > origin_offset_m or abs(o[2]) > origin_depth_m
            expect = (f"|x|, |y| <= {origin_offset_m * 1e3:g} mm from the surface centre (Settings.plate_origin_offset_m), "
                      f"|z| <= {origin_depth_m * 1e3:g} mm (Settings.plate_origin_depth_m)")
        if bad and p.type != 1:
            warnings.append(
                f"{tag} (type {p.type}): FORCE_PLATFORM:ORIGIN ({o[0] * 1e3:.1f}, {o[1] * 1e3:.1f}, {o[2] * 1e3:.1f}) mm "
                f"is not under the plate's surface centre as a sensor is ({expect}): a value in the wrong unit "
                "(m read as mm) or another plate's; the moments about the surface and the COP are wrong")
    if suspects and float(up[2]) < 0:
        raise DataError(
            f"the lab was turned upside down from the force plates' vertical forces, but the markers say the "
            f"file's up axis is the other way: force plate(s) {', '.join(map(str, suspects))} push down (corners "
            "in mirrored order or a negated vertical gain); no kinetic number can be right. "
            + " ".join(w for w in warnings if w.startswith("force plate")), trial.path)
    detail = (f"{n_outline} plate(s) with corners: off a rectangle by up to {worst * 1e3:.1f} mm "
              f"(tolerance {corner_tolerance_m * 1e3:g} mm), {n_down} with Z into the floor"
              if n_outline else "no plate outline (corners unknown, e.g. an OpenSim GRF file)")
    detail += f"; {len(trial.force_plates) - len(set(suspects))} of {len(trial.force_plates)} plate(s) push up"
    return Check.outcome(name, detail, warnings)


def _cop_outside(p: ForcePlate) -> tuple[np.ndarray, np.ndarray]:
    """Per point frame with the plate loaded (Fz >= :data:`LOADED_COP_N`, COP known): the distance (m)
    by which the COP lies outside the plate outline (negative inside), and the COP's distance to the
    plate centre."""
    w = p.point
    fz = w.force[:, 2]
    ok = np.isfinite(fz) & (np.abs(fz) >= LOADED_COP_N) & finite_rows(w.cop)
    c = np.asarray(p.corners, float)
    x, y, _, centre, half = _outline(c)
    rel = w.cop[ok] - centre
    u, v = np.abs(rel @ x), np.abs(rel @ y)  # along the plate's x and y
    return np.maximum(u - half[0], v - half[1]), np.sqrt(u * u + v * v)  # (core.rotation.norm's sum of squares)


def plate_units_check(trial: Trial, cop_outside_m: float) -> Check:
    """'plate units': each plate channel's ANALOG:UNITS against the unit the reader took it in
    (a force channel labelled with a moment unit, or 'N.m' read as 'N.mm', is named with both
    candidates and what the COP says of each), and the COP of the loaded frames inside the plate
    (median distance outside the outline at most ``cop_outside_m``): moments too large by a unit
    factor put it far outside."""
    name = "plate units"
    plates = [p for p in trial.force_plates if np.isfinite(p.corners).all()]
    if not plates:
        return Check.not_run(name, "the trial has no force plate")
    warnings, worst, compared = [], -np.inf, 0
    for p in plates:
        tag = f"force plate {p.index}"
        outside, from_centre = _cop_outside(p)
        median_out = median(outside)  # NaN without a loaded frame
        if outside.size:
            worst = max(worst, median_out)
        found: dict[tuple[str, str], list[str]] = {}
        for label, read, stored in zip(p.channels, p.units_read, p.units_stored):
            want, got = unit_value(read) if read else None, unit_value(stored)
            if want is None or got is None:
                continue
            compared += 1
            if want[0] != got[0] or abs(want[1] - got[1]) > 1e-6 * abs(got[1]):
                found.setdefault((read, stored), []).append(label)
        # the COP's median distance from the plate centre: only the warnings name it
        median_r = median(from_centre) if found or median_out > cop_outside_m else np.nan
        for (read, stored), labels in found.items():
            want, got = unit_value(read), unit_value(stored)
            names = ", ".join(f"'{lab}'" for lab in labels)
            if want[0] != got[0]:
                warnings.append(
                    f"{tag}: channel(s) {names} labelled '{stored}' (ANALOG:UNITS), a {got[0]} unit, but read as the "
                    f"plate's {want[0]} channel(s) in '{read}': check FORCE_PLATFORM:CHANNEL's order and the labels")
                continue
            ratio = got[1] / want[1]
            cop = ""
            if np.isfinite(median_r):
                c = np.asarray(p.corners, float)  # the plate's size: only this warning names it
                half_cm = f"{50 * np.linalg.norm(c[0] - c[1]):.0f} x {50 * np.linalg.norm(c[0] - c[3]):.0f} cm"
                cop = (f"; read in '{read}' the COP lies a median {median_r * 100:.1f} cm from the plate centre "
                       f"(plate half-sizes {half_cm}), in '{stored}' it would lie about {median_r * ratio * 100:.3g} cm "
                       "from it")
            warnings.append(
                f"{tag}: channel(s) {names} labelled '{stored}' (ANALOG:UNITS) but read in '{read}' "
                f"(FORCE_PLATFORM:UNITS x POINT:UNITS, as ezc3d): the two differ by x{ratio:g}{cop}. Which is "
                "right, the label or the plate's calibration, is the lab's to say: gaitid keeps reading "
                f"'{read}'")
        if outside.size and median_out > cop_outside_m:
            warnings.append(
                f"{tag}: its centre of pressure lies outside the plate on most loaded frames (median "
                f"{median_out * 100:.1f} cm outside the edge, {median_r * 100:.0f} cm from the centre, over "
                f"{outside.size} frames with Fz >= {LOADED_COP_N:g} N; tolerance {cop_outside_m * 100:g} cm, "
                "Settings.plate_cop_outside_m): moment channels in a larger unit than read (N.m read as N.mm: "
                "x1000), a gain too high on the moments, or FORCE_PLATFORM:ORIGIN wrong")
    if not np.isfinite(worst):
        where = "no loaded plate"
    elif worst <= 0:  # every plate's median COP inside its outline: say how far inside the closest lies
        where = f"COP median inside every plate, {-worst * 100:.1f} cm inside the edge at the closest"
    else:
        where = f"COP median {worst * 100:.1f} cm outside the plate edge at worst"
    detail = (f"{where} (tolerance {cop_outside_m * 100:g} cm outside); " if np.isfinite(worst) else f"{where}; ") + \
        f"{compared} channel unit(s) compared with their labels"
    return Check.outcome(name, detail, warnings)
