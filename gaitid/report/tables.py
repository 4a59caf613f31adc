"""Tables of a report as display strings (shared by the PDF and the HTML page)."""

from __future__ import annotations

import numpy as np
import pandas as pd

import gaitid
from gaitid.report.data import ReportData
from gaitid.report.labels import PLANES, quantity, sign_label
from gaitid.vocabulary import SIDES

SPATIOTEMPORAL = ("walking_speed", "cadence", "stride_time", "stride_length", "step_time", "step_length",
                  "stance", "swing", "double_support", "single_support", "opposite_foot_off",
                  "opposite_foot_strike")


def _fmt(mean: float, sd: float, n: int) -> str:
    if not np.isfinite(mean):
        return "\u2013"
    digits = 3 if abs(mean) < 10 else 1
    sd_text = f" \u00b1 {sd:.{digits}f}" if np.isfinite(sd) else ""
    return f"{mean:.{digits}f}{sd_text} (n={n})"


def _name(row, convention: str = "internal") -> str:
    p = str(row["parameter"])
    if p in SPATIOTEMPORAL:
        return p.replace("_", " ").capitalize()
    var, comp = str(row["variable"]), str(row["component"])
    if var.endswith("Moment") and p.startswith(var):
        kind = p[len(var):].strip()
        sign = sign_label(var, comp, convention)
        return f"{quantity(var)} {PLANES.get(comp, comp).lower()} {kind} ({sign.replace(' (+)', ' +')})" if sign \
            else f"{quantity(var)} {comp} {kind}"
    if var.endswith("Power"):
        return f"{p} ({quantity(var).lower()} burst)"
    return p


def parameter_table(data: ReportData, kind: str = "spatiotemporal") -> pd.DataFrame:
    """Mean +- SD (n) per side of the discrete parameters; ``kind`` 'spatiotemporal' or 'kinetic'.

    Kinetic rows add the mean timing (% cycle) of the peak per side. A moment's name carries
    the sign label of :mod:`gaitid.report.labels` for the report's convention ("Ankle moment
    sagittal max (Plantarflexor +)" = the peak plantarflexor moment).
    """
    s = data.parameters_summary
    if s is None or s.empty:
        return pd.DataFrame(columns=["Parameter", "Unit", "Left", "Right"])
    st = s["parameter"].isin(SPATIOTEMPORAL)
    s = s[st] if kind == "spatiotemporal" else s[~st]
    rows = []
    keys = ["parameter", "variable", "component", "unit"]
    order = list(dict.fromkeys(map(tuple, s[keys].astype(str).to_numpy())))
    if kind == "spatiotemporal":
        order.sort(key=lambda k: SPATIOTEMPORAL.index(k[0]))
    for key in order:
        row = dict(zip(keys, key))
        out = {"Parameter": _name(row, data.convention), "Unit": row["unit"]}
        for side in SIDES:
            sel = s[(s["side"] == side) & (s[keys].astype(str) == pd.Series(row)).all(axis=1)]
            if sel.empty:
                out[side] = "\u2013"
                if kind != "spatiotemporal":
                    out[f"{side} timing [%]"] = "\u2013"
                continue
            r = sel.iloc[0]
            out[side] = _fmt(float(r["mean"]), float(r["sd"]), int(r["n"]))
            if kind != "spatiotemporal":
                pm = float(r.get("percent_mean", np.nan))
                out[f"{side} timing [%]"] = f"{pm:.0f}" if np.isfinite(pm) else "\u2013"
        rows.append(out)
    return pd.DataFrame(rows)


def cycles_table(data: ReportData) -> pd.DataFrame:
    c = data.cycles
    if c.empty:
        return pd.DataFrame(columns=["Trial", "Side", "Cycle", "Start [s]", "End [s]", "Foot off [%]", "Kinetic"])
    out = pd.DataFrame({
        "Trial": c["trial"], "Side": c["side"], "Cycle": c["cycle"] + 1,
        "Start [s]": c["start_s"].map(lambda v: f"{v:.3f}"), "End [s]": c["end_s"].map(lambda v: f"{v:.3f}"),
        "Foot off [%]": c["foot_off_pct"].map(lambda v: f"{v:.1f}"),
        "Kinetic": [f"yes (plate {p})" if k else f"no: {r}" for k, p, r in zip(c["kinetic"], c["plates"], c["reason"])],
    })
    return out if data.is_session else out.drop(columns=["Trial"])


def contacts_table(data: ReportData) -> pd.DataFrame:
    c = data.contacts
    if c is None or c.empty:
        return pd.DataFrame(columns=["Plate(s)", "Foot", "Strike [s]", "Off [s]", "Valid", "Reason", "Source"])
    out = pd.DataFrame({
        "Trial": c["trial"], "Plate(s)": c["plates"], "Foot": c["side"],
        "Strike [s]": c["strike_time_s"].map(lambda v: f"{v:.3f}"),
        "Off [s]": c["off_time_s"].map(lambda v: f"{v:.3f}"),
        "Valid": c["valid"].map(lambda v: "yes" if v else "no"), "Reason": c["reason"].fillna(""),
        "Source": c["source"],
    })
    return out if data.is_session else out.drop(columns=["Trial"])


def trials_table(data: ReportData) -> pd.DataFrame:
    """One row per trial of a session: file, subject mass, cycles and kinetic cycles per side."""
    rows = []
    for r, name in zip(data.results, data.trials):
        c = data.cycles[data.cycles["trial"] == name]
        row = {"Trial": name, "File": str(r.trial.path) if r.trial.path is not None else "",
               "Mass [kg]": f"{r.trial.subject.mass:.1f}" if r.trial.subject.mass else "\u2013"}
        for side in SIDES:
            cs = c[c["side"] == side]
            row[f"{side} cycles (kinetic)"] = f"{len(cs)} ({int(cs['kinetic'].sum())})"
        row["Warnings"] = len(r.warnings)
        rows.append(row)
    return pd.DataFrame(rows)


def settings_table(data: ReportData) -> pd.DataFrame:
    return pd.DataFrame({"Setting": list(data.settings), "Value": [str(v) for v in data.settings.values()]})


def _filters(s: dict) -> str:
    def hz(v):
        return "none" if v is None else f"{v:g} Hz"

    markers = s.get("marker_cutoff_hz")
    plates = s.get("force_cutoff_hz")
    plates_text = f"{hz(markers)} (as markers)" if plates == "markers" else hz(plates)
    return (f"low-pass zero-lag Butterworth order {s.get('filter_order')}, markers {hz(markers)}, "
            f"force plates {plates_text}")


def header_lines(data: ReportData) -> list[str]:
    """Trial(s), subject, processing date, gaitid version and the settings that change the numbers."""
    s = data.settings
    counts = data.cycles.groupby("side")["kinetic"].agg(["size", "sum"]) if not data.cycles.empty else None
    cyc = ", ".join(f"{side}: {int(counts.loc[side, 'size'])} cycles ({int(counts.loc[side, 'sum'])} kinetic)"
                    for side in SIDES if counts is not None and side in counts.index) or "no complete cycle"
    trials = ", ".join(data.trials)
    return [
        f"{'Trials' if data.is_session else 'Trial'}: {trials}",
        f"Subject: {data.subject_text()}",
        f"Processed: {data.created} with gaitid {gaitid.__version__}",
        f"Model: {s.get('model')}; moments {s.get('convention')}, in the {s.get('frame')} segment frame; "
        f"normalised by {s.get('normalise')}",
        f"Filters: {_filters(s)}; events: {s.get('events')}",
        f"Cycles: {cyc}",
    ]
