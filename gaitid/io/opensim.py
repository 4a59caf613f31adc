"""An OpenSim trial (TRC markers + GRF ``.mot`` + ExternalLoads XML) as a Z-up Trial, and back.

Frames: OpenSim ground is Y up; the trial is rotated by
:data:`gaitid.io.trc.Y_UP_TO_Z_UP` (x' = x, y' = -z, z' = y), recorded in
``Trial.lab_rotation``. Forces, points and torques of the GRF file get the same
rotation.

Time: the TRC Time column fixes ``first_frame`` (see :func:`gaitid.io.trc.read_trc`).
Each external force becomes a :class:`~gaitid.core.trial.ForcePlate` whose ``analog``
wrench is the GRF file on its own rate, cropped (or NaN-padded) to the trial:
analog sample ``j`` is at the time of the first frame plus ``j / rate``, as in
a C3D file, and there are ``factor = round(grf_rate / point_rate)`` samples per
frame. When the rates are not in an integer ratio, or the GRF clock is not on
that grid, the GRF is linearly interpolated onto it (and a warning says so).
The ``point`` wrench is then made as the C3D reader makes it
(:mod:`gaitid.io.forceplates`): the force and the moment about the lab origin are
averaged over the ``factor`` samples centred on each frame
(:func:`gaitid.io.forceplates.decimate`, the same function), and the COP (on the plane of the file's COP
height) and the free moment (vertical) are recomputed from the decimated wrench.

The plates: an OpenSim GRF file has no plate geometry, so each force is an
honest "virtual plate": ``type = 0`` (no C3D plate type), ``corners`` and
``origin`` NaN, ``channels`` the nine GRF column labels used. ``index`` is the
force's position in the ExternalLoads XML (1-based), or without an XML the
number in its column label (``ground_force4_v`` -> 4) or its position.
``PlateWrench.force`` is the force on the subject, ``cop`` its point of
application (NaN while |Fz| < ``cop_threshold`` N) and ``free_moment`` the
torque about that point (OpenSim's ``ground_torque``), all in the Z-up lab.
:func:`plate_sides` maps the XML's bodies (``calcn_r`` / ``calcn_l``) to
``Settings(plates=...)`` overrides.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np

from gaitid.core.errors import DataError, FileFormatError
from gaitid.core.trial import ForcePlate, PlateWrench, Subject, Trial
from gaitid.core.vocabulary import COP_THRESHOLD_N
from gaitid.io.forceplates import decimate
from gaitid.io.mot import (
    ExternalForce,
    Storage,
    find_external_forces,
    grid_start,
    parse_xml,
    read_external_loads,
    read_storage,
    uniform_rate,
    write_external_loads,
    write_mot,
)
from gaitid.io.trc import Y_UP_TO_Z_UP, read_trc_with_time, up_rotation

__all__ = [
    "read_opensim_trial",
    "grf_plates",
    "plate_sides",
    "read_scale_subject",
    "write_grf_mot",
]

_OFF_GRID = 0.02  # fraction of a GRF sample: clock offsets below this are rounding of printed times


def _forces_without_xml(table: Storage) -> list[ExternalForce]:
    found = find_external_forces(table)
    if not found:
        raise FileFormatError(
            "no ground-reaction-force columns (expected OpenSim names like ground_force_vx, ground_force_px, "
            "ground_torque_x); pass the ExternalLoads XML that maps them",
            table.path,
        )
    return [ExternalForce.from_table(table, force_id, "", force_id, point_id, torque_id)
            for force_id, point_id, torque_id in found]


def _plate_indices(forces: list[ExternalForce], from_xml: bool) -> list[int]:
    if not from_xml:
        numbers = []
        for f in forces:
            m = re.search(r"force(\d+)_v$", f.force_identifier)
            numbers.append(int(m.group(1)) if m else None)
        if None not in numbers and len(set(numbers)) == len(numbers):
            return numbers
    return list(range(1, len(forces) + 1))


def _to_grid(values: np.ndarray, t_src: np.ndarray, t_new: np.ndarray) -> np.ndarray:
    """Linear interpolation of (n, k) columns onto ``t_new``; NaN outside ``t_src``."""
    out = np.full((t_new.shape[0], values.shape[1]), np.nan)
    inside = (t_new >= t_src[0] - 1e-9) & (t_new <= t_src[-1] + 1e-9)
    for c in range(values.shape[1]):
        out[inside, c] = np.interp(t_new[inside], t_src, values[:, c])
    return out


def _on_analog_grid(
    data: np.ndarray, grf_time0: float, grf_rate: float, trial_time0: float, point_rate: float, n_frames: int,
    warnings: list[str], where: Path | None,
) -> tuple[np.ndarray, float, int]:
    """The GRF columns ``data`` (n, k) on the trial's analog grid: (values, analog rate, factor)."""
    ratio = grf_rate / point_rate
    factor = max(1, int(round(ratio)))
    analog_rate = point_rate * factor
    n_analog = n_frames * factor
    shift = (trial_time0 - grf_time0) * grf_rate  # trial start in GRF samples
    k0 = int(round(shift))
    if abs(ratio - factor) < 1e-6 * ratio and abs(shift - k0) < _OFF_GRID:
        out = np.full((n_analog, data.shape[1]), np.nan)
        src = np.arange(n_analog) + k0
        ok = (src >= 0) & (src < data.shape[0])
        out[ok] = data[src[ok]]
        return out, analog_rate, factor
    message = (
        f"{where}: GRF at {grf_rate:g} Hz starting {grf_time0:g} s is not on the {point_rate:g} Hz trial's sample grid; "
        f"linearly interpolated to {analog_rate:g} Hz"
    )
    if message not in warnings:
        warnings.append(message)
    t_src = grf_time0 + np.arange(data.shape[0]) / grf_rate
    t_new = trial_time0 + np.arange(n_analog) / analog_rate
    return _to_grid(data, t_src, t_new), analog_rate, factor


