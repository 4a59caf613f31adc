"""Dynamic consistency of a trial: does the ground reaction move the body as the markers say?

:func:`trial_residual` compares the whole body's centre-of-mass acceleration (the model's legs,
the rest of the body riding on the pelvis: :func:`gaitid.model.body_com.body_centre_of_mass`)
with (F + m g) / m, F the sum of both feet's loads (:mod:`gaitid.contacts.foot_loads`: the plates
each foot loads), over the frames where every foot is in swing or wholly measured on plates (both
feet's loads finite; a foot on the floor or sharing a plate makes the frame NaN), minus 0.1 s at
the edges (:func:`gaitid.dynamics.residual.residual_force`). The feet's loads, not every plate's
force: they are what the kinetics use (a plate no foot touches, with its unloaded offset, does
not enter). :func:`consistency_check` turns the figures into a :class:`~gaitid.core.checks.Check`
(warned when the vertical residual's RMS exceeds ``Settings.residual_tolerance`` or its mean
``Settings.residual_mean_tolerance``, fractions of body weight; the horizontal part is reported,
not judged: with the upper body riding on the pelvis, the trunk's and arms' sway is not in the
model's centre of mass; docs/checks.md), :func:`residual_rows` into a table for a report.
:func:`trial_residuals` adds the residual moment about the body's centre of mass on the same
frames (the legs' and the rest of the body's angular momentum against the feet's moments), which
the check reports in N.m/kg and does not judge (the clean trials' and the mutations' overlap,
docs/checks.md).
"""

from __future__ import annotations

import math

import numpy as np

from gaitid.contacts.foot_loads import FootLoad
from gaitid.core.checks import Check
from gaitid.core.rotation import cross
from gaitid.core.settings import Settings
from gaitid.core.signal import butter_lowpass, finite_rows, runs
from gaitid.core.trial import Trial
from gaitid.core.vocabulary import SIDES
from gaitid.dynamics.residual import MARGIN_S, Residual, ResidualMoment, eroded, residual_force, residual_moment
from gaitid.model.assembly import ModelKinematics
from gaitid.model.body_com import body_centre_of_mass, body_parts

NAME = "dynamic consistency"
UNFILTERED_CUTOFF_HZ = 6.0  # markers left unfiltered: the check compares both sides in this band


def _inputs(kinematics: ModelKinematics, loads: dict[str, FootLoad], mass: float, settings: Settings):
    """The body's centre of mass (filtered at 6 Hz when the markers are not) and the words saying how it
    was built, the cutoff both sides are compared at, the feet's total force and the usable frames."""
    com, how = body_centre_of_mass(kinematics, mass)
    cutoff = settings.marker_cutoff_hz
    if cutoff is None:
        cutoff = UNFILTERED_CUTOFF_HZ
        com = butter_lowpass(com, kinematics.rate, cutoff, settings.filter_order)
    force = sum(loads[side].force_lab for side in SIDES)
    return com, how, cutoff, force, finite_rows(force)


def trial_residual(kinematics: ModelKinematics, loads: dict[str, FootLoad], mass: float,
                   settings: Settings) -> tuple[Residual, str]:
    """The residual force of the trial (module docstring) and the words saying how the centre of
    mass was built. The force is filtered at the markers' cutoff (``settings.marker_cutoff_hz``;
    when the markers are unfiltered, both at 6 Hz)."""
    com, how, cutoff, force, usable = _inputs(kinematics, loads, mass, settings)
    return residual_force(com, mass, kinematics.rate, force, usable, gravity=settings.gravity_m_s2,
                          cutoff_hz=cutoff, order=settings.filter_order), how


