"""What the report shows of the joint-load uncertainty (docs/uncertainty.md).

When every reported Result was processed with ``uncertainty=...`` (and the report's toggle,
``write_report(..., uncertainty=...)``, is not False; None, the default, shows it), each kinetic panel gets, per side, the
95 % band of the mean curve from the error model's input errors
(:func:`gaitid.uncertainty.band_curves`; gid ``'uncertainty:Left'``), drawn as its two edges,
dashed lines in the side's colour, over the grey normative band and the cycles' light +-1 SD band
(filled bands would hide each other: docs/report.md), and the tables page a table of the kinetic clinical
parameters as "value +- SD" with the 95 % interval and the error source that dominates each
(:mod:`gaitid.cycles.clinical` definitions: each parameter in its phase of the cycle). In the HTML page a
checkbox shows or hides the bands.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gaitid.core.vocabulary import SIDES
from gaitid.report.content import ReportData
from gaitid.report.display import DASH, Table, parameter_name
from gaitid.report.labels import SIDE_COLOURS
from gaitid.report.layout import LegendEntry

SOURCE_WORDS = {"joint_centres": "joint centres", "bsip": "segment parameters", "plates": "force plates",
                "markers": "marker noise"}


def has_uncertainty(data: ReportData) -> bool:
    """Whether every reported Result was processed with ``uncertainty=...``."""
    return all(getattr(r, "uncertainty", None) is not None for r in data.results)


def uncertainty_bands(data: ReportData, show: bool | None = None) -> pd.DataFrame | None:
    """The bands to draw (:func:`gaitid.uncertainty.band_curves` of the report's Results, pooled
    over a session's trials), or None: toggle ``show`` False, or a Result processed without
    uncertainty (``show=True`` then names it in a DataError; ``None`` quietly draws none)."""
    if show is False or (show is None and not has_uncertainty(data)):
        return None
    from gaitid.uncertainty import band_curves

    return band_curves(data.results)


def band_of(bands: pd.DataFrame | None, side: str, variable: str, component: str):
    """(percent, low95, high95) of one side's curve, or None when there is no band for it."""
    if bands is None or bands.empty:
        return None
    b = bands[(bands["side"] == side) & (bands["variable"] == variable) & (bands["component"] == component)]
    if b.empty or not np.isfinite(b["low95"].to_numpy(float)).any():
        return None
    return b["percent"].to_numpy(float), b["low95"].to_numpy(float), b["high95"].to_numpy(float)


def legend_entry(data: ReportData) -> LegendEntry:
    """The legend's entry for the bands (their dashed edges, left and right colours): how many
    Monte Carlo samples (or first order) and which error model."""
    u = data.results[0].uncertainty
    how = f"{u.settings.samples} samples" if u.settings.samples else "first order"
    return LegendEntry("outline", tuple(SIDE_COLOURS[s] for s in SIDES),
                       f"95 % band of the mean from input errors ({how}, error model {u.error_model.name})",
                       gids=tuple(f"uncertainty:{s}" for s in SIDES))


def _dominant(result, side: str, parameter: str) -> str:
    c = result.uncertainty.contributions
    if c is None or c.empty:
        return DASH
    sel = c[(c["side"] == side) & (c["parameter"] == parameter)]
    sel = sel[np.isfinite(sel["variance_fraction"].to_numpy(float))]
    if sel.empty:
        return DASH
    top = sel.loc[sel["variance_fraction"].idxmax()]
    return f"{SOURCE_WORDS.get(top['source'], top['source'])} {100 * top['variance_fraction']:.0f} %"


def _cell(x, unit: str) -> str:
    """'1.16 \u00b1 0.12 [0.93, 1.37]' from a parameters_summary row (mean, uncertainty columns)."""
    if x is None or not np.isfinite(float(x.mean)):
        return DASH
    mean, sd, low, high = (float(v) for v in (x.mean, x.uncertainty_sd, x.uncertainty_low95, x.uncertainty_high95))
    digits = 1 if unit in ("%", "deg") or abs(mean) >= 10 else 2
    text = f"{mean:.{digits}f}" + (f" \u00b1 {sd:.{digits}f}" if np.isfinite(sd) else "")
    return text + (f" [{low:.{digits}f}, {high:.{digits}f}]" if np.isfinite(low) and np.isfinite(high) else "")


def parameter_uncertainty_table(data: ReportData) -> Table | None:
    """Kinetic clinical parameters per side (mean over the kinetic cycles) as "value +- SD" of
    the input errors, the 95 % interval and the dominant error source; one block per trial in a
    session. None when a Result has no uncertainty."""
    if not has_uncertainty(data):
        return None
    columns = ["Trial", "Parameter", "Unit", *(f"{s}: value \u00b1 SD [95 %]" for s in SIDES),
               *(f"{s}: largest source" for s in SIDES)]
    rows = []
    for r, trial in zip(data.results, data.trials):
        s = r.parameters_summary
        if s is None or s.empty or "uncertainty_sd" not in s.columns:
            continue
        s = s[s["parameter"].isin(set(r.uncertainty.contributions["parameter"]))]  # the kinetic clinical ones
        keys = list(dict.fromkeys(zip(s["parameter"], s["variable"].fillna(""), s["component"].fillna(""),
                                      s["unit"].fillna(""))))
        by = {(x.side, x.parameter): x for x in s.itertuples(index=False)}
        for parameter, variable, component, unit in keys:
            cells = [by.get((side, parameter)) for side in SIDES]
            rows.append([trial, parameter_name(parameter, variable, component, data.convention), unit,
                         *(_cell(x, unit) for x in cells),
                         *(_dominant(r, side, parameter) if x is not None else DASH for side, x in zip(SIDES, cells))])
    table = Table(columns, rows, wide=("Parameter",))
    if data.is_session:
        return table
    return Table(columns[1:], [row[1:] for row in rows], table.wide)


def table_note(data: ReportData) -> str:
    """What the table's numbers are, in one sentence for above it."""
    u = data.results[0].uncertainty
    how = f"a Monte Carlo of {u.settings.samples} samples" if u.settings.samples else "first-order propagation"
    return (f"Value: mean over the kinetic cycles; \u00b1 SD and the 95 % interval of that mean from the input "
            f"errors of error model '{u.error_model.name}' ({u.settings.plates} plates), by {how}; largest source: "
            "its share of the first-order variance (which input to measure better). Not included: soft-tissue "
            "artefact, the filter's own bias (docs/uncertainty.md).")
