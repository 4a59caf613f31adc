"""Subject data from several sources merged, so that each value comes from the most trusted
source that has it, and where it came from recorded.

:func:`merge_subject` takes a list of ``(source name, Subject or dict)`` layers, the most
trusted first; each value is taken from the first layer that has it, later layers only fill
gaps, and the result records which layer each value came from (``Subject.sources``). The
order the command line and batch use (:data:`PRECEDENCE`, the layers of
:func:`gaitid.subject.layers.subject_layers`):

1. values typed on the command line (``--mass``, ``--leg-length``...): the user's explicit word;
2. the ``--subject FILE`` the user named;
3. the C3D's PROCESSING values: what the trial was captured and (for Vicon) modelled with;
4. a ``.vsk`` / ``.mp`` found beside the trial: the session's subject file, possibly edited
   after the capture, so it only fills what the C3D lacks.

A value a layer stores but that cannot be used (``Subject.invalid``: a zero or negative mass, an
implausible or non-finite value, :func:`gaitid.core.subject_record.stored_value`) is never
silently dropped: when another layer gives that value, :func:`ignored_values` says which stored
value was ignored and which was used; when none does, the merged Subject keeps the first such
entry in its ``invalid`` (its source named) and the subject stage refuses it
(:func:`invalid_error`). Where two layers disagree on a value, :func:`subject_disagreements` says so. The merged
subject's values and sources: :func:`subject_table` (a table), :func:`describe_subject` (lines
grouped by source).
"""

from __future__ import annotations

from dataclasses import replace

from gaitid.core.errors import DataError
from gaitid.core.subject_record import (
    NUMERIC_FIELDS,
    OPTIONS,
    InvalidValue,
    Subject,
    as_subject,
    extra_unit,
    field_unit,
    format_value,
)

PRECEDENCE = ("command line", "--subject file", "C3D PROCESSING", "subject file beside the trial")


def merge_subject(layers) -> tuple[Subject, dict[str, str]]:
    """Merge ``[(source name, Subject | dict | None), ...]``, most trusted first: each value is
    the first layer's that has it (later layers only fill gaps). Returns a new Subject (the
    inputs are not changed) and ``{field or extra name: source name}``, also stored in the
    Subject's ``sources``. ``extra`` names match case-insensitively."""
    merged = Subject()
    sources: dict[str, str] = {}
    seen_extra: dict[str, str] = {}  # lower -> spelling kept
    for source, value in layers:
        s = as_subject(value, str(source))
        for f, bad in _invalid(s, source).items():
            merged.invalid.setdefault(f, bad)
        if merged.name is None and s.name:
            merged.name = s.name
        for f in NUMERIC_FIELDS:
            v = getattr(s, f)
            if getattr(merged, f) is None and v is not None:
                setattr(merged, f, v)
                sources[f] = s.sources.get(f, source) if s.sources else source
        for k, v in s.extra.items():
            if k.lower() not in seen_extra and v is not None:
                seen_extra[k.lower()] = k
                merged.extra[k] = v
                sources[k] = s.sources.get(k, source) if s.sources else source
    merged.sources = dict(sources)
    merged.invalid = {f: bad for f, bad in merged.invalid.items() if getattr(merged, f) is None}
    return merged, sources


def _invalid(subject: Subject, source) -> dict[str, InvalidValue]:
    """``subject.invalid`` with each entry's source named (``source`` unless already named)."""
    return {f: bad if bad.source else replace(bad, source=str(source)) for f, bad in subject.invalid.items()}


def ignored_values(layers) -> list[str]:
    """A line for each invalid value a layer stores (not a zero length, Plug-in Gait's "not
    set") that another layer's value replaces: ``C3D PROCESSING stores PROCESSING:Bodymass = 5000
    kg: not plausible (expected 2-400 kg); ignored, mass 70 kg from command line used``."""
    merged, sources = merge_subject(layers)
    out = []
    for source, value in layers:
        for f, bad in _invalid(as_subject(value, str(source)), source).items():
            used = getattr(merged, f)
            if used is not None and not bad.unset:
                out.append(f"{bad.describe()}; ignored, {f.replace('_', ' ')} {format_value(f, used)} "
                           f"from {sources.get(f, '?')} used")
    return out


