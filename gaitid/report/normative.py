"""The user's normative bands (mean +- SD curves) for the report; gaitid ships none.

CSV format (UTF-8, comma-separated, one header row; lines starting with ``#`` are
comments), one row per point of a curve:

==========  =========  ===================================================================
column      required   meaning
==========  =========  ===================================================================
variable    yes        gaitid output name without side: ``KneeAngles``, ``AnkleMoment``,
                       ``HipPower``... (see :mod:`gaitid.pipeline`)
component   yes        ``X`` (sagittal), ``Y`` (frontal), ``Z`` (transverse); empty for a
                       scalar curve such as a power
percent     yes        % of the gait cycle, 0 to 100 (any spacing; interpolated linearly)
mean        yes        mean curve value, in ``unit``
sd          yes        standard deviation (>= 0), in ``unit``
unit        no         ``deg``, ``N.m/kg``, ``W/kg``...; when given, a band is drawn only on
                       panels in the same unit (a mismatch is listed in the report's
                       warnings instead of being drawn on the wrong scale)
==========  =========  ===================================================================

The curves must use the same sign convention as the report (internal or
external moments, see :mod:`gaitid.report.labels`); bands are pooled over sides.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from gaitid.errors import DataError, FileFormatError
from gaitid.io.atomic import register_input

REQUIRED = ("variable", "component", "percent", "mean", "sd")
NUMERIC = ("percent", "mean", "sd")


@dataclass
class NormativeBands:
    """Normative curves: ``table`` with the columns above (``unit`` '' when not given)."""

    table: pd.DataFrame
    source: str = "normative"
    warnings: list[str] = field(default_factory=list)

    def band(self, variable: str, component: str, unit: str | None = None):
        """(percent, mean, sd) arrays of one curve, sorted by percent; None when the file has
        no such curve or its unit differs from ``unit`` (recorded in ``warnings``)."""
        t = self.table
        sel = t[(t["variable"] == variable) & (t["component"] == component)]
        if sel.empty:
            return None
        file_unit = sel["unit"].iloc[0]
        if unit is not None and file_unit and file_unit != unit:
            msg = (f"{self.source}: {variable} {component or '(scalar)'} is in {file_unit}, the report in {unit}; "
                   "band not drawn")
            if msg not in self.warnings:
                self.warnings.append(msg)
            return None
        sel = sel.sort_values("percent")
        return sel["percent"].to_numpy(float), sel["mean"].to_numpy(float), sel["sd"].to_numpy(float)


def read_normative(source: str | os.PathLike | pd.DataFrame) -> NormativeBands:
    """Read and validate a normative CSV (or a DataFrame with the same columns).

    Raises :class:`FileFormatError` (unreadable file, missing column, non-numeric
    value) or :class:`DataError` (percent outside 0-100, negative SD, a point
    given twice, a curve with fewer than two points, mixed units in one curve),
    naming the file, the column and the line.
    """
    if isinstance(source, NormativeBands):
        return source
    if isinstance(source, pd.DataFrame):
        name, raw = "normative table", source.copy()
    else:
        path = Path(source)
        name = str(path)
        register_input(path)  # no output of this run may replace it
        if not path.is_file():
            raise FileFormatError("normative CSV not found", path)
        try:
            raw = pd.read_csv(path, comment="#", dtype=str, keep_default_na=False, skipinitialspace=True)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
            raise FileFormatError(f"not a readable CSV ({exc})", path) from None
    raw.columns = [str(c).strip().lower() for c in raw.columns]
    missing = [c for c in REQUIRED if c not in raw.columns]
    if missing:
        raise FileFormatError(f"{name}: missing column(s) {', '.join(missing)}; expected "
                              f"{', '.join(REQUIRED)} (+ optional unit)")
    if raw.empty:
        raise DataError(f"{name}: no rows")
    def text(col: str) -> pd.Series:  # empty cells (NaN from a DataFrame) become ''
        return raw[col].fillna("").astype(str).str.strip()

    table = pd.DataFrame({
        "variable": text("variable"),
        "component": text("component").str.upper(),
        "unit": text("unit") if "unit" in raw.columns else "",
    })
    line = np.arange(len(raw)) + 2  # 1-based line numbers after the header (comments aside)
    for col in NUMERIC:
        values = pd.to_numeric(text(col), errors="coerce")
        bad = ~np.isfinite(values.to_numpy(float))
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise FileFormatError(f"{name}: column '{col}' row {line[k]}: {raw[col].iloc[k]!r} is not a finite number")
        table[col] = values.to_numpy(float)
    if (table["variable"] == "").any():
        k = int(np.flatnonzero(table["variable"] == "")[0])
        raise FileFormatError(f"{name}: column 'variable' row {line[k]} is empty")
    bad = ~table["component"].isin(["X", "Y", "Z", ""])
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise DataError(f"{name}: column 'component' row {line[k]}: {raw['component'].iloc[k]!r} "
                        "must be X, Y, Z or empty")
    for col, ok, why in (("percent", (table["percent"] >= 0) & (table["percent"] <= 100), "must be within 0-100"),
                         ("sd", table["sd"] >= 0, "must be >= 0")):
        if not ok.all():
            k = int(np.flatnonzero(~ok.to_numpy())[0])
            raise DataError(f"{name}: column '{col}' row {line[k]}: {table[col].iloc[k]} {why}")
    dup = table.duplicated(["variable", "component", "percent"])
    if dup.any():
        k = int(np.flatnonzero(dup.to_numpy())[0])
        raise DataError(f"{name}: row {line[k]} repeats {table['variable'].iloc[k]} "
                        f"{table['component'].iloc[k]} at {table['percent'].iloc[k]} %")
    for (var, comp), g in table.groupby(["variable", "component"], sort=False):
        if len(g) < 2:
            raise DataError(f"{name}: curve {var} {comp} has a single point; give at least two percent values")
        if g["unit"].nunique() > 1:
            raise DataError(f"{name}: curve {var} {comp} mixes units {', '.join(sorted(g['unit'].unique()))}")
    return NormativeBands(table.reset_index(drop=True), source=name)
