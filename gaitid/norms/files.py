"""Normative data files: gaitid's TOML (read and write), a simple curves CSV, Vicon's GCD text format.

Layouts: docs/clinical.md. :func:`read_norms` picks the format from the file's suffix.
"""

from __future__ import annotations

import functools
import json
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd

from gaitid.core.errors import DataError, FileFormatError, GaitIDError, SettingsError
from gaitid.cycles.scores import GPS_VARIABLES, SCORE_PERCENT, GDIBasis
from gaitid.io.atomic import register_input
from gaitid.io.input_files import input_file
from gaitid.norms.data import (
    BAND_COLUMNS,
    CURVE_COLUMNS,
    FORMAT,
    PARAMETER_COLUMNS,
    SCORE_NORM_COLUMNS,
    VERSION,
    Norms,
)

# gaitid's norms file of a large lab (four speed bands x both sides x 75 curves of 51 points, the GDI
# basis) takes about 1 MB. The parsers hold 10-25 times a file's size in memory (a 19 MB TOML: 11 s,
# 480 MB; 50 MB: 27 s, 1.1 GB), so a larger file is refused with the reason.
MAX_NORMS_FILE_BYTES = 20 * 2**20


def read_norms(source) -> Norms:
    """Norms from a gaitid TOML file, a curves CSV, a Vicon GCD file, a DataFrame in the CSV layout,
    or a Norms (returned as is). The format follows the file's suffix (.toml, .csv, .gcd)."""
    if isinstance(source, Norms):
        return source
    if isinstance(source, pd.DataFrame):
        return _curves_csv(source.copy(), "normative table")
    path = Path(source)
    register_input(path)  # no output of this run may replace it
    input_file(path, "normative data file", MAX_NORMS_FILE_BYTES)
    suffix = path.suffix.lower()
    if suffix == ".toml":
        try:
            return _read_toml(path)
        except RecursionError:
            raise FileFormatError("TOML nested too deeply: not a gaitid norms file", path) from None
        except (ValueError, TypeError, AttributeError, KeyError) as exc:  # a value of the wrong kind
            raise FileFormatError(f"not a gaitid norms file: a value of the wrong type ({exc})", path) from None
    if suffix == ".gcd":
        return read_gcd(path)
    if suffix in (".csv", ".txt"):
        try:
            raw = pd.read_csv(path, comment="#", dtype=str, keep_default_na=False, skipinitialspace=True)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
            raise FileFormatError(f"not a readable CSV ({exc})", path) from None
        return _curves_csv(raw, str(path))
    raise FileFormatError(f"unknown normative data format {suffix!r}: give a .toml (gaitid norms build), "
                          ".csv or Vicon .gcd file", path)


def read_norms_setting(path: str | os.PathLike | None, convention: str) -> Norms | None:
    """The norms a run is set to use (``--norms`` or ``GAITID_NORMS``): None for no path or
    'none', else :func:`read_norms` in the moments' ``convention``. Parsed once per process while
    the file is unchanged (a batch worker scores many trials; a norms file takes about 0.2 s to
    read); registered as an input on every call. The Norms returned is shared: do not modify it."""
    if path is None or str(path).lower() == "none":
        return None
    register_input(path)
    try:
        st = Path(path).resolve().stat()
    except (OSError, RuntimeError):  # (RuntimeError: a symbolic-link loop, Python < 3.13)
        return read_norms(path).in_convention(convention)  # the reader's error names the file
    return _norms_in_convention(str(Path(path).resolve()), st.st_mtime_ns, st.st_size, convention)


@functools.lru_cache(maxsize=8)
def _norms_in_convention(path: str, mtime_ns: int, size: int, convention: str) -> Norms:
    return read_norms(path).in_convention(convention)


REQUIRED = ("variable", "component", "percent", "mean", "sd")


