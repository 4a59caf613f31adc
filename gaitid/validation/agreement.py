"""What each row of ``gaitid validate`` compared, why it is NaN, and why it is flagged poor.

A row is one file, mode, side, joint, quantity and plane. ``describe`` says what was compared
(side, joint, quantity, plane, the reference's label and component, the frames); ``why_nan``
says why no metric could be computed, from the masks the comparison used (no reference output,
a reference computed nowhere, no loaded stance in the reference, none in gaitid, stances on
different frames: the plate assignments differ, gaitid's curve NaN there, too few frames); a
row is ``poor`` when r < :data:`POOR_R` or its RMS exceeds :data:`POOR_RMS` of its unit, and
``why_poor`` gives the causes gaitid can tell (noise the 6 Hz comparison removes, few frames,
a plate assigned as Plug-in Gait used it, a suffixed label, an estimated mass, a file not
written by Vicon software). See docs/validation.md.
"""
from __future__ import annotations

import math

import numpy as np

POOR_R = 0.9  # Pearson r below this: poor agreement
POOR_RMS = {"moment": 0.1, "power": 0.5, "angle": 5.0}  # N.m/kg, W/kg, deg: RMS above this: poor
FEW_FRAMES = 20  # fewer frames compared than this: a figure from a handful of frames
COMPONENT = {"sagittal": "X", "frontal": "Y", "transverse": "Z", "total": "Z"}


def frame_span(trial, mask: np.ndarray) -> str:
    """'frames a-b' (the file's frame numbers) of ``mask``'s first and last True, '' when none."""
    idx = np.flatnonzero(mask)
    return f"frames {trial.first_frame + idx[0]}-{trial.first_frame + idx[-1]}" if idx.size else ""


def describe(rec: dict, trial, mask: np.ndarray) -> str:
    """What a row compared: 'left knee moment, sagittal (X of LKneeMoment): 312 frames in 2
    stances, frames 120-431'."""
    what = f"{rec['side']} {rec['joint']} {rec['quantity']}, {rec['plane']}"
    if rec.get("label"):
        what += f" ({COMPONENT.get(rec['plane'], '?')} of {rec['label']})"
    runs = "stances" if rec["quantity"] != "angle" else "runs"
    span = frame_span(trial, mask)
    return f"{what}: {rec.get('n_frames', 0)} frames in {rec.get('n_cycles', 0)} {runs}" + (f", {span}" if span else "")


def missing_label(trial, name: str) -> str:
    """Why a reference output is absent: none stored, or labels like it that are not taken."""
    like = sorted(lab for lab in trial.model_outputs if name.lower() in lab.lower())
    if like:
        return (f"the file stores no {name} (its labels {', '.join(like[:4])} carry more than a short suffix, "
                "so none is taken as it)")
    return f"the file stores no {name} (nor with a suffix): Plug-in Gait wrote no such output for this side"


def contact_reasons(result, side: str) -> str:
    """gaitid's contacts of ``side`` and the unassigned ones, with their reasons."""
    out = []
    for row in result.contacts.itertuples():
        own = isinstance(row.side, str) and row.side.lower() == side
        if own or not isinstance(row.side, str) or not row.valid:
            what = "valid" if row.valid else str(row.reason)
            out.append(f"plate {row.plates} ({row.side if isinstance(row.side, str) else 'no foot'}): {what}")
    return "; ".join(out) if out else "no plate contact at all"


def why_nan(rec: dict, trial, result, *, computed, stance, loaded, ours, mask, threshold: float) -> str:
    """Why ``rec`` has no metric (or no r), from the masks of the comparison; '' when it has."""
    side, lab, q = rec["side"], rec["label"], rec["quantity"]
    if not computed.any():
        return f"the reference's {lab} is zero or missing on every frame: Plug-in Gait computed no {q} on this side"
    if q != "angle":
        if not (computed & stance).any():
            return (f"the reference has no kinetics for the {side} foot: no frame where it computed {lab} with "
                    f"the foot on a plate above {threshold:g} N")
        if not loaded.any():
            return (f"gaitid puts the {side} foot alone on no plate (contacts: {contact_reasons(result, side)}); "
                    "--plates assigns a plate by hand")
        if not (computed & stance & loaded).any():
            return (f"the reference's plate assignment differs from gaitid's: the reference's {side} stance is on "
                    f"{frame_span(trial, computed & stance)}, gaitid's {side} foot on a plate on "
                    f"{frame_span(trial, loaded)}")
    both = mask & np.isfinite(ours)
    if not both.any():
        return f"gaitid's curve is NaN on the {int(mask.sum())} frames the reference computed"
    if rec["n_frames"] < 5:
        return (f"too few frames: {int(both.sum())} frames in common, none in a run of at least 5 "
                "(plate-edge flicker is not compared)")
    if not math.isfinite(rec["r"]):
        return "r undefined: one of the curves is constant over the frames compared"
    return ""


def is_poor(rec: dict) -> bool:
    limit = POOR_RMS.get(rec["quantity"], math.inf)
    r, rms = rec.get("r", math.nan), rec.get("rms", math.nan)
    return (math.isfinite(r) and r < POOR_R) or (math.isfinite(rms) and rms > limit)


def why_poor(rec: dict, trial, notes: list[str], exact_name: str) -> str:
    """The causes of a poor agreement that gaitid can tell, or that it cannot tell one."""
    limit = POOR_RMS.get(rec["quantity"], math.inf)
    causes = []
    band_rms, band_r = rec.get("rms_6hz", math.nan), rec.get("r_6hz", math.nan)
    if math.isfinite(band_rms) and band_rms <= limit / 2 and (not math.isfinite(band_r) or band_r >= 0.95):
        causes.append(f"agrees once both curves are low-passed at 6 Hz (RMS {band_rms:.3f}, r {band_r:.3f}): "
                      "high-frequency noise in one curve (often the reference's markers)")
    if rec["n_frames"] < FEW_FRAMES:
        causes.append(f"only {rec['n_frames']} frames compared")
    causes += [n for n in notes if n.startswith("plate ") or n.startswith("mass ")]
    if rec.get("label") and rec["label"] != exact_name:
        causes.append(f"the reference is the suffixed output {rec['label']}: check it is the one meant")
    software = (getattr(trial, "software", "") or "").strip()
    if software and not any(v in software.lower() for v in ("vicon", "nexus", "workstation")):
        causes.append(f"the file was written by {software}, not Vicon software: its outputs may not be Plug-in Gait's")
    return "; ".join(causes) if causes else ("no cause gaitid can tell: check the marker set, the static trial "
                                             "and the subject's measurements")