def _decimate_valid(x: np.ndarray, factor: int, n_frames: int) -> np.ndarray:
    """Centred block-mean decimation (samples around k*factor -> frame k) of the finite span of ``x`` (n_frames*factor, k)."""
    out = np.full((n_frames, x.shape[1]), np.nan)
    finite = np.isfinite(x).all(axis=1)
    if not finite.any():
        return out
    first, last = np.flatnonzero(finite)[[0, -1]]
    start = -(-first // factor) * factor  # first frame-aligned finite sample
    if start > last:
        return out
    seg = x[start : last + 1]
    if factor == 1:
        dec = seg
    elif np.isfinite(seg).all() and seg.shape[0] > 1:
        dec = decimate(seg, factor)
    else:
        dec = seg[::factor]
    k = start // factor
    dec = dec[: n_frames - k]
    out[k : k + dec.shape[0]] = dec
    return out


def _cop_from_wrench(force: np.ndarray, moment_o: np.ndarray, height: float, threshold: float):
    """COP on the plane z = ``height`` and the vertical free moment, from force and moment about the origin.

    ``M_O = cop × F + (0, 0, Tz)`` solved for cop_x, cop_y (the C3D plate relation, in the lab).
    """
    fx, fy, fz = force.T
    with np.errstate(divide="ignore", invalid="ignore"):
        px = (height * fx - moment_o[:, 1]) / fz
        py = (moment_o[:, 0] + height * fy) / fz
    cop = np.column_stack([px, py, np.full_like(px, height)])
    free = moment_o - np.cross(cop, force)
    free[:, :2] = 0.0
    unloaded = ~(np.abs(fz) >= threshold)
    cop[unloaded] = np.nan
    free[unloaded] = np.nan
    return cop, free


def grf_plates(
    forces: list[ExternalForce],
    *,
    point_rate: float,
    first_frame: int,
    n_frames: int,
    trial_time0: float | None = None,
    rotation: np.ndarray = Y_UP_TO_Z_UP,
    indices: list[int] | None = None,
    cop_threshold: float = COP_THRESHOLD_N,
    warnings: list[str] | None = None,
) -> list[ForcePlate]:
    """Virtual :class:`ForcePlate` objects (``type`` 0, no geometry) from OpenSim external forces.

    ``rotation``: file ground -> Z-up lab. ``trial_time0``: the time of the first
    frame (s, default ``(first_frame - 1) / point_rate``). See the module docstring
    for the analog grid, decimation and COP rules.
    """
    warnings = [] if warnings is None else warnings
    if not forces:
        return []
    source = forces[0].source
    grf_rate = uniform_rate(forces[0].time, path=source)
    t0 = (first_frame - 1) / point_rate if trial_time0 is None else trial_time0
    indices = indices or list(range(1, len(forces) + 1))
    plates = []
    for index, ext in zip(indices, forces):
        force = ext.force @ rotation.T
        point = ext.point @ rotation.T
        torque = ext.torque @ rotation.T
        loaded = np.abs(force[:, 2]) >= cop_threshold
        if np.isfinite(point).all() and loaded.any():
            height = float(np.median(point[loaded, 2]))
        else:
            height = 0.0
        if loaded.any() and np.nanmax(np.abs(point[loaded])) > 20.0:
            warnings.append(f"{source}: force '{ext.name}' has points over 20 m from the origin: are they in mm, not m?")
        # moment about the lab origin; where the point is undefined the force is ~0: use the origin
        moment_o = np.cross(np.where(np.isfinite(point), point, 0.0), force) + torque
        raw = np.hstack([force, point, torque, moment_o])
        grid, analog_rate, factor = _on_analog_grid(
            raw, grid_start(ext.time, grf_rate), grf_rate, t0, point_rate, n_frames, warnings, source
        )
        a_force, a_point, a_torque = grid[:, 0:3], grid[:, 3:6].copy(), grid[:, 6:9].copy()
        a_unloaded = ~(np.abs(a_force[:, 2]) >= cop_threshold)
        a_point[a_unloaded] = np.nan
        a_torque[a_unloaded] = np.nan
        analog = PlateWrench(rate=analog_rate, force=a_force, cop=a_point, free_moment=a_torque)
        dec = _decimate_valid(np.hstack([grid[:, 0:3], grid[:, 9:12]]), factor, n_frames)
        p_cop, p_free = _cop_from_wrench(dec[:, 0:3], dec[:, 3:6], height, cop_threshold)
        point_w = PlateWrench(rate=float(point_rate), force=dec[:, 0:3], cop=p_cop, free_moment=p_free)
        plates.append(
            ForcePlate(
                index=index,
                type=0,
                corners=np.full((4, 3), np.nan),
                origin=np.full(3, np.nan),
                channels=ext.columns,
                analog=analog,
                point=point_w,
            )
        )
    return plates


def read_scale_subject(setup_scale_xml: str | Path) -> Subject:
    """Mass (kg), height (m) and name from an OpenSim ScaleTool setup (``<mass>``, ``<height>`` in mm).

    OpenSim writes -1 for an unknown height or age: those become None.
    """
    path = Path(setup_scale_xml)
    root = parse_xml(path)
    tool = root if root.tag == "ScaleTool" else root.find(".//ScaleTool")
    if tool is None:
        raise FileFormatError("no <ScaleTool> element: not an OpenSim scale setup", path)

    def number(tag: str) -> float | None:
        text = tool.findtext(tag)
        if text is None or not text.strip():
            return None
        try:
            value = float(text)
        except ValueError:
            raise FileFormatError(f"<{tag}> {text.strip()!r} is not a number", path) from None
        return value if value > 0 else None

    mass, height, age = number("mass"), number("height"), number("age")
    if mass is None:
        raise FileFormatError("the ScaleTool has no positive <mass>", path)
    return Subject(
        name=tool.get("name") or None,
        mass=mass,
        height=None if height is None else height / 1000.0,
        extra={} if age is None else {"age": age},
    )


def plate_sides(external_loads_xml: str | Path, grf_mot: str | Path | None = None) -> dict[int, str]:
    """``{plate index: 'left' | 'right'}`` from the XML's bodies (``*_r`` right, ``*_l`` left),
    ready for ``Settings(plates=...)``; bodies of neither side are left out."""
    sides = {}
    for index, ext in enumerate(read_external_loads(external_loads_xml, grf_mot), start=1):
        body = ext.body.lower()
        if body.endswith("_r") or body.startswith("r_") or "right" in body:
            sides[index] = "right"
        elif body.endswith("_l") or body.startswith("l_") or "left" in body:
            sides[index] = "left"
    return sides


def read_opensim_trial(
    trc: str | Path,
    grf_mot: str | Path | None = None,
    external_loads_xml: str | Path | None = None,
    *,
    mass: float | None = None,
    subject: Subject | None = None,
    up: str = "y",
    cop_threshold: float = COP_THRESHOLD_N,
) -> Trial:
    """Markers from ``trc`` and plates from the GRF file, as one Z-up :class:`Trial` in SI.

    ``external_loads_xml`` maps GRF columns to bodies (its ``<datafile>`` is used when
    ``grf_mot`` is None); without it the OpenSim column names are recognised
    (:func:`gaitid.io.mot.find_external_forces`). ``mass`` (kg) goes to
    ``trial.subject.mass`` (TRC and MOT files do not store it); or ``subject``, e.g.
    from :func:`read_scale_subject` (``mass`` overrides its mass). ``up``: the files'
    vertical axis ('y' for OpenSim).
    """
    trial, trial_time0 = read_trc_with_time(trc, up=up)
    if subject is not None:
        trial = dataclasses.replace(trial, subject=subject)
    if mass is not None:
        if not (np.isfinite(mass) and mass > 0):
            raise DataError(f"body mass {mass!r} kg must be a positive number", trc)
        trial = dataclasses.replace(trial, subject=dataclasses.replace(trial.subject, mass=float(mass)))
    if grf_mot is None and external_loads_xml is None:
        return trial
    if grf_mot is not None and Path(grf_mot).suffix.lower() == ".xml" and external_loads_xml is None:
        raise FileFormatError("this is an XML file: pass it as external_loads_xml, the GRF .mot as grf_mot", grf_mot)
    if external_loads_xml is not None:
        forces = read_external_loads(external_loads_xml, grf_mot, warnings=trial.warnings)
        indices = _plate_indices(forces, from_xml=True)
    else:
        table = read_storage(grf_mot)
        trial.warnings.extend(table.warnings)
        forces = _forces_without_xml(table)
        indices = _plate_indices(forces, from_xml=False)
    rotation = up_rotation(up)
    trial = dataclasses.replace(trial, force_plates=grf_plates(
        forces,
        point_rate=trial.point_rate,
        first_frame=trial.first_frame,
        n_frames=trial.n_frames,
        trial_time0=trial_time0,
        rotation=rotation,
        indices=indices,
        cop_threshold=cop_threshold,
        warnings=trial.warnings,
    ))
    grf_t = forces[0].time
    t_end = trial_time0 + (trial.n_frames - 1) / trial.point_rate
    if grf_t[0] > trial_time0 + 0.5 / trial.point_rate or grf_t[-1] < t_end - 0.5 / trial.point_rate:
        trial.warnings.append(
            f"{forces[0].source}: GRF covers {grf_t[0]:g}-{grf_t[-1]:g} s, markers {trial_time0:g}-{t_end:g} s; "
            "plate samples outside the GRF are NaN"
        )
    if grf_t[-1] < trial_time0 or grf_t[0] > t_end:
        raise DataError(f"the GRF file ({grf_t[0]:g}-{grf_t[-1]:g} s) does not overlap the markers ({trc})", forces[0].source)
    return trial


def write_grf_mot(
    trial: Trial,
    path: str | Path,
    *,
    xml_path: str | Path | None = None,
    bodies: dict[int, str] | None = None,
    rate: str = "analog",
    up: str = "y",
    inputs: tuple[str | Path, ...] = (),
) -> Path:
    """Write the trial's plate wrenches as an OpenSim GRF ``.mot`` (and an ExternalLoads XML).

    Columns per plate ``k``: ``ground_force{k}_v[xyz]`` (N, on the subject),
    ``ground_force{k}_p[xyz]`` (m), ``ground_torque{k}_[xyz]`` (N.m about the point), in
    OpenSim's Y-up ground when ``up='y'``. ``rate``: 'analog' or 'point' wrenches.
    OpenSim cannot read NaN. Where the COP is undefined (the force below the COP threshold:
    no load) the file holds what OpenSim's own GRF files hold there: force and torque 0 and
    the COP held at the plate's nearest defined COP (the plate centre when it has none, 0
    when unknown), so a few newtons never act at an arbitrary point; reading the file back
    gives NaN again. ``xml_path`` with ``bodies``
    ({plate index: body name}, e.g. ``{1: 'calcn_r'}``) also writes the XML mapping.
    """
    if not trial.force_plates:
        raise DataError("the trial has no force plates to write", trial.path)
    if rate not in ("analog", "point"):
        raise DataError(f"rate={rate!r}: must be 'analog' or 'point'")
    rotation = up_rotation(up)
    labels, columns, ids = [], [], []
    wrenches = [getattr(p, rate) for p in trial.force_plates]
    n = min(w.n_samples for w in wrenches)
    w_rate = wrenches[0].rate
    if any(abs(w.rate - w_rate) > 1e-9 * w_rate for w in wrenches):
        raise DataError("plates sampled at different rates cannot share one GRF file", trial.path)
    for plate, w in zip(trial.force_plates, wrenches):
        k = plate.index
        centre = plate.centre if np.isfinite(plate.corners).all() else np.zeros(3)
        loaded = np.isfinite(w.cop[:n]).all(axis=1)
        cop = w.cop[:n][_nearest(loaded)] if loaded.any() else np.broadcast_to(centre, (n, 3))
        force = np.where(loaded[:, None], w.force[:n], 0.0)
        free = np.where(loaded[:, None] & np.isfinite(w.free_moment[:n]), w.free_moment[:n], 0.0)
        fid, pid, tid = f"ground_force{k}_v", f"ground_force{k}_p", f"ground_torque{k}_"
        for ident, vec in ((fid, force), (pid, cop), (tid, free)):
            labels += [ident + a for a in "xyz"]
            columns.append(vec @ rotation)  # row vectors: v_file = R.T v_lab
        ids.append((k, fid, pid, tid))
    time = (trial.first_frame - 1) / trial.point_rate + np.arange(n) / w_rate
    own = (trial.path,) if trial.path is not None else ()
    path = write_mot(
        path, labels, time, np.hstack(columns), name=Path(path).name, in_degrees=False,
        inputs=tuple(inputs) + own,
    )
    if xml_path is not None:
        bodies = bodies or {}
        missing = [k for k, *_ in ids if k not in bodies]
        if missing:
            raise DataError(f"no body given for plates {missing} (bodies={{plate index: body name}})")
        write_external_loads(
            xml_path,
            [(bodies[k], fid, pid, tid) for k, fid, pid, tid in ids],
            datafile=Path(path).name if Path(xml_path).parent.resolve() == Path(path).parent.resolve() else str(Path(path).resolve()),
            inputs=tuple(inputs) + own,
        )
    return path


def _nearest(valid: np.ndarray) -> np.ndarray:
    """For each sample, the index of the last ``valid`` one at or before it (the first valid one
    before any): a held value (``valid`` has at least one True)."""
    idx = np.maximum.accumulate(np.where(valid, np.arange(valid.size), -1))
    return np.where(idx < 0, int(np.argmax(valid)), idx)