def _curves_csv(raw: pd.DataFrame, name: str) -> Norms:
    """The CSV layout (docs/clinical.md): variable, component, percent, mean, sd [, unit, side, n]."""
    raw.columns = [str(c).strip().lower() for c in raw.columns]
    missing = [c for c in REQUIRED if c not in raw.columns]
    if missing:
        raise FileFormatError(f"{name}: missing column(s) {', '.join(missing)}; expected "
                              f"{', '.join(REQUIRED)} (+ optional unit, side, n)")
    if raw.empty:
        raise DataError(f"{name}: no rows")

    def text(col: str) -> pd.Series:  # empty cells (NaN from a DataFrame) become ''
        return raw[col].fillna("").astype(str).str.strip()

    table = pd.DataFrame({
        "band": "",
        "side": text("side").str.capitalize() if "side" in raw.columns else "",
        "variable": text("variable"),
        "component": text("component").str.upper(),
        "unit": text("unit") if "unit" in raw.columns else "",
    })
    line = np.arange(len(raw)) + 2  # 1-based line numbers after the header (comments aside)
    for col in ("percent", "mean", "sd"):
        values = pd.to_numeric(text(col), errors="coerce")
        bad = ~np.isfinite(values.to_numpy(float))
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise FileFormatError(f"{name}: column '{col}' row {line[k]}: {raw[col].iloc[k]!r} is not a finite number")
        table[col] = values.to_numpy(float)
    table["n"] = pd.to_numeric(text("n"), errors="coerce").to_numpy(float) if "n" in raw.columns else np.nan
    if (table["variable"] == "").any():
        k = int(np.flatnonzero(table["variable"] == "")[0])
        raise FileFormatError(f"{name}: column 'variable' row {line[k]} is empty")
    for col, allowed in (("component", ["X", "Y", "Z", ""]), ("side", ["Left", "Right", ""])):
        bad = ~table[col].isin(allowed)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise DataError(f"{name}: column '{col}' row {line[k]}: {raw[col].iloc[k]!r} "
                            f"must be {', '.join(a or 'empty' for a in allowed)}")
    for col, ok, why in (("percent", (table["percent"] >= 0) & (table["percent"] <= 100), "must be within 0-100"),
                         ("sd", table["sd"] >= 0, "must be >= 0")):
        if not ok.all():
            k = int(np.flatnonzero(~ok.to_numpy())[0])
            raise DataError(f"{name}: column '{col}' row {line[k]}: {table[col].iloc[k]} {why}")
    dup = table.duplicated(["side", "variable", "component", "percent"])
    if dup.any():
        k = int(np.flatnonzero(dup.to_numpy())[0])
        raise DataError(f"{name}: row {line[k]} repeats {table['variable'].iloc[k]} "
                        f"{table['component'].iloc[k]} at {table['percent'].iloc[k]} %")
    for (_, var, comp), g in table.groupby(["side", "variable", "component"], sort=False):
        if len(g) < 2:
            raise DataError(f"{name}: curve {var} {comp} has a single point; give at least two percent values")
        if g["unit"].nunique() > 1:
            raise DataError(f"{name}: curve {var} {comp} mixes units {', '.join(sorted(g['unit'].unique()))}")
    return Norms(curves=table[CURVE_COLUMNS].reset_index(drop=True), meta={"format": "csv"}, source=name)


# ------------------------------------------------------------------ Vicon GCD

# GCD name -> (gaitid variable, component); Vicon's normal-data names (gaitutils' mapping,
# the Gillette reader), Plug-in Gait layout.
GCD_CURVES = {
    "PelvicTilt": ("PelvisAngles", "X"), "PelvicObliquity": ("PelvisAngles", "Y"),
    "PelvicRotation": ("PelvisAngles", "Z"), "HipFlexExt": ("HipAngles", "X"), "HipAbAdduct": ("HipAngles", "Y"),
    "HipRotation": ("HipAngles", "Z"), "KneeFlexExt": ("KneeAngles", "X"), "KneeValgVar": ("KneeAngles", "Y"),
    "KneeRotation": ("KneeAngles", "Z"), "DorsiPlanFlex": ("AnkleAngles", "X"), "FootRotation": ("AnkleAngles", "Z"),
    "FootProgression": ("FootProgressAngles", "Z"),
    "HipFlexExtMoment": ("HipMoment", "X"), "HipAbAdductMoment": ("HipMoment", "Y"),
    "HipRotationMoment": ("HipMoment", "Z"), "KneeFlexExtMoment": ("KneeMoment", "X"),
    "KneeValgVarMoment": ("KneeMoment", "Y"), "KneeRotationMoment": ("KneeMoment", "Z"),
    "DorsiPlanFlexMoment": ("AnkleMoment", "X"), "FootAbAdductMoment": ("AnkleMoment", "Y"),
    "FootRotationMoment": ("AnkleMoment", "Z"),
    "HipPower": ("HipPower", ""), "KneePower": ("KneePower", ""), "AnklePower": ("AnklePower", ""),
}
# scalar GCD values whose unit is certain: name -> (gaitid parameter, factor to gaitid's unit, unit)
GCD_SCALARS = {
    "FootOff": ("stance", 1.0, "%"), "OppositeFootOff": ("opposite_foot_off", 1.0, "%"),
    "OppositeFootContact": ("opposite_foot_strike", 1.0, "%"),
    "StrideLength": ("stride_length", 1e-3, "m"), "StePLength": ("step_length", 1e-3, "m"),
    "StepLength": ("step_length", 1e-3, "m"),
}


