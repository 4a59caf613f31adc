"""Force-plate wrenches from the analog channels, vectorised over samples (C3D types 1-7).

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

Length: the seven plate types' channel equations side by side, sharing one resampling path.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gaitid.core.errors import FileFormatError, UnsupportedError
from gaitid.core.rotation import cross
from gaitid.core.trial import ForcePlate, PlateWrench
from gaitid.core.vocabulary import COP_THRESHOLD_N

SUPPORTED_TYPES = (1, 2, 3, 4, 5, 6, 7)
_UNSUPPORTED = {
    11: "type 11 (Kistler split-belt treadmill: 8 channels, calibration matrix, COP polynomial, translation and rotation)",
    12: "type 12 (Gaitway instrumented treadmill: 8 vertical channels)",
    21: "type 21 (AMTI stairs: two 6-channel plates and step corners)",
}
N_CHANNELS = {1: 6, 2: 6, 3: 8, 4: 6, 5: 8, 6: 12, 7: 8}
CAL_SHAPE = {4: (6, 6), 5: (6, 8), 6: (12, 12), 7: (8, 8)}  # rows x columns: outputs x channels
_SENSOR_PLATES = (3, 6, 7)  # ORIGIN = (a, b, az0): sensors at (+-a, +-b), surface at az0

# offsets (FORCE_PLATFORM:ZERO, unloaded baseline)
UNLOADED_MAX_N = 50.0  # a stretch reading less than this vertical force can be "unloaded"
QUIET_SD_N = 3.0  # ... when its vertical force varies less than this (SD over QUIET_WINDOW_S)
QUIET_WINDOW_S = 0.1
BASELINE_MIN_N = 10.0  # an unloaded baseline this large (|Fz|) is subtracted

_LENGTH_TO_M = {"mm": 1e-3, "cm": 1e-2, "m": 1.0, "dm": 0.1, "in": 0.0254, "inch": 0.0254}
LENGTH_UNITS = frozenset(_LENGTH_TO_M)
_FORCE_TO_N = {"n": 1.0, "nt": 1.0, "newton": 1.0, "kn": 1e3, "lbf": 4.4482216152605, "lb": 4.4482216152605}


def length_scale(unit: str) -> float:
    """Metres per ``unit`` (POINT:UNITS); unknown or empty units are taken as mm with no error."""
    return _LENGTH_TO_M.get(unit.strip().lower(), 1e-3)


def force_scale(unit: str) -> float:
    """Newtons per ``unit`` (FORCE_PLATFORM:UNITS); N when unknown."""
    return _FORCE_TO_N.get(unit.strip().lower(), 1.0)


def channel_units(plate_type: int, force_unit: str, length_unit: str) -> tuple[str, ...]:
    """The unit each channel of a plate of ``plate_type`` is read in (FORCE_PLATFORM:CHANNEL order):
    forces in ``force_unit`` (FORCE_PLATFORM:UNITS, N when unknown), moments in that unit times
    ``length_unit`` (POINT:UNITS, mm when unknown), type 1's COP in ``length_unit``; '' for the raw
    channels of types 4-7, which only their CAL_MATRIX turns into forces and moments."""
    f = force_unit.strip() if force_unit.strip().lower() in _FORCE_TO_N else "N"
    length = length_unit.strip() if length_unit.strip().lower() in _LENGTH_TO_M else "mm"
    moment = f"{f}.{length}"
    roles = {1: (f, f, f, length, length, moment), 2: (f, f, f, moment, moment, moment), 3: (f,) * 8}
    return roles.get(plate_type, ("",) * N_CHANNELS[plate_type])


@dataclass
class PlateSpec:
    """One FORCE_PLATFORM entry, in file units (lengths in POINT:UNITS)."""

    index: int  # 1-based
    type: int
    corners: np.ndarray  # (4, 3) lab, file length unit
    origin: np.ndarray  # (3,) plate frame, file length unit, as stored
    channels: np.ndarray  # (n_ch,) 0-based analog columns
    cal_matrix: np.ndarray | None  # CAL_SHAPE[type] for types 4-7
    cop_poly: np.ndarray | None  # (12,) Kistler COP correction (FPCOPPOLY: Px1..Px6, Py1..Py6) for types 3 and 7


def plate_frame(corners: np.ndarray) -> np.ndarray:
    """``R_plate`` (3, 3): columns are the plate axes in the lab (C3D spec / ezc3d corner rule)."""
    x = corners[0] - corners[1]
    y = corners[0] - corners[3]
    z = cross(x, y)
    y = cross(z, x)
    return np.column_stack([x / np.linalg.norm(x), y / np.linalg.norm(y), z / np.linalg.norm(z)])


def effective_origin(spec: PlateSpec) -> np.ndarray:
    """Origin used in the maths: type 1 keeps only Z; a positive Z (the surface lies on the plate's
    -Z side) is flipped: the whole vector for types 1, 2, 4, 5 (ezc3d rule), only Z for the
    sensor-layout types 3, 6, 7, whose X and Y are the sensor half-spacings a and b."""
    o = np.array(spec.origin, dtype=float)
    if spec.type == 1:
        o[:2] = 0.0
    if o[2] > 0:
        if spec.type in _SENSOR_PLATES:
            o[2] = -o[2]
        else:
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
        m = cross(cop, f) + tz
        return f, m
    if t in (3, 7):  # Kistler: fx12 fx34 fy14 fy23 fz1 fz2 fz3 fz4 (type 7 through its 8x8 CAL_MATRIX)
        if t == 7:
            ch = ch[:, 0:8] @ spec.cal_matrix.T
        f = np.column_stack([ch[:, 0] + ch[:, 1], ch[:, 2] + ch[:, 3], ch[:, 4:8].sum(axis=1)])
        m = np.column_stack(
            [
                o[1] * (ch[:, 4] + ch[:, 5] - ch[:, 6] - ch[:, 7]),
                o[0] * (ch[:, 5] + ch[:, 6] - ch[:, 4] - ch[:, 7]),
                o[1] * (ch[:, 1] - ch[:, 0]) + o[0] * (ch[:, 2] - ch[:, 3]),
            ]
        )
        m = m + cross(f, np.array([0.0, 0.0, o[2]]))
        return f, m
    if t == 6:  # fx1 fy1 fz1 ... fx4 fy4 fz4 through the 12x12 CAL_MATRIX; sensor k at (+a+b, -a+b, -a-b, +a-b)
        s = (ch[:, 0:12] @ spec.cal_matrix.T).reshape(len(ch), 4, 3)  # (n, sensor, xyz)
        f = s.sum(axis=1)
        fx, fy, fz = s[:, :, 0], s[:, :, 1], s[:, :, 2]
        m = np.column_stack(
            [
                o[1] * (fz[:, 0] + fz[:, 1] - fz[:, 2] - fz[:, 3]),
                o[0] * (fz[:, 1] + fz[:, 2] - fz[:, 0] - fz[:, 3]),
                o[1] * (fx[:, 2] + fx[:, 3] - fx[:, 0] - fx[:, 1]) + o[0] * (fy[:, 0] + fy[:, 3] - fy[:, 1] - fy[:, 2]),
            ]
        )
        return f, m + cross(f, np.array([0.0, 0.0, o[2]]))
    # types 2, 4, 5: Fx Fy Fz Mx My Mz about the sensor origin (type 4: 6x6 CAL_MATRIX of 6
    # channels; type 5: 6x8 CAL_MATRIX of the 8 channels Cz Dz Az Bz Yac Xdc Xab Ybd)
    data = ch[:, 0:6]
    if t == 4:
        data = data @ spec.cal_matrix.T
    elif t == 5:
        data = ch[:, 0:8] @ spec.cal_matrix.T
    f = data[:, 0:3]
    m = data[:, 3:6] + cross(f, o)
    return f, m


def cop_free_moment_plate(
    f: np.ndarray, m: np.ndarray, spec: PlateSpec, len_scale: float = 1e-3
) -> tuple[np.ndarray, np.ndarray]:
    """COP (about the surface centre) and free moment ``M + F × cop``, plate frame, file units.

    Kistler plates (types 3 and 7) with FPCOPPOLY get Kistler's COP correction
    ``x -= (Px1 y^4 + Px2 y^2 + Px3) x^3 + (Px4 y^4 + Px5 y^2 + Px6) x`` (and the same
    for y with Py, x and y swapped), x and y in mm as Kistler's coefficients are
    (``len_scale``: metres per file length unit); the free moment is then the normal component
    of ``M + F x cop`` at the corrected COP (ezc3d keeps the in-plane residue as well).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        cop = np.column_stack([-m[:, 1] / f[:, 2], m[:, 0] / f[:, 2], np.zeros(len(f))])
    if spec.type in (3, 7) and spec.cop_poly is not None and np.any(spec.cop_poly):
        p = spec.cop_poly
        to_mm = len_scale * 1e3
        x, y = cop[:, 0] * to_mm, cop[:, 1] * to_mm
        with np.errstate(over="ignore", invalid="ignore"):
            dx = (p[0] * y**4 + p[1] * y**2 + p[2]) * x**3 + (p[3] * y**4 + p[4] * y**2 + p[5]) * x
            dy = (p[6] * x**4 + p[7] * x**2 + p[8]) * y**3 + (p[9] * x**4 + p[10] * x**2 + p[11]) * y
        cop[:, 0] -= dx / to_mm
        cop[:, 1] -= dy / to_mm
        tz = m + cross(f, cop)
        tz[:, :2] = 0.0  # the corrected wrench: F at the corrected COP and a moment about the normal only
        return cop, tz
    tz = m + cross(f, cop)
    return cop, tz