def trial_residuals(kinematics: ModelKinematics, loads: dict[str, FootLoad], mass: float,
                    settings: Settings) -> tuple[Residual, ResidualMoment, str, str]:
    """The residual force (:func:`trial_residual`, the same figures) and the residual moment about
    the body's centre of mass, lab axes (:func:`gaitid.dynamics.residual.residual_moment`): the rate
    of change of the angular momentum of the legs' segments and of the rest of the body riding on
    the pelvis (:func:`gaitid.model.body_com.body_parts`) against the feet's moments (centre of
    pressure x force + free moment), over the frames the residual force judges; and the
    words saying how the centre of mass and the body were built. The moment is filtered as the
    force (when the markers are unfiltered, it and the angular momentum's rate at 6 Hz)."""
    com, how, cutoff, force, usable = _inputs(kinematics, loads, mass, settings)
    rate, order = kinematics.rate, settings.filter_order
    # no frame can be judged (measured, the centre of mass known, 0.1 s of such frames on either side):
    # nothing to filter
    if not eroded(usable & finite_rows(com), int(round(MARGIN_S * rate))).any():
        n = usable.size
        return (Residual.none_judged(np.full((n, 3), np.nan), float(mass) * settings.gravity_m_s2),
                ResidualMoment.none_judged(n, mass), how, "")
    # the feet's moment about the lab origin: COP x F + free moment (a foot in swing: no load, no COP needed)
    f, cop, free = (np.array([getattr(loads[side], name) for side in SIDES]) for name in  # both feet stacked
                    ("force_lab", "cop_lab", "free_moment_lab"))
    swing = (f[..., 0] == 0) & (f[..., 1] == 0) & (f[..., 2] == 0)  # (f == 0).all(axis=2), without its slow reduction
    moment = (cross(np.where(swing[..., None], 0.0, cop), f) + free).sum(axis=0)
    # force and moment filtered in one call (the filter runs column by column: the force's columns
    # come out as residual_force's own filtering gives them)
    load = butter_lowpass(np.concatenate([force, moment], axis=1), rate, cutoff, order)
    res = residual_force(com, mass, rate, load[:, :3], usable, gravity=settings.gravity_m_s2, cutoff_hz=None,
                         order=order)
    if not res.n_judged:  # no frame for the force: none for the moment
        return res, ResidualMoment.none_judged(usable.size, mass), how, ""
    parts, built = body_parts(kinematics, mass)
    mom = residual_moment(parts, com, mass, rate, load[:, :3], load[:, 3:], res.judged, cutoff_hz=None,
                          margin_frames=0, motion_cutoff_hz=None if settings.marker_cutoff_hz is not None else cutoff)
    return res, mom, how, built


def trial_residual_moment(kinematics: ModelKinematics, loads: dict[str, FootLoad], mass: float,
                          settings: Settings) -> tuple[ResidualMoment, str]:
    """The residual moment of :func:`trial_residuals` and the words saying how the body was built."""
    _, mom, _, built = trial_residuals(kinematics, loads, mass, settings)
    return mom, built


def moment_summary(res: ResidualMoment, trial: Trial) -> str:
    """One line: the residual moment's RMS, its horizontal and vertical parts and its peak, N.m/kg."""
    if res.n_judged == 0:
        return "residual moment: no frame judged"
    return (f"residual moment about the centre of mass RMS {res.rms:.2f} N.m/kg (about the horizontal axes "
            f"{res.horizontal_rms:.2f}, the vertical {res.vertical_rms:.2f}), peak {res.peak:.2f} N.m/kg at "
            f"{trial.time[res.peak_index]:.2f} s")


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def summary(res: Residual, trial: Trial) -> str:
    """One line: the residual's RMS, its split, its mean vertical part and its peak, in % of body weight."""
    t = trial.time
    spans = _spans(res.judged, t)
    return (f"residual force RMS {_pct(res.rms)} of body weight (vertical {_pct(res.vertical_rms)}, horizontal "
            f"{_pct(res.horizontal_rms)}; mean vertical {100 * res.mean_vertical:+.0f} %), peak {_pct(res.peak)} "
            f"at {t[res.peak_index]:.2f} s, over {res.n_judged} frames ({spans}) where every loaded foot is measured")


def _spans(mask: np.ndarray, t: np.ndarray) -> str:
    a, b = runs(mask)
    parts = [f"{t[i]:.2f}-{t[j - 1]:.2f} s" for i, j in zip(a, b)]
    return ", ".join(parts[:3]) + (f" and {len(parts) - 3} more" if len(parts) > 3 else "")


