"""Force-plate wrenches from the analog channels, vectorised over samples (C3D types 1-4).

The maths follows the C3D specification (c3d.org, "Force platform" chapter) and
reproduces ezc3d 1.7.2's ``ForcePlatform`` module exactly (its extraction is the
test oracle, agreement 1e-9), but over all samples at once instead of one analog
frame at a time.

Frames and signs
----------------
* Plate frame: ``axis_x = c0 - c1``, ``axis_y = c0 - c3``, ``axis_z = x × y``
  (``c0..c3`` the FORCE_PLATFORM:CORNERS in the lab), columns of ``R_plate``
  (maps plate coordinates to lab coordinates, as our ``R`` convention).
* FORCE_PLATFORM:ORIGIN is the plate-frame vector from the sensor origin to the
  centre of the plate surface (C3D spec); for types 1-4 a positive Z is flipped,
  as ezc3d and most readers do. Types 2-4 moments are carried to the surface
  centre with ``M_c = M_o + F × origin``.
* The centre of pressure in the plate frame is ``(-My/Fz, Mx/Fz, 0)`` about the
  surface centre; the free moment is ``Tz = M_c + F × cop`` (only its plate Z
  component is non-zero). Both go to the lab with ``R_plate`` (COP + centre).
* Force sign: on every real file (Vicon, Qualisys, Motion Analysis, c3d.org
  samples) ezc3d's lab force is +Z up under load and equals Plug-in Gait's
  ``GroundReactionForce`` times body mass, i.e. it is the force acting ON the
  subject; gaitid keeps that sign.

Units: force channels are taken in the FORCE_PLATFORM:UNITS force unit (N when
absent) and moment channels in that unit times the POINT:UNITS length unit
(ezc3d's rule; many files label plate channels 'V'), converted to SI once.

Resampling to the point rate: the force and the moment about the surface
centre (linear in the channels) are averaged over the ``factor`` analog samples
centred on each point frame (:func:`decimate`, a centred moving average); COP and
free moment are then recomputed from the averaged wrench. A non-negative kernel
was chosen over an anti-alias FIR (``resample_poly``) because the FIR rings at a
sharp foot contact: on the real files it put +20/-35 N and a spurious COP on
frames that are still unloaded at the analog rate, which is exactly where impact
kinetics are most sensitive. gaitid.io.opensim decimates GRF files with the same
function (a test holds the two readers equal).

COP (and the free moment) are NaN wherever the plate's normal force |Fz| is
below ``cop_threshold`` (default 10 N): the ratio ``M/Fz`` is meaningless on
an unloaded plate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gaitid.errors import FileFormatError, UnsupportedError
from gaitid.trial import ForcePlate, PlateWrench
from gaitid.vocabulary import COP_THRESHOLD_N

SUPPORTED_TYPES = (1, 2, 3, 4)
_UNSUPPORTED = {
    5: "type 5 (8-channel strain-gauge plate with calibration matrix)",
    6: "type 6 (12-channel plate)",
    7: "type 7 (Kistler 8-channel with calibration matrix)",
    11: "type 11 (Kistler split-belt treadmill)",
    12: "type 12 (Gaitway instrumented treadmill)",
    21: "type 21 (AMTI stairs)",
}
N_CHANNELS = {1: 6, 2: 6, 3: 8, 4: 6}

_LENGTH_TO_M = {"mm": 1e-3, "cm": 1e-2, "m": 1.0, "dm": 0.1, "in": 0.0254, "inch": 0.0254}
LENGTH_UNITS = frozenset(_LENGTH_TO_M)
_FORCE_TO_N = {"n": 1.0, "nt": 1.0, "newton": 1.0, "kn": 1e3, "lbf": 4.4482216152605, "lb": 4.4482216152605}


def length_scale(unit: str) -> float:
    """Metres per ``unit`` (POINT:UNITS); unknown or empty units are taken as mm with no error."""
    return _LENGTH_TO_M.get(unit.strip().lower(), 1e-3)


def force_scale(unit: str) -> float:
    """Newtons per ``unit`` (FORCE_PLATFORM:UNITS); N when unknown."""
    return _FORCE_TO_N.get(unit.strip().lower(), 1.0)


@dataclass
class PlateSpec:
    """One FORCE_PLATFORM entry, in file units (lengths in POINT:UNITS)."""

    index: int  # 1-based
    type: int
    corners: np.ndarray  # (4, 3) lab, file length unit
    origin: np.ndarray  # (3,) plate frame, file length unit, as stored
    channels: np.ndarray  # (n_ch,) 0-based analog columns
    cal_matrix: np.ndarray | None  # (6, 6) for type 4
    cop_poly: np.ndarray | None  # (12,) type 3 FPCOPPOLY


def plate_frame(corners: np.ndarray) -> np.ndarray:
    """``R_plate`` (3, 3): columns are the plate axes in the lab (C3D spec / ezc3d corner rule)."""
    x = corners[0] - corners[1]
    y = corners[0] - corners[3]
    z = np.cross(x, y)
    y = np.cross(z, x)
    return np.column_stack([x / np.linalg.norm(x), y / np.linalg.norm(y), z / np.linalg.norm(z)])


def effective_origin(spec: PlateSpec) -> np.ndarray:
    """Origin used in the maths: type 1 keeps only Z; types 1-4 flip a positive Z (ezc3d rule)."""
    o = np.array(spec.origin, dtype=float)
    if spec.type == 1:
        o[:2] = 0.0
    if o[2] > 0:
        o = -o
    return o


def wrench_plate_frame(ch: np.ndarray, spec: PlateSpec) -> tuple[np.ndarray, np.ndarray]:
    """Force and moment about the surface centre in the plate frame, file units (C3D spec per type).

    ``ch`` (n, n_channels) are the plate's analog columns in FORCE_PLATFORM:CHANNEL order.
    """
    t = spec.type
    o = effective_origin(spec)
    if t == 1:  # Fx Fy Fz COPx COPy Tz: COP given directly
        f = ch[:, 0:3]
        cop = np.column_stack([ch[:, 3], ch[:, 4], np.zeros(len(ch))])
        tz = np.column_stack([np.zeros(len(ch)), np.zeros(len(ch)), ch[:, 5]])
        m = np.cross(cop, f) + tz
        return f, m
    if t == 3:  # Kistler: fx12 fx34 fy14 fy23 fz1 fz2 fz3 fz4, sensor offsets a=|ox|, b=|oy|
        f = np.column_stack([ch[:, 0] + ch[:, 1], ch[:, 2] + ch[:, 3], ch[:, 4:8].sum(axis=1)])
        m = np.column_stack(
            [
                o[1] * (ch[:, 4] + ch[:, 5] - ch[:, 6] - ch[:, 7]),
                o[0] * (ch[:, 5] + ch[:, 6] - ch[:, 4] - ch[:, 7]),
                o[1] * (ch[:, 1] - ch[:, 0]) + o[0] * (ch[:, 2] - ch[:, 3]),
            ]
        )
        m = m + np.cross(f, np.array([0.0, 0.0, o[2]]))
        return f, m
    # types 2 and 4: Fx Fy Fz Mx My Mz about the sensor origin (type 4 through CAL_MATRIX)
    data = ch[:, 0:6]
    if t == 4:
        data = data @ spec.cal_matrix.T
    f = data[:, 0:3]
    m = data[:, 3:6] + np.cross(f, o)
    return f, m


def cop_free_moment_plate(f: np.ndarray, m: np.ndarray, spec: PlateSpec) -> tuple[np.ndarray, np.ndarray]:
    """COP (about the surface centre) and free moment ``M + F × cop``, plate frame, file units."""
    with np.errstate(divide="ignore", invalid="ignore"):
        cop = np.column_stack([-m[:, 1] / f[:, 2], m[:, 0] / f[:, 2], np.zeros(len(f))])
    if spec.type == 3 and spec.cop_poly is not None:
        p = spec.cop_poly
        x, y = cop[:, 0].copy(), cop[:, 1].copy()
        cop[:, 0] -= (p[0] * y**4 + p[1] * y**2 + p[2]) * x**3 + (p[3] * y**4 + p[4] * y**2 + p[5]) * x
        cop[:, 1] -= (p[6] * x**4 + p[7] * x**2 + p[8]) * y**3 + (p[9] * x**4 + p[10] * x**2 + p[11]) * y
    tz = m + np.cross(f, cop)
    return cop, tz


def wrench_lab(
    f_p: np.ndarray, m_p: np.ndarray, spec: PlateSpec, len_scale: float, f_scale: float, rate: float, cop_threshold: float
) -> PlateWrench:
    """Plate-frame wrench (file units) -> :class:`PlateWrench` in the lab, SI; COP NaN below the threshold."""
    rot = plate_frame(spec.corners)
    centre = spec.corners.mean(axis=0)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):  # unloaded samples: NaN/inf, masked below
        cop_p, tz_p = cop_free_moment_plate(f_p, m_p, spec)
        force = f_p @ rot.T * f_scale
        cop = (cop_p @ rot.T + centre) * len_scale
        free = tz_p @ rot.T * (f_scale * len_scale)
    # normal force in the plate frame: the lab's vertical force once the lab is Z-up, whatever the file's up axis
    unloaded = ~(np.abs(f_p[:, 2] * f_scale) >= cop_threshold)  # NaN force counts as unloaded
    cop[unloaded] = np.nan
    free[unloaded] = np.nan
    return PlateWrench(rate=rate, force=force, cop=cop, free_moment=free)


def decimate(x: np.ndarray, factor: int) -> np.ndarray:
    """Centred moving average along axis 0, sampled at every ``factor``-th sample:
    frame k is the weighted mean of the samples around sample ``k * factor`` (an odd
    ``factor``: the ``factor`` samples centred on it; an even one: ``factor + 1``
    samples with half weights at both ends, so the window stays exactly centred).
    Edges repeat the edge value; NaN stays local to the frames whose window holds it.
    Output length ceil(n / factor)."""
    if factor == 1:
        return x.copy()
    from scipy.ndimage import convolve1d  # imported here: scipy is slow to import

    kernel = np.ones(factor + 1 - factor % 2)
    if factor % 2 == 0:
        kernel[[0, -1]] = 0.5
    return convolve1d(x, kernel / factor, axis=0, mode="nearest")[::factor]


def compute_plate(
    analog: np.ndarray,
    spec: PlateSpec,
    *,
    analog_rate: float,
    point_rate: float,
    len_scale: float,
    f_scale: float,
    cop_threshold: float = COP_THRESHOLD_N,
    channel_labels: list[str] | None = None,
) -> ForcePlate:
    """One :class:`ForcePlate` (analog rate and point rate) from the analog array (n_samples, n_channels)."""
    ch = analog[:, spec.channels]
    f_p, m_p = wrench_plate_frame(ch, spec)
    factor = max(1, int(round(analog_rate / point_rate)))
    at_analog = wrench_lab(f_p, m_p, spec, len_scale, f_scale, analog_rate, cop_threshold)
    fm = decimate(np.hstack([f_p, m_p]), factor)
    at_point = wrench_lab(fm[:, :3], fm[:, 3:], spec, len_scale, f_scale, analog_rate / factor, cop_threshold)
    labels = channel_labels or []
    return ForcePlate(
        index=spec.index,
        type=spec.type,
        corners=spec.corners * len_scale,
        origin=np.asarray(spec.origin, dtype=float) * len_scale,
        channels=[labels[i] if i < len(labels) else f"channel {i + 1}" for i in spec.channels],
        analog=at_analog,
        point=at_point,
    )


def plate_specs(fp: dict, n_analog_channels: int, where: str) -> list[PlateSpec]:
    """Parse the FORCE_PLATFORM group (``{name: value}``) into specs; errors name the plate and the problem.

    ``where`` is the file name used in error messages.
    """
    used = int(np.ravel(fp.get("USED", [0]))[0]) if np.size(fp.get("USED", [])) else 0
    if used <= 0:
        return []
    types = np.ravel(fp.get("TYPE", [])).astype(int)
    if len(types) < used:
        raise FileFormatError(f"FORCE_PLATFORM:TYPE has {len(types)} entries for USED={used} plates", where)
    corners = np.asarray(fp.get("CORNERS", []), dtype=float)
    origins = np.asarray(fp.get("ORIGIN", []), dtype=float)
    channel = np.asarray(fp.get("CHANNEL", []))
    cal = np.asarray(fp.get("CAL_MATRIX", []), dtype=float)
    poly = np.ravel(np.asarray(fp.get("FPCOPPOLY", []), dtype=float))
    for i, t in enumerate(types[:used]):  # type first: an unsupported plate is the clearest message
        if t in _UNSUPPORTED:
            raise UnsupportedError(f"force plate {i + 1} is {_UNSUPPORTED[t]}; gaitid reads plate types 1-4 only", where)
        if t not in SUPPORTED_TYPES:
            raise UnsupportedError(f"force plate {i + 1} has unknown FORCE_PLATFORM:TYPE {t}; gaitid reads types 1-4", where)
    specs = []
    for i in range(used):
        t = int(types[i])
        name = f"force plate {i + 1}"
        if corners.ndim == 2 and corners.shape == (3, 4):
            corners = corners[:, :, None]
        if corners.ndim != 3 or corners.shape[:2] != (3, 4) or corners.shape[2] <= i:
            raise FileFormatError(f"{name}: FORCE_PLATFORM:CORNERS holds no 3x4 corners for it", where)
        c = corners[:, :, i].T
        if origins.ndim == 1 and origins.size == 3:
            origins = origins[:, None]
        if origins.ndim != 2 or origins.shape[0] != 3 or origins.shape[1] <= i:
            raise FileFormatError(f"{name}: FORCE_PLATFORM:ORIGIN holds no origin for it", where)
        o = origins[:, i]
        n_ch = N_CHANNELS[t]
        if channel.ndim != 2 or channel.shape[0] < n_ch or channel.shape[1] <= i:
            raise FileFormatError(f"{name} (type {t}) needs {n_ch} channels in FORCE_PLATFORM:CHANNEL", where)
        chans = channel[:n_ch, i].astype(int) - 1
        bad = chans[(chans < 0) | (chans >= n_analog_channels)]
        if bad.size:
            raise FileFormatError(
                f"{name}: FORCE_PLATFORM:CHANNEL refers to analog channel {int(bad[0]) + 1}, "
                f"but the file has {n_analog_channels} analog channels",
                where,
            )
        if not np.all(np.isfinite(c)) or not np.all(np.isfinite(o)):
            raise FileFormatError(f"{name}: corners or origin are not finite numbers", where)
        rot_ok = np.linalg.norm(np.cross(c[0] - c[1], c[0] - c[3])) > 0
        if not rot_ok:
            raise FileFormatError(f"{name}: FORCE_PLATFORM:CORNERS are degenerate (no plate plane)", where)
        cal_i = None
        if t == 4:
            if cal.size == 0:
                cal_i = np.eye(6)  # Motion Analysis stores no matrix (ezc3d rule)
            elif cal.ndim == 3 and cal.shape[0] >= 6 and cal.shape[1] >= 6 and cal.shape[2] > i:
                cal_i = cal[:6, :6, i]
            else:
                raise FileFormatError(f"{name} (type 4): FORCE_PLATFORM:CAL_MATRIX holds no 6x6 matrix for it", where)
        poly_i = None
        if t == 3:
            poly_i = poly[12 * i : 12 * (i + 1)] if poly.size >= 12 * (i + 1) else np.zeros(12)
        specs.append(PlateSpec(i + 1, t, c, o, chans, cal_i, poly_i))
    return specs
