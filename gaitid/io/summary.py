"""A readable text summary of a :class:`~gaitid.core.trial.Trial` (``gaitid info FILE``).

Sections: file and duration, rates and frames, markers, virtual points, force
plates (type, peak vertical force in N and body weights when the mass is
known), events, subject, model outputs (Plug-in Gait) and reader warnings.
Forces are in N, lengths in m, masses in kg (the Trial's SI units).
"""

from __future__ import annotations

import numpy as np

from gaitid.core.trial import Trial

G = 9.81  # m/s^2, only to express forces in body weights


def _list(items: list[str], limit: int = 12) -> str:
    if not items:
        return "none"
    head = ", ".join(items[:limit])
    return head + (f", ... (+{len(items) - limit})" if len(items) > limit else "")


def _fmt(value: float | None, unit: str, scale: float = 1.0, digits: int = 3) -> str:
    return "-" if value is None else f"{value * scale:.{digits}g} {unit}"


def plate_lines(trial: Trial) -> list[str]:
    lines = []
    mass = trial.subject.mass
    for p in trial.force_plates:
        fz = p.analog.force[:, 2]
        peak = float(np.nanmax(fz)) if np.isfinite(fz).any() else float("nan")
        loaded = np.isfinite(p.point.cop[:, 0])
        bw = f" = {peak / (mass * G):.2f} BW" if mass else ""
        span = ""
        if loaded.any():
            idx = np.flatnonzero(loaded)
            span = f", loaded frames {trial.frames[idx[0]]}-{trial.frames[idx[-1]]}"
        lines.append(f"  plate {p.index}: type {p.type}, peak Fz {peak:.0f} N{bw}{span}")
    return lines or ["  none"]


def event_lines(trial: Trial) -> list[str]:
    if not trial.events:
        return ["  none"]
    return [f"  {e.time:8.3f} s  frame {e.frame:6d}  {e.context:<7s} {e.label}" for e in trial.events]


def model_output_lines(trial: Trial) -> list[str]:
    if not trial.model_outputs:
        return ["  none"]
    by_kind: dict[str, list[str]] = {}
    for out in trial.model_outputs.values():
        by_kind.setdefault(out.kind, []).append(out.label)
    lines = []
    for kind in ("angle", "force", "moment", "power", "other"):
        labels = by_kind.get(kind, [])
        if labels:
            unit = next(o.unit for o in trial.model_outputs.values() if o.kind == kind)
            lines.append(f"  {kind}s ({len(labels)}, {unit}): {_list(labels, 8)}")
    if any(o.kind in ("force", "moment", "power") for o in trial.model_outputs.values()):
        lines.append("  (Plug-in Gait kinetics are body-mass normalised: N/kg, N.m/kg, W/kg)")
    return lines


def subject_lines(trial: Trial) -> list[str]:
    s = trial.subject
    return [
        f"  name {s.name or '-'}; mass {_fmt(s.mass, 'kg')}; height {_fmt(s.height, 'm')}",
        f"  leg length L/R {_fmt(s.leg_length_left, 'm')} / {_fmt(s.leg_length_right, 'm')}; "
        f"knee width L/R {_fmt(s.knee_width_left, 'm')} / {_fmt(s.knee_width_right, 'm')}; "
        f"ankle width L/R {_fmt(s.ankle_width_left, 'm')} / {_fmt(s.ankle_width_right, 'm')}",
    ]


def _software(trial: Trial) -> str:
    soft, maker = trial.software, trial.manufacturer
    if maker and maker not in soft:
        return f"{soft} ({maker})" if soft else maker
    return soft or "-"


def trial_summary(trial: Trial) -> str:
    """Multi-line summary of ``trial`` (what ``gaitid info`` prints)."""
    valid = np.isfinite(trial.markers[..., 0])
    coverage = 100.0 * valid.mean() if valid.size else 0.0
    analog = trial.analogs
    lines = [
        f"file: {trial.path}" if trial.path else "trial (not from a file)",
        f"software: {_software(trial)}",
        f"duration: {trial.duration:.2f} s; frames {trial.frames[0]}-{trial.frames[-1]} ({trial.n_frames}) "
        f"at {trial.point_rate:g} Hz; analog {f'{analog.rate:g} Hz, {len(analog.labels)} channels' if analog else 'none'}",
        f"markers ({len(trial.marker_labels)}, {coverage:.0f}% of samples valid): {_list(trial.marker_labels)}",
        f"virtual points ({len(trial.virtual_labels)}): {_list(trial.virtual_labels)}",
        f"force plates ({len(trial.force_plates)}):",
        *plate_lines(trial),
        f"events ({len(trial.events)}):",
        *event_lines(trial),
        "subject:",
        *subject_lines(trial),
        f"model outputs ({len(trial.model_outputs)}):",
        *model_output_lines(trial),
    ]
    if not np.allclose(trial.lab_rotation, np.eye(3)):
        lines.append(f"lab rotated to Z up: {trial.lab_rotation.astype(int).tolist()}")
    if trial.warnings:
        lines.append("warnings:")
        lines += [f"  {w}" for w in trial.warnings]
    return "\n".join(lines)
