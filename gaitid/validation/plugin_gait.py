"""Agreement with Vicon Plug-in Gait's own kinetics stored in C3D files.

:func:`validate` runs gaitid with the settings that mirror Plug-in Gait
(``Settings.plugin_gait(marker_cutoff_hz=None)``: distal frame, external description, Plug-in
Gait's BSIP table, unfiltered plates, the file's trajectories as stored, since Plug-in Gait uses
them as the capture pipeline filtered them) on every C3D that carries Plug-in Gait outputs, in
two modes:

- ``pig-segments``: the segment frames and joint centres Plug-in Gait wrote in the file
  (``models/plugin-gait-segments.toml``): isolates the solver, the parameters and the plates;
- ``markers``: gaitid's own Plug-in Gait model from the raw markers
  (``models/plugin-gait.toml``), with the file's own static trial when there is one: the static
  of the same subject beside it (:func:`gaitid.batch.pairing.pair_static`; none for a trial whose
  subject no static matches).

It compares, per side, joint and plane, like with like: over the frames where Plug-in Gait
computed the moment (finite, non-zero) with the foot loaded (its vertical GRF for that side above
the contact threshold, 20 N; without a stored GRF: the frames gaitid puts on a valid plate) and
where gaitid, too, has the foot's load wholly measured (state 'plate', :mod:`gaitid.contacts.foot_loads`). A contact gaitid
rejects but Plug-in Gait computed is re-run with the plate assigned (noted in the records).
Metrics: RMS difference, Pearson r, peak difference and peak time shift (:func:`compare`), and
RMS / r after low-passing both curves at 6 Hz over the same span (the runs of at least 16 frames
where both curves are computed) (``rms_6hz``, ``r_6hz``: the band-limited comparison, blind to high-frequency
noise in either curve and to a one-frame restart in one of them).

``static`` (a path, or 'auto' for the pairing by content), ``plates`` (plate overrides, as
``gaitid run --plates``) and the subject options apply as in ``gaitid run``.

Moments in N.m/kg (Plug-in Gait stores N.mm/kg; the reader converts), powers in W/kg,
angles in degrees. Output names may carry a suffix (``LAnkleMoment_M``); the exact name wins.
A file (or one mode of it) that cannot be compared is listed with the reason. Method and
figures: docs/validation.md.
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Iterable

import numpy as np

from gaitid.core.errors import GaitIDError
from gaitid.core.settings import Settings

MODES = {"pig-segments": "plugin-gait-segments", "markers": "plugin-gait"}
PLANES = ("sagittal", "frontal", "transverse")
JOINTS = ("ankle", "knee", "hip")
SIDES = {"left": "L", "right": "R"}
MIN_RUN = 5  # frames: shorter stance runs are ignored as plate-edge flicker
BAND_HZ = 6.0  # the band-limited comparison low-passes both curves at this cutoff
QUANTITIES = {  # gaitid variable suffix, Plug-in Gait output suffix, unit, components compared
    "moment": ("Moment", "Moment", "N.m/kg", (0, 1, 2)),
    "power": ("Power", "Power", "W/kg", (2,)),
    "angle": ("Angles", "Angles", "deg", (0, 1, 2)),
}


def find_output(labels: Iterable[str], name: str) -> str | None:
    """The stored label for a Plug-in Gait output ``name`` (``LAnkleMoment``), allowing a
    suffix (``LAnkleMoment_M``, ``LAnkleAnglesV``); the exact name first."""
    labels = list(labels)
    if name in labels:
        return name
    pattern = re.compile(re.escape(name) + r"[_\-.]?[A-Za-z0-9]{1,8}$")
    hits = sorted(lab for lab in labels if pattern.fullmatch(lab))
    return hits[0] if hits else None


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """[start, stop) index pairs of the True runs of a boolean array."""
    d = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(d == 1), np.flatnonzero(d == -1)))


def compare(ours: np.ndarray, ref: np.ndarray, mask: np.ndarray, rate: float) -> dict:
    """Metrics of ``ours`` against ``ref`` (1-D, same frames) over ``mask``'s runs.

    rms: sqrt(mean((ours - ref)^2)); r: Pearson; peak_diff: at the stance run whose reference
    peak (largest |ref|) is largest, our extreme of the same sign minus the reference peak;
    peak_shift_ms: the largest |shift| over runs between those two extremes (+: ours later).
    """
    ok = mask & np.isfinite(ours) & np.isfinite(ref)
    runs = [(a, b) for a, b in _runs(ok) if b - a >= MIN_RUN]
    idx = np.concatenate([np.arange(a, b) for a, b in runs]) if runs else np.array([], int)
    out = {"n_frames": int(idx.size), "n_cycles": len(runs), "rms": math.nan, "r": math.nan,
           "peak_diff": math.nan, "peak_shift_ms": math.nan}
    if idx.size < MIN_RUN:
        return out
    d = ours[idx] - ref[idx]
    out["rms"] = float(np.sqrt(np.mean(d**2)))
    if np.std(ours[idx]) > 0 and np.std(ref[idx]) > 0:
        out["r"] = float(np.corrcoef(ours[idx], ref[idx])[0, 1])
    best, shift = None, 0.0
    for a, b in runs:
        i = a + int(np.argmax(np.abs(ref[a:b])))
        j = a + int(np.argmax(ours[a:b] * np.sign(ref[i]) if ref[i] != 0 else np.abs(ours[a:b])))
        if best is None or abs(ref[i]) > abs(best[1]):
            best = (ours[j], ref[i])
        s = (j - i) / rate * 1000.0
        shift = s if abs(s) > abs(shift) else shift
    out["peak_diff"] = float(best[0] - best[1])
    out["peak_shift_ms"] = float(shift)
    return out


BAND_MIN_RUN = 16  # frames: the band-limited metric uses only runs this long (the filter's support)


def lowpass_runs(x: np.ndarray, rate: float, cutoff_hz: float = BAND_HZ, order: int = 4,
                 span: np.ndarray | None = None) -> np.ndarray:
    """``x`` (1-D) low-pass filtered (zero-lag Butterworth) over each run of at least 16 frames
    of ``span``. Without ``span``: its finite, non-zero runs, other frames unchanged. With
    ``span``: NaN outside its filtered runs; give both curves of a comparison the same ``span`` so
    that both are filtered over the same frames (a one-frame gap or restart in one curve then
    cannot put filter edges into the other)."""
    from gaitid.core import signal
    x = np.asarray(x, float)
    out = np.array(x, float) if span is None else np.full(x.shape, np.nan)
    span = (np.isfinite(x) & (x != 0)) if span is None else (np.asarray(span, bool) & np.isfinite(x))
    for a, b in _runs(span):
        if b - a >= BAND_MIN_RUN:
            out[a:b] = signal.butter_lowpass(x[a:b, None], rate, cutoff_hz, order)[:, 0]
    return out


def _mass_from_grf(trial, result_loads) -> float | None:
    """Body mass (kg) from the plates and Plug-in Gait's mass-normalised GRF (N/kg): the median
    of |plate Fz| / |PiG GRF Z| over loaded frames (for a file storing no mass, such as the
    c3d.org sample PlugInC3D.c3d). None without enough such frames."""
    ratios = []
    for side, s in SIDES.items():
        lab = find_output(trial.model_outputs, f"{s}GroundReactionForce")
        if lab is None:
            continue
        ref = trial.model_outputs[lab].values[:, 2]
        ours = result_loads[side.capitalize()].force_lab[:, 2]
        ok = np.isfinite(ref) & np.isfinite(ours) & (np.abs(ref) > 2.0) & (np.abs(ours) > 100.0)
        ratios.extend(np.abs(ours[ok]) / np.abs(ref[ok]))
    return float(np.median(ratios)) if len(ratios) >= 10 else None


def _stance_mask(trial, result, side: str) -> np.ndarray:
    """Frames of the side's stance on a plate as Plug-in Gait saw it: its vertical GRF (N/kg)
    above gaitid's contact threshold (``Settings.contact_threshold_n``, 20 N), which drops the
    near-zero tails Plug-in Gait keeps after toe-off; without a stored GRF, gaitid's own
    valid plate contacts."""
    s = SIDES[side]
    lab = find_output(trial.model_outputs, f"{s}GroundReactionForce")
    if lab is not None:
        fz = trial.model_outputs[lab].values[:, 2] * result.trial.subject.mass
        return np.isfinite(fz) & (np.abs(fz) > result.settings.contact_threshold_n)
    return result.loads[side.capitalize()].state == "plate"


def _plates_pig_used(trial, result) -> list[tuple[int, str, str]]:
    """Contacts gaitid rejected but Plug-in Gait computed kinetics for (its GRF for that side is
    loaded during the contact): [(plate, side, gaitid's reason)], to rerun with the plate
    assigned, so both compare the same stance phases."""
    out = []
    time = trial.time
    for row in result.contacts.itertuples():
        if row.valid or not isinstance(row.side, str) or row.side.lower() not in SIDES:
            continue
        during = (time >= row.strike_time_s) & (time <= row.off_time_s)
        if _stance_mask(trial, result, row.side.lower())[during].mean() > 0.5 if during.any() else False:
            for p in str(row.plates).replace("(", "").replace(")", "").replace(",", " ").split():
                out.append((int(p), row.side.lower(), str(row.reason)))
    return out


def _compare_result(file: str, mode: str, trial, result, notes: list[str] = ()) -> list[dict]:
    """One record per side, joint, quantity and plane (:func:`validate`), each saying what it
    compared (``compared``), its ``status`` ('ok', 'poor' or 'not computed') and ``why``
    (:mod:`gaitid.validation.agreement`)."""
    from gaitid.validation import agreement

    records = []
    rate = trial.point_rate
    threshold = result.settings.contact_threshold_n
    for side, s in SIDES.items():
        other = SIDES["left" if side == "right" else "right"]
        stance = _stance_mask(trial, result, side)
        # like with like: only frames where gaitid, too, has the foot's load wholly measured
        ld = result.loads[side.capitalize()]
        loaded = (ld.state == "plate") & np.isfinite(ld.force_lab).all(axis=1)
        for joint in JOINTS:
            J = joint.capitalize()
            for quantity, (ours_suffix, ref_suffix, unit, comps) in QUANTITIES.items():
                name = f"{s}{J}{ref_suffix}"
                lab = find_output(trial.model_outputs, name)
                planes = [PLANES[k] if quantity != "power" else "total" for k in comps]
                base = {"file": file, "side": side, "joint": joint, "mode": mode, "quantity": quantity, "unit": unit,
                        "label": lab or "", "n_frames": 0, "n_cycles": 0, "rms": math.nan, "r": math.nan,
                        "peak_diff": math.nan, "peak_shift_ms": math.nan, "rms_6hz": math.nan, "r_6hz": math.nan,
                        "status": "not computed"}
                why = ""
                if lab is None:  # a row only when the other side has it: one side's kinetics missing
                    if find_output(trial.model_outputs, f"{other}{J}{ref_suffix}") is None:
                        continue
                    why = agreement.missing_label(trial, name)
                else:
                    try:
                        ours_all = result.curve(side.capitalize(), f"{J}{ours_suffix}")
                    except GaitIDError as exc:
                        why = f"gaitid has no {J}{ours_suffix}: {exc}"
                if why:
                    for plane in planes:
                        records.append({**base, "plane": plane, "why": why,
                                        "compared": f"{side} {joint} {quantity}, {plane}: nothing ({why})"})
                    continue
                ref_all = trial.model_outputs[lab].values
                computed = np.isfinite(ref_all).all(axis=1) & (np.abs(ref_all).sum(axis=1) > 0)
                mask = computed & (stance & loaded if quantity != "angle" else True)
                for k, plane in zip(comps, planes):
                    ours = ours_all[:, k] if ours_all.shape[1] > 1 else ours_all[:, 0]
                    rec = {**base, "plane": plane}
                    rec.update(compare(ours, ref_all[:, k], mask, rate))
                    # both curves filtered over the same span: where both are computed (the stance
                    # and the swing around it, for the filter's context), compared over the mask
                    span = computed & np.isfinite(ours)
                    band = compare(lowpass_runs(ours, rate, span=span), lowpass_runs(ref_all[:, k], rate, span=span),
                                   mask, rate)
                    rec["rms_6hz"], rec["r_6hz"] = band["rms"], band["r"]
                    rec["compared"] = agreement.describe(rec, trial, mask & np.isfinite(ours))
                    rec["why"] = agreement.why_nan(rec, trial, result, computed=computed, stance=stance,
                                                   loaded=loaded, ours=ours, mask=mask, threshold=threshold)
                    if not rec["why"]:
                        poor = agreement.is_poor(rec)
                        rec["status"] = "poor" if poor else "ok"
                        rec["why"] = agreement.why_poor(rec, trial, list(notes), name) if poor else ""
                    records.append(rec)
    return records


def validate_file(path: str | os.PathLike, *, modes: Iterable[str] = tuple(MODES), mass: float | None = None,
                  static: str | os.PathLike | None = None, settings: Settings | None = None,
                  subject: dict | None = None, subject_file: str | os.PathLike | None = None,
                  plates: dict | None = None) -> list[dict]:
    """Records (see :func:`validate`) for one C3D file (or a :class:`~gaitid.core.trial.Trial` read
    from one). ``mass`` (kg), ``subject`` (SI values,
    e.g. ``{'leg_length_left': 0.9}``) and ``subject_file`` fill what the file does not store
    (:func:`gaitid.subject.stage.gather_subject`)."""
    from gaitid.io.c3d import read_c3d
    from gaitid.model.markerset import load_model
    from gaitid.pipeline import process
    from gaitid.subject.check import describe_missing, missing_parameters
    from gaitid.subject.layers import SubjectOptions
    from gaitid.subject.stage import gather_subject

    if hasattr(path, "model_outputs"):  # a Trial already read (e.g. a modified copy)
        trial, path = path, Path(path.path or "trial.c3d")
    else:
        path = Path(path)
        try:
            trial = read_c3d(path)
        except GaitIDError as exc:
            return [{"file": path.name, "reason": f"cannot read: {exc}"}]
    file = path.name
    moments = [find_output(trial.model_outputs, f"{s}{j.capitalize()}Moment") for s in "LR" for j in JOINTS]
    if not any(moments):
        return [{"file": file, "reason": "no Plug-in Gait joint moments stored (LAnkleMoment, RKneeMoment...)"}]
    values = {**(subject or {}), **({"mass": float(mass)} if mass is not None else {})}
    given = None  # None: the file's values; else the caller's values and files merged over them
    if values or subject_file is not None:
        try:
            given = gather_subject(trial, SubjectOptions(values or None, subject_file), path)[0]
        except GaitIDError as exc:
            return [{"file": file, "reason": f"subject data: {exc}"}]
    known = given.subject if given is not None else trial.subject
    settings = settings or Settings.plugin_gait(marker_cutoff_hz=None)
    user_plates = dict(plates or {})
    if user_plates:
        settings = settings.replace(plates={**settings.plates, **user_plates})
    subject, estimated = given, None  # (the mass estimated below when none is known)
    mass_note = ""
    records: list[dict] = []
    for mode in modes:
        if mode not in MODES:
            raise ValueError(f"mode {mode!r}: one of {', '.join(MODES)}")
        stat = static if mode == "markers" else None
        missing = missing_parameters(load_model(MODES[mode]), known)
        if missing:
            records.append({"file": file, "mode": mode, "reason": describe_missing(load_model(MODES[mode]), missing)})
            continue
        try:
            if estimated is None and not (known.mass and known.mass > 0):
                # no stored mass: run once at a nominal mass to read the plates, then estimate it
                probe = process(trial, model=MODES[mode], subject=replace(known, mass=70.0), settings=settings)
                estimated = _mass_from_grf(trial, probe.loads)
                if estimated is None:
                    records.append({"file": file, "mode": mode,
                                    "reason": "body mass unknown (none stored, no Plug-in Gait GRF to estimate "
                                              "it from): give --mass KG"})
                    continue
                mass_note = f"mass {estimated:.1f} kg estimated from plate Fz / Plug-in Gait GRF"
                subject = replace(known, mass=estimated)
            result = process(trial, model=MODES[mode], subject=subject, static=stat, settings=settings)
            forced = [f for f in _plates_pig_used(trial, result) if f[0] not in user_plates]  # the user's win
            if forced:
                plates = {**settings.plates, **{p: side for p, side, _ in forced}}
                result = process(trial, model=MODES[mode], subject=subject, static=stat,
                                 settings=settings.replace(plates=plates))
        except GaitIDError as exc:
            records.append({"file": file, "mode": mode, "reason": str(exc)})
            continue
        notes = [mass_note] if mass_note else []
        notes += [f"plate {p} assigned {side} as Plug-in Gait used it (gaitid's check: {why})"
                  for p, side, why in forced]
        recs = _compare_result(file, mode, trial, result, notes)
        if not any(r["n_frames"] for r in recs if r["quantity"] == "moment"):
            records.append({"file": file, "mode": mode,
                            "reason": "no stance phase to compare: no frame where Plug-in Gait computed a moment "
                                      f"and the foot loads a plate above {settings.contact_threshold_n:g} N"})
        for r in recs:
            r["static"] = Path(stat).name if stat else ""
            if notes:
                r["note"] = "; ".join(notes)
        records.extend(recs)
    return records


def validate(paths: str | os.PathLike | Iterable[str | os.PathLike], *, modes: Iterable[str] = tuple(MODES),
             mass: float | None = None, settings: Settings | None = None, subject: dict | None = None,
             subject_file: str | os.PathLike | None = None, static: str | os.PathLike | None = None,
             plates: dict | None = None) -> list[dict]:
    """Compare gaitid with the Plug-in Gait kinetics stored in C3D files.

    ``paths``: files and/or folders (searched recursively for ``*.c3d``; static trials,
    recognised by their content (:func:`gaitid.batch.session.classify_trial`), calibrate the trials of
    their subject beside them and are not compared). ``modes``: 'pig-segments' and/or 'markers'
    (see the module docstring). ``mass``: body mass (kg) for files storing none (else estimated
    from the plates and Plug-in Gait's GRF); ``subject`` / ``subject_file``: other subject
    values for files storing none (see :func:`validate_file`). ``static``: the static trial for
    every file (default, or 'auto': each file's static paired by content and subject);
    ``plates``: plate overrides ({plate: 'Left'|'Right'|'Invalid'|'Auto'}) for every file.

    Returns one record per file, mode, side, joint, quantity and plane:
    ``{file, side, joint, plane, mode, quantity, unit, label, rms, r, n_cycles, n_frames,
    peak_diff, peak_shift_ms, static, pairing}`` (rms and peak_diff in ``unit``: N.m/kg for
    moments), and ``{file, reason}`` (plus ``mode`` when only one mode failed) for what could
    not be compared.
    """
    from gaitid.batch.pairing import pair_statics
    from gaitid.batch.session import find_sources, scan_trial

    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files, not_trials = find_sources(paths)
    beside = {q.resolve() for f in files for q in f.parent.glob("*") if q.suffix.lower() == ".c3d" and q.is_file()}
    infos = {p: scan_trial(p) for p in sorted(set(files) | beside)}
    statics = [i for i in infos.values() if i.kind == "static"]
    walks = [infos[f] for f in files if infos[f].kind not in ("static", "functional")]
    pairs = pair_statics(walks, statics)
    if static is not None and str(static) != "auto" and not Path(static).is_file():
        from gaitid.core.errors import SettingsError

        raise SettingsError(f"--static {static}: no such file (give a static C3D, or 'auto')")
    records: list[dict] = [{"file": str(r.path), "reason": r.reason} for r in not_trials]
    for w in walks:
        pairing = pairs[w.path]
        given = static is not None and str(static) != "auto"
        recs = validate_file(w.path, modes=modes, mass=mass, static=Path(static) if given else pairing.static,
                             settings=settings, subject=subject, subject_file=subject_file, plates=plates)
        for r in recs:
            if r.get("mode", "markers") == "markers" and "reason" not in r:
                r["pairing"] = f"--static {Path(static).name}" if given else pairing.reason
        records.extend(recs)
    return records


def format_table(records: list[dict], quantity: str = "moment") -> str:
    """A plain-text table: one line per file, mode, side and joint with the RMS (r) of each
    plane, the frames compared and the stances they lie in, a '!' on a poor agreement; under
    a line, why a plane is NaN or poor; then the files or modes that could not be compared."""
    from gaitid.validation.agreement import POOR_R, POOR_RMS

    rows = [r for r in records if "reason" not in r and r.get("quantity", "moment") == quantity]
    unit = next((r["unit"] for r in rows), "")
    planes = ("total",) if quantity == "power" else PLANES
    head = f"{'file':28s} {'mode':12s} {'side':5s} {'joint':5s} " + " ".join(
        f"{p + ' rms (r)':>20s}" for p in planes) + f"  {'frames':>6s} {'stances':>7s}"
    lines = [f"Plug-in Gait vs gaitid, {quantity}, RMS difference in {unit} (Pearson r), stance phases",
             "frames: frames compared (the reference's stance on a plate above the contact threshold, where both "
             "curves are computed and gaitid measures the foot's load; runs of >= 5 frames); stances: those runs; "
             f"'!': poor (r < {POOR_R:g} or RMS > {POOR_RMS.get(quantity, float('nan')):g} {unit}); "
             "'nan': nothing to compare (why below the line)", head, "-" * len(head)]
    keyed: dict[tuple, dict] = {}
    for r in rows:
        keyed.setdefault((r["file"], r["mode"], r["side"], r["joint"]), {})[r["plane"]] = r
    for (file, mode, side, joint), by_plane in keyed.items():
        cells = []
        for p in planes:
            r = by_plane.get(p)
            flag = "!" if r and r.get("status") == "poor" else " "
            cells.append(f"{r['rms']:9.3f} ({r['r']:6.3f}){flag}" if r else f"{'-':>20s}")
        n = max(r["n_frames"] for r in by_plane.values())
        stances = max(r["n_cycles"] for r in by_plane.values())
        lines.append(f"{file[:28]:28s} {mode:12s} {side:5s} {joint:5s} " + " ".join(f"{c:>20s}" for c in cells)
                     + f"  {n:6d} {stances:7d}")
        whys: dict[str, list[str]] = {}
        for p in planes:
            r = by_plane.get(p)
            if r and r.get("why"):
                whys.setdefault(f"{'poor' if r.get('status') == 'poor' else 'nan'}: {r['why']}", []).append(p)
        lines += [f"    {', '.join(ps)} {why}" for why, ps in whys.items()]
    for r in records:
        if "reason" in r:
            lines.append(f"{r['file']}: not compared{' (' + r['mode'] + ')' if 'mode' in r else ''}: {r['reason']}")
    return "\n".join(lines)