def wrench_lab(
    f_p: np.ndarray, m_p: np.ndarray, spec: PlateSpec, len_scale: float, f_scale: float, rate: float, cop_threshold: float
) -> PlateWrench:
    """Plate-frame wrench (file units) -> :class:`PlateWrench` in the lab, SI; COP NaN below the threshold."""
    rot = plate_frame(spec.corners)
    centre = spec.corners.mean(axis=0)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):  # unloaded samples: NaN/inf, masked below
        cop_p, tz_p = cop_free_moment_plate(f_p, m_p, spec, len_scale)
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
    n_out, half = -(-x.shape[0] // factor), factor // 2
    # sample k * factor + j of the edge-padded signal is the j-th of frame k's window
    padded = np.pad(x, [(half, n_out * factor + 1 - x.shape[0])] + [(0, 0)] * (x.ndim - 1), mode="edge")
    blocks = padded[: n_out * factor].reshape((n_out, factor) + x.shape[1:]).sum(axis=1)
    if factor % 2 == 0:  # the window's two end samples at half weight
        blocks += 0.5 * (padded[factor::factor][:n_out] - padded[: n_out * factor: factor])
    return blocks / factor


def _vertical_n(ch: np.ndarray, spec: PlateSpec, f_scale: float) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore"):
        return wrench_plate_frame(ch, spec)[0][:, 2] * f_scale


def plate_offsets(
    ch: np.ndarray, spec: PlateSpec, *, f_scale: float, analog_rate: float, samples_per_frame: int,
    zero_frames: tuple[int, int] | None, negative_baseline: bool = False,
) -> tuple[np.ndarray, str]:
    """Per-channel offsets to subtract from the plate's channels (file units, CHANNEL order), and what
    was done (empty when nothing).

    1. FORCE_PLATFORM:ZERO ``(first, last)`` (1-based point frames of the stored data; ``(0, 0)``
       or ``first > last`` means none): the channels' mean over those frames, provided the plate
       is unloaded there (|Fz| < :data:`UNLOADED_MAX_N` throughout); a loaded range is not used.
    2. Unloaded baseline, decided from the data: windows of :data:`QUIET_WINDOW_S` whose vertical
       force is quiet (SD < :data:`QUIET_SD_N`) and low (|mean| < :data:`UNLOADED_MAX_N`); when the
       channels' mean over them still reads |Fz| >= :data:`BASELINE_MIN_N`, it is subtracted. A plate
       loaded all trial long (a subject standing, a treadmill) has no such window and is not moved.
    Type-1 COP channels are never offset. Channels with NaN samples use the finite ones.
    """
    n = len(ch)
    offset = np.zeros(ch.shape[1])
    zeroable = np.ones(ch.shape[1], dtype=bool)
    if spec.type == 1:
        zeroable[[3, 4]] = False
    notes = []
    full = _vertical_n(ch, spec, f_scale)
    peak = int(np.nanargmax(np.abs(full))) if np.isfinite(full).any() else 0
    # the sign of a load on this plate (plate Z points into the plate in C3D, so usually -1)
    load_sign = float(np.sign(full[peak])) if np.isfinite(full).any() and abs(full[peak]) >= UNLOADED_MAX_N else -1.0
    if zero_frames is not None:
        first, last = zero_frames
        if 1 <= first <= last and (first - 1) * samples_per_frame < n:
            seg = ch[(first - 1) * samples_per_frame : last * samples_per_frame]
            fz = _vertical_n(seg, spec, f_scale)
            fz = fz[np.isfinite(fz)]
            if fz.size and np.abs(fz).max() < UNLOADED_MAX_N:
                with np.errstate(invalid="ignore"):
                    offset = np.where(zeroable, np.nan_to_num(np.nanmean(seg, axis=0)), 0.0)
                notes.append(f"FORCE_PLATFORM:ZERO frames {first}-{min(last, -(-n // samples_per_frame))} "
                             f"subtracted (the plate read {load_sign * np.mean(fz):+.1f} N there)")
            elif fz.size:
                notes.append(f"FORCE_PLATFORM:ZERO frames {first}-{last} not used: the plate is loaded there "
                             f"(up to {np.abs(fz).max():.0f} N)")
    w = max(10, int(round(QUIET_WINDOW_S * analog_rate)))
    n_w = n // w
    if n_w:
        # linear in the channels: Fz(ch - offset) = Fz(ch) - Fz(offset)
        fz = (full[: n_w * w] - _vertical_n(offset[None, :], spec, f_scale)[0]).reshape(n_w, w)
        with np.errstate(invalid="ignore"):
            mean, sd = fz.mean(axis=1), fz.std(axis=1)
        quiet = (sd < QUIET_SD_N) & (np.abs(mean) < UNLOADED_MAX_N)
        if quiet.any():
            level = float(np.mean(mean[quiet]))
            reading = load_sign * level  # what the unloaded plate reads, + towards a load
            found = f"{quiet.sum() * w / analog_rate:.2f} s of quiet low readings out of {n / analog_rate:.2f} s"
            if reading >= BASELINE_MIN_N or (negative_baseline and reading <= -BASELINE_MIN_N):
                rows = ch[: n_w * w].reshape(n_w, w, -1)[quiet].reshape(-1, ch.shape[1])
                with np.errstate(invalid="ignore"):
                    extra = np.where(zeroable, np.nan_to_num(np.nanmean(rows, axis=0) - offset), 0.0)
                offset = offset + extra
                notes.append(f"unloaded baseline of {reading:+.1f} N subtracted (found in {found})")
            elif reading <= -BASELINE_MIN_N:
                notes.append(f"reads {reading:+.1f} N unloaded ({found}); a negative baseline is left as stored")
    return offset, "; ".join(notes)


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
    zero_frames: tuple[int, int] | None = None,
    offsets: bool | str = True,
) -> ForcePlate:
    """One :class:`ForcePlate` (analog rate and point rate) from the analog array (n_samples, n_channels).

    ``offsets``: subtract FORCE_PLATFORM:ZERO (``zero_frames``) and an unloaded baseline
    (:func:`plate_offsets`; ``'all'``: negative baselines too); what was subtracted is in
    ``ForcePlate.offset`` / ``offset_note``.
    """
    ch = analog[:, spec.channels]
    factor = max(1, int(round(analog_rate / point_rate)))
    offset, note = np.zeros(ch.shape[1]), ""
    if offsets:
        offset, note = plate_offsets(ch, spec, f_scale=f_scale, analog_rate=analog_rate,
                                     samples_per_frame=factor, zero_frames=zero_frames,
                                     negative_baseline=offsets == "all")
        if offset.any():
            ch = ch - offset
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
        offset=offset,
        offset_note=note,
    )