def invalid_error(subject: Subject, path=None) -> DataError | None:
    """The DataError for the first invalid value (not a zero length) no source replaced (the
    merged ``subject.invalid``), naming the source, the value, why, and the option that gives
    it; None when there is none."""
    bad = next((b for b in subject.invalid.values() if not b.unset), None)
    if bad is None:
        return None
    base = next((b for b in OPTIONS if bad.field.startswith(b)), None)
    option = OPTIONS.get(base, "")
    if bad.field == "mass":
        give = "give the measured mass (--mass KG, subject=KG in a script), or estimate it from the force plates " \
               "(--mass plates, subject='plates')"
        cli = "give the measured mass (--mass KG), or estimate it from the force plates (--mass plates)"
    else:
        give = (f"give the measured value ({option}, or a --subject file; subject={{'{bad.field}': ...}} in a script)"
                if option else f"give the measured value (a --subject file; subject={{'{bad.field}': ...}} in a script)")
        cli = f"give the measured value ({option}, or a --subject file)" if option else \
            "give the measured value (a --subject file)"
    what = f"{bad.describe()}: processing with it would be wrong"
    return DataError(f"{what}; {give}", path, cli=f"{what}; {cli}")


def subject_disagreements(layers, rel_tol: float = 0.005) -> list[str]:
    """Values two layers give differently (relative difference > ``rel_tol``): which one the
    merge uses and which it overrides, e.g. ``mass 74 kg (C3D PROCESSING) used; flatFoot.vsk
    says 75 kg``."""
    out = []
    subjects = [(src, as_subject(v, str(src))) for src, v in layers]
    for f in NUMERIC_FIELDS:
        first = None
        for src, s in subjects:
            v = getattr(s, f)
            if v is None:
                continue
            if first is None:
                first = (src, v)
            elif abs(v - first[1]) > rel_tol * max(abs(first[1]), 1e-12):
                out.append(f"{f} {format_value(f, first[1])} ({first[0]}) used; {src} says {format_value(f, v)}")
    return out


def subject_table(subject: Subject):
    """The subject's values as a table: parameter, value (SI), unit, source (one row each): the
    Subject fields (kg, m), then the other values whose unit is known (Vicon's lengths in m, angles
    in rad: :func:`gaitid.core.subject_record.vicon_unit`: the leg and upper-body measurements,
    the ASIS-trochanter distances, Plug-in Gait's rotations and offsets). Values of unknown unit
    (Vicon's flags and marker offsets: ``UseFloorFF``, ``%RMMAX``...) stay in ``Subject.extra``,
    where a model may read them, and are not listed. Functional calibration values (hip centres in
    the Plug-in Gait pelvis frame, knee axes) are listed with their method in the source, and a
    row ``knee_axis_frame`` says the knee axes' frame (``lab_static``)."""
    import pandas as pd

    rows = []
    for f in NUMERIC_FIELDS:
        v = getattr(subject, f)
        if v is not None:
            rows.append({"parameter": f, "value": _shown(v), "unit": field_unit(f),
                         "source": subject.sources.get(f, "")})
    for k, v in subject.extra.items():
        unit = extra_unit(k)
        if unit and isinstance(v, (int, float)):
            rows.append({"parameter": k, "value": _shown(v), "unit": unit, "source": subject.sources.get(k, "")})
    if any(r["parameter"].startswith("knee_axis_") for r in rows):  # the frame of the functional knee axes
        rows.append({"parameter": "knee_axis_frame", "value": "lab_static", "unit": "",
                     "source": "unit axes in the lab at the static pose, pointing left (knee_axis_point_: "
                               "a point on each, m)"})
    return pd.DataFrame(rows, columns=["parameter", "value", "unit", "source"])


def _shown(value: float) -> float:
    """A value without the float noise of a unit conversion (0.9400000000000001 -> 0.94)."""
    return float(f"{value:.12g}")


def describe_subject(subject: Subject) -> list[str]:
    """The subject's anthropometry grouped by source: ``C3D PROCESSING: mass 74 kg, height
    1760 mm, leg length 920/920 mm (L/R), ...``."""
    by_source: dict[str, list[str]] = {}
    done = set()
    for f in NUMERIC_FIELDS:
        v = getattr(subject, f)
        if v is None or f in done:
            continue
        src = subject.sources.get(f, "?")
        text = format_value(f, v)
        name = f.replace("_", " ")
        if f.endswith("_left"):
            other = f[:-5] + "_right"
            w = getattr(subject, other)
            if w is not None and subject.sources.get(other, "?") == src:
                done.add(other)
                name, text = f[:-5].replace("_", " "), f"{v * 1000:g}/{w * 1000:g} mm (L/R)"
        by_source.setdefault(src, []).append(f"{name} {text}")
    return [f"{src}: {', '.join(items)}" for src, items in by_source.items()]
