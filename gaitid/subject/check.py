"""Before processing: does the trial fit the model, and does its subject give what the model needs.

:func:`check_subject` raises a ModelError naming what is missing: the markers (with the
installed models the trial's markers do fit, :func:`explain_markers`) or the subject
parameters (with the command-line options that supply them, :func:`describe_missing`).
"""

from __future__ import annotations

from pathlib import Path

from gaitid.core.errors import ModelError
from gaitid.core.settings import Settings
from gaitid.core.subject_record import Subject, option_for, subject_value
from gaitid.core.trial import Trial
from gaitid.model.markerset import Model, load_model, missing_markers, models_fitting


def missing_parameters(model: Model, subject: Subject) -> list[tuple[str, str, list[str]]]:
    """The model's required subject parameters the subject does not give:
    ``[(parameter, side, [Subject fields / Vicon names looked for]), ...]``."""
    out = []
    for name, spec in model.parameters.items():
        if not spec.get("required"):
            continue
        for side in ("left", "right"):  # the model files' per-side keys (gaitid.core.vocabulary.side_key)
            prefix = model.sides[side.capitalize()]
            srcs = [s.replace("{side}", side).replace("{S}", prefix) for s in spec.get("from", [])]
            if not any(subject_value(subject, s) is not None for s in srcs):
                out.append((name, side, srcs))
    return out


def describe_missing(model: Model, missing, path=None) -> str:
    """An error text for :func:`missing_parameters`' result: the parameters, the sides and the
    options that supply them."""
    names: dict[str, list[str]] = {}
    options: list[str] = []
    vicon: list[str] = []
    for name, side, srcs in missing:
        names.setdefault(name, []).append(side)
        opt = option_for(srcs)
        if opt and opt not in options:
            options.append(opt)
        vicon += [s for s in srcs if s[:1].isupper() and s not in vicon]
    parts = [f"{n} ({'left and right' if len(sides) == 2 else sides[0]})" for n, sides in names.items()]
    give = " ".join(options)
    where = "the trial stores none" if path is None else f"{Path(path).name} stores none"
    return (f"model '{model.name}' needs the subject's {', '.join(parts)} and {where}: give "
            + (f"{give}, or " if give else "")
            + f"a --subject file (.vsk/.mp with {', '.join(vicon[:3])}{'...' if len(vicon) > 3 else ''}, "
              "or a table); 'gaitid models' lists each model's parameters")


def check_subject(trial: Trial, subject: Subject, settings: Settings, static: bool = False) -> None:
    """A ModelError when ``trial`` lacks the model's markers (naming the installed models its
    markers fit) or ``subject`` (the subject it is processed with) a required parameter (naming
    the option that gives it)."""
    model = load_model(settings.model)
    lacking = missing_markers(model, [*trial.marker_labels, *trial.virtual_labels], static)
    if lacking:
        raise explain_markers(ModelError(f"trial lacks marker(s) {', '.join(lacking)} needed by model "
                                         f"'{model.name}'", trial.path), trial, static)
    missing = missing_parameters(model, subject)
    if missing:
        raise ModelError(describe_missing(model, missing, trial.path), trial.path)


def explain_markers(exc: ModelError, trial: Trial, static: bool) -> ModelError:
    """``exc`` (a trial lacking a model's markers) with the installed models the trial's
    markers do fit."""
    if "lacks marker" not in exc.reason:
        return exc
    fits = models_fitting(list(trial.marker_labels) + list(trial.virtual_labels), static)
    hint = (f"; the trial's markers fit: {', '.join(fits)} (--model {fits[0]})" if fits
            else "; no installed model fits its markers (gaitid models lists what each needs; "
                 "--model FILE.toml takes your own)")
    return ModelError(exc.reason + hint, exc.path)