def read_gcd(path: str | os.PathLike) -> Norms:
    """Read a Vicon GCD (gait cycle data) text file as Norms.

    Layout (as Vicon's and Gillette's normal-data files show it): a ``#!DST... GCD`` first line;
    ``$SECTION`` lines (``$PREFIXES``, ``$COMMENTS``) followed by text lines; ``!Name [k]``
    starts a variable, followed by its rows: ``mean sd`` (normal data) or one value (a subject's
    file); 51 rows = 0, 2, ..., 100 % of the cycle, 1 row = a scalar. ``Left``/``Right`` prefixes
    (``!LeftPelvicTilt``) give one side; unprefixed names are pooled over sides. Moments are
    Plug-in Gait's external convention (N.m/kg; values above 20 are taken as N.mm/kg), powers W/kg,
    angles degrees. Variables gaitid has no name for, multi-column ones (``PelvicOrigin-3``) and
    scalars whose unit is not certain (Cadence, Speed, times) are skipped and listed in ``warnings``.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        text = path.read_text(encoding="latin-1")
    except OSError as exc:
        raise FileFormatError(f"cannot read the GCD file ({exc.strerror or exc})", path) from None
    blocks: list[tuple[str, int, list[list[float]]]] = []
    comments: list[str] = []
    section = None
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("$"):
            section = line[1:].split()[0].upper() if len(line) > 1 else ""
            continue
        if line.startswith("!"):
            name = line[1:].split()[0] if len(line) > 1 else ""
            if not name:
                raise FileFormatError(f"line {lineno}: '!' without a variable name", path)
            blocks.append((name, lineno, []))
            section = None
            continue
        if section is not None or not blocks:
            if section == "COMMENTS":
                comments.append(line)
            continue
        try:
            blocks[-1][2].append([float(x) for x in line.replace(",", " ").split()])
        except ValueError:
            raise FileFormatError(f"line {lineno}: {line!r} is not numbers (variable !{blocks[-1][0]})", path) from None
    if not blocks:
        raise FileFormatError("no '!Variable' block: not a GCD file", path)
    curve_rows, param_rows, skipped, single = [], [], [], False
    for name, lineno, rows in blocks:
        side, base = "", name
        for prefix in ("Left", "Right"):
            if name.startswith(prefix) and len(name) > len(prefix):
                side, base = prefix, name[len(prefix):]
        widths = {len(r) for r in rows}
        if not rows or len(widths) != 1 or widths.pop() > 2:
            skipped.append(name)
            continue
        a = np.array(rows, float)
        mean = a[:, 0]
        sd = a[:, 1] if a.shape[1] == 2 else np.full(len(a), np.nan)
        single |= a.shape[1] == 1
        if base in GCD_CURVES and len(a) == 51:
            var, comp = GCD_CURVES[base]
            unit = "deg" if var.endswith("Angles") else ("W/kg" if var.endswith("Power") else "N.m/kg")
            if var.endswith("Moment") and np.nanmax(np.abs(mean)) > 20:  # N.mm/kg, as Vicon's C3D points
                mean, sd = mean / 1000.0, sd / 1000.0
            curve_rows.append(pd.DataFrame({"band": "", "side": side, "variable": var, "component": comp,
                                            "unit": unit, "percent": SCORE_PERCENT, "mean": mean, "sd": sd,
                                            "n": np.nan}))
        elif base in GCD_SCALARS and len(a) == 1:
            par, factor, unit = GCD_SCALARS[base]
            param_rows.append(("", side, par, "", "", unit, mean[0] * factor, sd[0] * factor, np.nan))
        else:
            skipped.append(name)
    if not curve_rows and not param_rows:
        raise FileFormatError(f"no variable gaitid knows ({', '.join(b[0] for b in blocks[:5])}...)", path)
    warnings = []
    if skipped:
        warnings.append(f"{path.name}: not read (no gaitid equivalent, uncertain unit, or not 51 points): "
                        f"{', '.join(sorted(set(skipped)))}")
    if single:
        warnings.append(f"{path.name}: some variables have one value per row (a subject's GCD, not normal "
                        "data?): their SD is unknown (NaN) and no band is drawn for them")
    curves = pd.concat(curve_rows, ignore_index=True) if curve_rows else pd.DataFrame(columns=CURVE_COLUMNS)
    curves = curves.drop_duplicates(["side", "variable", "component", "percent"], keep="first")
    params = pd.DataFrame(param_rows, columns=PARAMETER_COLUMNS).drop_duplicates(["side", "parameter"])
    meta = {"format": "gcd", "convention": "external", "normalise": "mass",
            "source": " ".join(comments) or f"Vicon GCD file {path.name}"}
    return Norms(curves=curves[CURVE_COLUMNS].reset_index(drop=True), parameters=params, meta=meta,
                 source=str(path), warnings=warnings)


# ------------------------------------------------------------------ TOML


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if not math.isfinite(v):
            return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
        text = format(v, ".9g")  # 9 significant digits: far below any measurement's resolution
        return text if any(ch in text for ch in ".en") else text + ".0"
    if isinstance(v, str):
        return json.dumps(v)  # a JSON string is a TOML basic string
    if isinstance(v, (list, tuple, np.ndarray)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise SettingsError(f"cannot write {type(v).__name__} {v!r} to TOML")


def _toml_table(header: str, items: dict) -> list[str]:
    return [header] + [f"{k} = {_toml_value(v)}" for k, v in items.items() if v is not None] + [""]


def norms_toml(norms: Norms) -> str:
    """The TOML text of ``norms`` (layout in docs/clinical.md)."""
    meta = {"format": FORMAT, "version": VERSION, **{k: v for k, v in norms.meta.items()
                                                      if k not in ("format", "version") and v is not None}}
    out = ["# gaitid normative data (https://github.com/gaitid; docs/clinical.md)", ""]
    out += _toml_table("[meta]", meta)
    for _, b in norms.bands.iterrows():
        out += _toml_table("[[bands]]", {"name": b["band"], "speed_min_m_s": float(b["speed_min_m_s"]),
                                         "speed_max_m_s": float(b["speed_max_m_s"])})
    c = norms.curves.sort_values(["band", "side", "variable", "component", "percent"], kind="stable")
    for (band, side, var, comp), g in c.groupby(["band", "side", "variable", "component"], sort=False):
        n = g["n"].to_numpy(float)
        out += _toml_table("[[curves]]", {"band": band, "side": side, "variable": var, "component": comp,
                                          "unit": str(g["unit"].iloc[0]),
                                          "percent": g["percent"].to_numpy(float), "mean": g["mean"].to_numpy(float),
                                          "sd": g["sd"].to_numpy(float),
                                          "n": [int(v) for v in n] if np.isfinite(n).all() else None})
    for _, p in norms.parameters.iterrows():
        out += _toml_table("[[parameters]]", {"band": p["band"], "side": p["side"], "parameter": p["parameter"],
                                              "variable": p["variable"], "component": p["component"],
                                              "unit": p["unit"], "mean": float(p["mean"]), "sd": float(p["sd"]),
                                              "n": int(p["n"]) if np.isfinite(p["n"]) else None})
    for _, s in norms.scores.iterrows():
        out += _toml_table("[[scores]]", {"band": s["band"], "score": s["score"], "name": s["name"],
                                          "variable": s["variable"], "component": s["component"],
                                          "mean": float(s["mean"]), "sd": float(s["sd"]), "n": int(s["n"])})
    if norms.gdi is not None:
        g = norms.gdi
        out += _toml_table("[gdi]", {"variables": [f"{v} {c}" for v, c, _ in GPS_VARIABLES],
                                     "percent": SCORE_PERCENT, "n_features": int(g.features.shape[1]),
                                     "n_strides": int(g.n_strides), "ln_distance_mean": g.ln_mean,
                                     "ln_distance_sd": g.ln_sd, "control_mean": g.control_mean,
                                     "features": [g.features[:, k] for k in range(g.features.shape[1])]})
    return "\n".join(out)


def write_norms(norms: Norms, path: str | os.PathLike) -> Path:
    """Write ``norms`` as TOML, atomically (read it back with :func:`read_norms`)."""
    from gaitid.io.atomic import atomic_path

    path = Path(path)
    text = norms_toml(norms)
    try:
        with atomic_path(path) as tmp:
            tmp.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise GaitIDError(f"cannot write the norms file: {exc.strerror or exc}", path) from exc
    return path


def _read_toml(path: Path) -> Norms:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise FileFormatError(f"not a readable TOML file ({exc})", path) from None
    meta = doc.get("meta", {})
    if meta.get("format") != FORMAT:
        raise FileFormatError(f"[meta] format = {meta.get('format')!r}: not a gaitid norms file "
                              f"(expected {FORMAT!r})", path)
    if int(meta.get("version", 0)) > VERSION:
        raise FileFormatError(f"norms file version {meta.get('version')} is newer than this gaitid reads "
                              f"({VERSION}); update gaitid", path)

    def need(entry: dict, key: str, where: str):
        if key not in entry:
            raise FileFormatError(f"{where} lacks '{key}'", path)
        return entry[key]

    def numbers(entry: dict, key: str, where: str) -> np.ndarray:
        try:
            return np.asarray(need(entry, key, where), float)
        except (TypeError, ValueError):
            raise FileFormatError(f"{where}: {key} must be a list of numbers, not {str(entry[key])[:60]}",
                                  path) from None

    curves = []
    for i, e in enumerate(doc.get("curves", []), 1):
        where = f"[[curves]] #{i} ({e.get('variable', '?')} {e.get('component', '')})"
        pct, mean, sd = (numbers(e, k, where) for k in ("percent", "mean", "sd"))
        if not (pct.shape == mean.shape == sd.shape) or pct.ndim != 1 or pct.size < 2:
            raise FileFormatError(f"{where}: percent, mean and sd must be lists of one length (>= 2)", path)
        if not (np.all(np.diff(pct) > 0) and pct[0] >= 0 and pct[-1] <= 100):
            raise FileFormatError(f"{where}: percent must increase within 0-100", path)
        if (sd < 0).any():
            raise FileFormatError(f"{where}: sd must be >= 0", path)
        n = np.broadcast_to(np.asarray(e.get("n", np.nan), float), pct.shape) if np.ndim(e.get("n", 0)) == 0 \
            else np.asarray(e["n"], float)
        if n.shape != pct.shape:
            raise FileFormatError(f"{where}: n must be one number or a list as long as percent", path)
        curves.append(pd.DataFrame({"band": str(e.get("band", "")), "side": str(e.get("side", "")),
                                    "variable": str(need(e, "variable", where)), "component": str(e.get("component", "")),
                                    "unit": str(e.get("unit", "")), "percent": pct, "mean": mean, "sd": sd,
                                    "n": n}))
    params = pd.DataFrame([(str(e.get("band", "")), str(e.get("side", "")), str(need(e, "parameter", "[[parameters]]")),
                            str(e.get("variable", "")), str(e.get("component", "")), str(e.get("unit", "")),
                            float(need(e, "mean", "[[parameters]]")), float(e.get("sd", np.nan)),
                            float(e.get("n", np.nan))) for e in doc.get("parameters", [])], columns=PARAMETER_COLUMNS)
    scores = pd.DataFrame([(str(e.get("band", "")), str(need(e, "score", "[[scores]]")), str(need(e, "name", "[[scores]]")),
                            str(e.get("variable", "")), str(e.get("component", "")), float(e["mean"]),
                            float(e.get("sd", np.nan)), int(e.get("n", 0))) for e in doc.get("scores", [])],
                          columns=SCORE_NORM_COLUMNS)
    bands = pd.DataFrame([(str(need(e, "name", "[[bands]]")), float(need(e, "speed_min_m_s", "[[bands]]")),
                           float(need(e, "speed_max_m_s", "[[bands]]"))) for e in doc.get("bands", [])],
                         columns=BAND_COLUMNS)
    gdi = None
    if "gdi" in doc:
        g = doc["gdi"]
        expected = [f"{v} {c}" for v, c, _ in GPS_VARIABLES]
        if g.get("variables") != expected or not np.allclose(g.get("percent", []), SCORE_PERCENT):
            raise FileFormatError("[gdi]: variables/percent differ from gaitid's GDI layout "
                                  f"({', '.join(expected)} at every 2 %)", path)
        f = np.asarray(need(g, "features", "[gdi]"), float).T
        if f.shape[0] != len(expected) * SCORE_PERCENT.size:
            raise FileFormatError(f"[gdi]: each feature must have {len(expected) * SCORE_PERCENT.size} values", path)
        gdi = GDIBasis(features=f, control_mean=np.asarray(need(g, "control_mean", "[gdi]"), float),
                       ln_mean=float(need(g, "ln_distance_mean", "[gdi]")), ln_sd=float(need(g, "ln_distance_sd", "[gdi]")),
                       n_strides=int(g.get("n_strides", 0)))
    curves = pd.concat(curves, ignore_index=True) if curves else pd.DataFrame(columns=CURVE_COLUMNS)
    return Norms(curves=curves[CURVE_COLUMNS], parameters=params, scores=scores, bands=bands, gdi=gdi,
                 meta={k: v for k, v in meta.items()}, source=str(path))


