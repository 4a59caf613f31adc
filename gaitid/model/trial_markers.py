"""A trial's markers as a model reads them: aliases, the labels it needs, filtered trajectories.

:func:`apply_aliases` renames markers to the model's labels (``[aliases]``); :func:`needed_labels`
lists the labels a model reads and those it lacks; :func:`prepare_points` gap-fills and low-pass
filters them (m, lab frame).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from gaitid.core import signal
from gaitid.core.errors import ModelError, SettingsError
from gaitid.core.trial import Trial
from gaitid.core.vocabulary import SIDES
from gaitid.model.markerset import Model


def apply_aliases(trial: Trial, model: Model) -> Trial:
    """The trial with markers renamed to the model's labels (``[aliases]``: label -> other
    names, ``{S}`` the side prefix): a label the trial lacks takes the first alias it has.
    Returns the same object when nothing is renamed, else a shallow copy (arrays shared)."""
    if not model.aliases:
        return trial
    labels = list(trial.marker_labels)
    present = set(labels) | set(trial.virtual_labels)
    for canon, others in model.aliases.items():
        for pre in ([model.sides[s] for s in SIDES] if "{S}" in canon else [""]):
            name = canon.replace("{S}", pre)
            if name in present:
                continue
            for other in others:
                alt = other.replace("{S}", pre)
                if alt in labels:
                    labels[labels.index(alt)] = name
                    present.add(name)
                    break
    if labels == trial.marker_labels:
        return trial
    return replace(trial, marker_labels=labels)


def needed_labels(model: Model, trial: Trial) -> tuple[list[str], list[str]]:
    """(labels to read, missing required labels) for both sides."""
    present = set(trial.marker_labels) | set(trial.virtual_labels)
    labels, missing = [], []
    for side in SIDES:
        pre = model.sides[side]
        for m in model.required_markers:
            lab = m.replace("{S}", pre)
            (labels if lab in present else missing).append(lab)
        labels += [m.replace("{S}", pre) for m in model.optional_markers if m.replace("{S}", pre) in present]
    groups = [g for g in model.one_of if all(x in present for x in g)]
    if model.one_of and not groups:
        missing.append(" or ".join("+".join(g) for g in model.one_of))
    for g in groups:
        labels += g
    # any other trial label the definitions mention (e.g. a midpoint's markers)
    for text in strings([model.points, model.segments, model.static]):
        for side in SIDES:
            lab = text.replace("{S}", model.sides[side])
            if lab in present:
                labels.append(lab)
    return sorted(set(labels)), sorted(set(missing))


def strings(obj) -> list[str]:
    """Every string inside nested dicts and lists."""
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [t for v in obj.values() for t in strings(v)]
    if isinstance(obj, list):
        return [t for v in obj for t in strings(v)]
    return []


def prepare_points(trial: Trial, labels: list[str], cutoff_hz: float | None, max_gap: int, order: int) -> dict:
    """Gap-filled (cubic, <= max_gap frames) and low-pass filtered trajectories (n, 3) m by label."""
    if not labels:
        return {}
    stacked = np.stack([trial.point(lab) for lab in labels], axis=1)  # (n, k, 3)
    stacked = signal.fill_gaps(stacked, max_gap)
    try:
        stacked = signal.butter_lowpass(stacked, trial.point_rate, cutoff_hz, order)
    except SettingsError as exc:  # a file's rate too low for the cutoff (POINT:RATE = 1 Hz): name the file
        why = f"the markers' rate {trial.point_rate:g} Hz cannot carry the low-pass cutoff: {exc.reason}; check " \
              "the file's POINT:RATE, or "
        raise SettingsError(why + "set a lower marker_cutoff_hz", trial.path,
                            cli=why + "give a lower --cutoff HZ (0: unfiltered)") from None
    return {lab: stacked[:, i, :] for i, lab in enumerate(labels)}


def rebuilt_landmarks(model: Model) -> set[str]:
    """Labels the model's technical clusters rebuild from a static trial (both sides)."""
    return {x.replace("{S}", model.sides[s]) for c in model.clusters.values() for x in c["landmarks"] for s in SIDES}


def missing_markers_error(trial: Trial, model: Model, missing: list[str], static: Trial | None) -> ModelError:
    """The error for a trial lacking marker labels a model needs (with a hint when a static
    trial would let the model's clusters rebuild them)."""
    hint = ""
    rebuilt = rebuilt_landmarks(model) & set(missing)
    if static is None and rebuilt:
        hint = f" (technical clusters rebuild {', '.join(sorted(rebuilt))} from a static trial: give static=...)"
    return ModelError(f"trial lacks marker(s) {', '.join(missing)} needed by model '{model.name}'{hint}", trial.path)


def require_markers(trial: Trial, model: Model, static: Trial | None = None) -> Model:
    """The model, after checking the trial has the markers it needs (its aliases applied; with a
    static trial, the landmarks its clusters rebuild may be absent). ModelError naming them."""
    _, missing = needed_labels(model, apply_aliases(trial, model))
    if static is not None and model.clusters:
        missing = [x for x in missing if x not in rebuilt_landmarks(model)]
    if missing:
        raise missing_markers_error(trial, model, missing, static)
    return model