def _goes_round(c: np.ndarray) -> bool:
    """Whether corners (4, 3), taken in order, outline their quadrilateral (a crossed 'bow tie' order
    encloses a small net area: its two triangles' areas cancel)."""
    net = 0.5 * np.linalg.norm(sum(cross(c[k], c[(k + 1) % 4]) for k in range(4)))
    spanned = 0.5 * (np.linalg.norm(cross(c[1] - c[0], c[3] - c[0])) + np.linalg.norm(cross(c[1] - c[2], c[3] - c[2])))
    return bool(net > 0.5 * spanned)


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
    poly = np.ravel(np.asarray(fp.get("FPCOPPOLY", []), dtype=float), order="F")  # 12 per plate, as stored
    for i, t in enumerate(types[:used]):  # type first: an unsupported plate is the clearest message
        if t in _UNSUPPORTED:
            raise UnsupportedError(f"force plate {i + 1} is {_UNSUPPORTED[t]}, which gaitid does not read; "
                                   "it reads the C3D plate types 1-7", where)
        if t not in SUPPORTED_TYPES:
            raise UnsupportedError(f"force plate {i + 1} has FORCE_PLATFORM:TYPE {t}, not a C3D plate type "
                                   "gaitid reads (types 1-7)", where)
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
        rot_ok = np.linalg.norm(cross(c[0] - c[1], c[0] - c[3])) > 0
        if not rot_ok:
            raise FileFormatError(f"{name}: FORCE_PLATFORM:CORNERS are degenerate (no plate plane)", where)
        if not _goes_round(c):
            raise FileFormatError(f"{name}: FORCE_PLATFORM:CORNERS do not go round the plate (taken in their order, "
                                  "the edges cross: two corners are swapped); the C3D order is +x+y, -x+y, -x-y, "
                                  "+x-y in the plate's axes: correct the corners in the file", where)
        cal_i = None
        if t in CAL_SHAPE:
            rows, cols = CAL_SHAPE[t]
            if cal.ndim == 2:
                cal = cal[:, :, None]
            if t == 4 and cal.size == 0:
                cal_i = np.eye(6)  # Motion Analysis stores no matrix (ezc3d rule)
            elif cal.ndim == 3 and cal.shape[0] >= rows and cal.shape[1] >= cols and cal.shape[2] > i:
                cal_i = cal[:rows, :cols, i]
            else:
                raise FileFormatError(f"{name} (type {t}): FORCE_PLATFORM:CAL_MATRIX holds no {rows}x{cols} "
                                      f"matrix for it (dimensions {list(cal.shape)})", where)
            if not np.all(np.isfinite(cal_i)):
                raise FileFormatError(f"{name} (type {t}): FORCE_PLATFORM:CAL_MATRIX is not finite", where)
        poly_i = None
        if t in (3, 7):
            poly_i = poly[12 * i : 12 * (i + 1)] if poly.size >= 12 * (i + 1) else np.zeros(12)
            if not np.all(np.isfinite(poly_i)):
                raise FileFormatError(f"{name} (type {t}): FORCE_PLATFORM:FPCOPPOLY is not finite", where)
        specs.append(PlateSpec(i + 1, t, c, o, chans, cal_i, poly_i))
    return specs