def _by_plate(res: Residual, trial: Trial, threshold: float) -> str:
    """'RMS 95 % while plate 1 is loaded, 8 % while plate 2 is loaded, 6 % while none is': the RMS residual on the judged
    frames each plate carries more than ``threshold`` N."""
    n = res.judged.size
    size = np.linalg.norm(res.force_lab, axis=1) / res.weight_n
    parts, any_loaded = [], np.zeros(n, bool)
    for fp in trial.force_plates:
        loaded = res.judged & (np.nan_to_num(fp.point.force[:n, 2]) > threshold)
        any_loaded |= loaded
        if loaded.any():
            parts.append(f"{_pct(float(np.sqrt(np.mean(size[loaded] ** 2))))} while plate {fp.index} is loaded")
    free = res.judged & ~any_loaded
    if free.any():
        parts.append(f"{_pct(float(np.sqrt(np.mean(size[free] ** 2))))} while none is")
    return "RMS " + ", ".join(parts) if parts else ""


def _causes(res: Residual) -> str:
    if abs(res.mean_vertical) > 0.5 * res.rms:
        direction = ("the body mass too high or a plate reading too little force (gain, units)"
                     if res.mean_vertical > 0 else
                     "the body mass too low or a plate reading too much force (gain, units)")
        return (f"mostly a constant vertical residual ({100 * res.mean_vertical:+.0f} % of body weight): {direction}; "
                "else a plate's orientation or sign, or markers swapped or mislabelled")
    return ("a plate's gain, units, sign, position or orientation; the body mass; markers swapped or mislabelled "
            "(the centre of mass then moves wrongly)")


def consistency_check(kinematics: ModelKinematics, loads: dict[str, FootLoad], mass: float, trial: Trial,
                      settings: Settings) -> Check:
    """The dynamic consistency :class:`Check`: not run without plates or without a judged frame; else
    the figures, warned when the vertical residual's RMS exceeds ``settings.residual_tolerance`` or
    its mean ``settings.residual_mean_tolerance``."""
    if not trial.force_plates:
        return Check.not_run(NAME, "no force plates: no measured ground reaction to compare the motion with")
    if mass is None or not mass > 0:
        return Check.not_run(NAME, "no body mass")
    res, mom, how, _ = trial_residuals(kinematics, loads, mass, settings)
    if res.n_judged == 0:
        measured = int(finite_rows(sum(loads[side].force_lab for side in SIDES)).sum())
        return Check.not_run(NAME, f"no frame where every loaded foot is measured on a plate ({measured} such frames) "
                                   "and the model's segments are known, with 0.1 s of such frames on either side")
    tol, mean_tol = settings.residual_tolerance, settings.residual_mean_tolerance
    line = summary(res, trial)
    detail = (f"{line}; tolerance {_pct(tol)} vertical RMS, {_pct(mean_tol)} mean vertical"
              if math.isfinite(tol) or math.isfinite(mean_tol) else line)
    detail += "; " + moment_summary(mom, trial)
    warnings = []
    over = []
    if res.vertical_rms > tol:
        over.append(f"vertical RMS {_pct(res.vertical_rms)} > {_pct(tol)} (Settings.residual_tolerance)")
    if abs(res.mean_vertical) > mean_tol:
        over.append(f"mean vertical {100 * res.mean_vertical:+.0f} % beyond {_pct(mean_tol)} "
                    "(Settings.residual_mean_tolerance)")
    if over:
        plates = _by_plate(res, trial, settings.contact_threshold_n)
        warnings.append(
            f"dynamic consistency: the ground reaction does not move the body as the markers do: {line}; "
            f"{', '.join(over)}{'; ' + plates if plates else ''}. Likely causes: {_causes(res)}. "
            f"Centre of mass: {how}.")
    return Check.outcome(NAME, detail, warnings)


def residual_rows(res: Residual, trial: Trial) -> list[tuple[str, str]]:
    """(what, value) rows of the residual's figures for a report ('-' when no frame was judged)."""
    if res.n_judged == 0:
        return [("frames judged", "0")]
    t = trial.time
    return [("frames judged", f"{res.n_judged} ({_spans(res.judged, t)})"),
            ("RMS residual force", f"{100 * res.rms:.1f} % BW"),
            ("vertical / horizontal RMS", f"{100 * res.vertical_rms:.1f} / {100 * res.horizontal_rms:.1f} % BW"),
            ("mean vertical residual", f"{100 * res.mean_vertical:+.1f} % BW"),
            ("peak residual force", f"{100 * res.peak:.1f} % BW at {t[res.peak_index]:.2f} s")]
