"""Summary scores of gait kinematics against a reference: GVS, GPS, MAP (Baker et al. 2009) and GDI
(Schwartz & Rozumalski 2008).

The nine kinematic variables (:data:`GPS_VARIABLES`, Plug-in Gait angles in degrees) are taken
at **51 points**, every 2 % of the cycle (0, 2, ..., 100 %), as Baker et al. and the GDI do.

- **GVS** (Gait Variable Score) of one variable and side: the root mean square, over the 51
  points, of the difference between the subject's mean curve (mean over that side's cycles whose
  nine curves are complete, when some are not: a marker gap left NaN spoils only its cycle; the
  table's ``n_cycles`` and ``note`` say how many were used) and the reference mean curve. A curve
  with a missing point in some cycle, when no cycle is complete, has no GVS (NaN).
- **GPS** (Gait Profile Score) of a side: the root mean square of that side's nine GVS
  (pelvis curves taken over that side's cycles). **Overall GPS**: the root mean square of
  15 GVS, the nine of the left side and the six non-pelvic ones of the right (the pelvis
  counted once, from the left, by Baker's convention); see docs/clinical.md for why.
- **MAP** (Movement Analysis Profile): the nine GVS per side and the GPS, drawn as a bar chart
  (:func:`gaitid.report.mapchart.map_figure`).
- **GDI** (Gait Deviation Index): a stride's 9 x 51 = 459 angles, concatenated in the order of
  :data:`GPS_VARIABLES`, form its gait vector g. The basis: the first ``k`` = 15 right singular
  vectors of the controls' matrix of gait vectors (one row per stride, not centred), the
  features F (459, k). A vector's features c = F^T g; its distance to the controls' mean
  features d = |c - mean(c_controls)|; GDI = 100 - 10 (ln d - mean(ln d_controls)) /
  sd(ln d_controls) (sample SD), so the controls' strides average 100 with SD 10. A subject's
  GDI per side uses the mean gait vector of that side's cycles.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from gaitid.core.errors import DataError
from gaitid.cycles.clinical import curve_matrices
from gaitid.cycles.curves import interpolate

GPS_VARIABLES: tuple[tuple[str, str, str], ...] = (
    ("PelvisAngles", "X", "pelvic tilt"),
    ("PelvisAngles", "Y", "pelvic obliquity"),
    ("PelvisAngles", "Z", "pelvic rotation"),
    ("HipAngles", "X", "hip flexion"),
    ("HipAngles", "Y", "hip adduction"),
    ("HipAngles", "Z", "hip rotation"),
    ("KneeAngles", "X", "knee flexion"),
    ("AnkleAngles", "X", "ankle dorsiflexion"),
    ("FootProgressAngles", "Z", "foot progression"),
)
N_PELVIS = 3  # the first three variables: the pelvis, counted once (left) in the overall GPS
SCORE_PERCENT = np.linspace(0.0, 100.0, 51)
GDI_FEATURES = 15
SCORE_COLUMNS = ["score", "side", "name", "variable", "component", "value", "unit", "n_cycles", "reference_mean",
                 "reference_sd", "band", "note"]


# --------------------------------------------------------------------------- the arithmetic (pure numpy)


def rms(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Root mean square along ``axis`` (NaN if any value is NaN)."""
    x = np.asarray(x, float)
    return np.sqrt(np.mean(x * x, axis=axis))


def gait_variable_scores(subject: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """GVS (..., n_variables): RMS over the last axis of ``subject`` (..., n_variables, T) minus
    ``reference`` (n_variables, T), in the curves' unit."""
    return rms(np.asarray(subject, float) - np.asarray(reference, float), axis=-1)


def gait_profile_score(gvs: np.ndarray) -> np.ndarray:
    """GPS: RMS of the GVS along the last axis."""
    return rms(gvs, axis=-1)


def overall_gait_profile_score(gvs_left: np.ndarray, gvs_right: np.ndarray) -> np.ndarray:
    """Overall GPS: RMS of the 9 left GVS and the 6 non-pelvic right GVS (15 values)."""
    return rms(np.concatenate([np.asarray(gvs_left, float), np.asarray(gvs_right, float)[..., N_PELVIS:]], axis=-1))


@dataclass(frozen=True)
class GDIBasis:
    """What the GDI needs from the controls: ``features`` (n_values, k) orthonormal columns, the
    controls' mean feature vector ``control_mean`` (k,), and the mean and sample SD of the controls'
    ln distances (``ln_mean``, ``ln_sd``); ``n_strides`` controls' strides."""

    features: np.ndarray
    control_mean: np.ndarray
    ln_mean: float
    ln_sd: float
    n_strides: int

    @classmethod
    def from_controls(cls, vectors: np.ndarray, n_features: int = GDI_FEATURES) -> "GDIBasis":
        """Basis from the controls' gait vectors (n_strides, n_values): SVD, first ``n_features``
        right singular vectors. Raises DataError with fewer strides than features (no basis) or
        with strides that have missing values."""
        g = np.asarray(vectors, float)
        if g.ndim != 2:
            raise DataError(f"GDI: gait vectors must be (n_strides, n_values), got shape {g.shape}")
        if not np.isfinite(g).all():
            raise DataError("GDI: some control gait vectors have missing values; drop those strides first")
        if g.shape[0] < max(n_features, 2):
            raise DataError(f"GDI needs at least {max(n_features, 2)} control strides to form a {n_features}-feature "
                            f"basis; the controls give {g.shape[0]}")
        _, s, vt = np.linalg.svd(g, full_matrices=False)
        if s[n_features - 1] <= s[0] * 1e-10:
            raise DataError(f"GDI: the control strides span fewer than {n_features} independent directions "
                            f"(identical strides?); no {n_features}-feature basis")
        f = vt[:n_features].T
        c = g @ f
        mean = c.mean(axis=0)
        ln_d = np.log(np.linalg.norm(c - mean, axis=1))
        return cls(features=f, control_mean=mean, ln_mean=float(ln_d.mean()), ln_sd=float(ln_d.std(ddof=1)),
                   n_strides=g.shape[0])

    def feature_vectors(self, vectors: np.ndarray) -> np.ndarray:
        """Features (..., k) of gait vectors (..., n_values)."""
        return np.asarray(vectors, float) @ self.features

    def gdi(self, vectors: np.ndarray) -> np.ndarray:
        """GDI of gait vectors (..., n_values): 100 - 10 z, z the ln distance z-scored on the controls."""
        d = np.linalg.norm(self.feature_vectors(vectors) - self.control_mean, axis=-1)
        with np.errstate(divide="ignore"):
            z = (np.log(d) - self.ln_mean) / self.ln_sd
        return 100.0 - 10.0 * z


# --------------------------------------------------------------------------- from gaitid's tables


def resample(values: np.ndarray, percent: np.ndarray, to: np.ndarray = SCORE_PERCENT) -> np.ndarray:
    """Curves (..., P) sampled at ``percent`` (P,, ascending) resampled linearly at ``to`` (NaN
    outside and next to NaN: scipy's ``interp1d`` rule and arithmetic, by :func:`gaitid.cycles.curves.interpolate`,
    which does not import scipy.interpolate: half a second on a report's first use)."""
    percent = np.asarray(percent, float)
    if percent.shape == to.shape and np.allclose(percent, to):
        return np.asarray(values, float)
    return np.moveaxis(interpolate(np.moveaxis(np.asarray(values, float), -1, 0), percent, np.asarray(to, float)), 0, -1)


def kinematic_curves(curves: pd.DataFrame, side: str) -> tuple[np.ndarray, list]:
    """The nine GPS curves of every cycle of one side: (n_cycles, 9, 51) degrees at every 2 %, and the
    cycle keys ((trial, cycle) when ``curves`` has a ``trial`` column, else cycle). A variable a
    cycle lacks is NaN."""
    keys = ["trial", "cycle"] if "trial" in curves.columns else ["cycle"]
    m = curve_matrices(curves[curves["side"] == side], keys, {v for v, _, _ in GPS_VARIABLES})
    n = len(m.keys)
    out = np.full((n, len(GPS_VARIABLES), SCORE_PERCENT.size), np.nan)
    for j, (var, comp, _) in enumerate(GPS_VARIABLES):
        if (var, comp) in m.values:
            out[:, j, :] = resample(m.values[var, comp], m.percent)
    return out, list(m.keys.itertuples(index=False, name=None)) if len(keys) > 1 else m.keys["cycle"].tolist()


def gait_vectors(kinematics: np.ndarray) -> np.ndarray:
    """Gait vectors (..., 459) from the nine curves (..., 9, 51)."""
    k = np.asarray(kinematics, float)
    return k.reshape(*k.shape[:-2], k.shape[-2] * k.shape[-1])


def _curves_of(source) -> tuple[pd.DataFrame, list]:
    """A curves table (with ``trial`` for a session) and the Results from a Result, a list of them, or a table."""
    if isinstance(source, pd.DataFrame):
        return source, []
    results = list(source) if isinstance(source, (list, tuple)) else [source]
    parts = [r.curves.assign(trial=i) for i, r in enumerate(results) if r.curves is not None and not r.curves.empty]
    if not parts:
        return pd.DataFrame(columns=["trial", "side", "cycle", "variable", "component", "percent", "value"]), results
    return pd.concat(parts, ignore_index=True), results


def subject_speed(source) -> float:
    """Mean walking speed (m/s) over the cycles of a Result, a list of them, or a parameters table; NaN if none."""
    if isinstance(source, pd.DataFrame):
        tables = [source]
    else:
        results = list(source) if isinstance(source, (list, tuple)) else [source]
        tables = [r.parameters for r in results if r.parameters is not None]
    v = [t.loc[t["parameter"] == "walking_speed", "value"].to_numpy(float) for t in tables if "parameter" in t]
    v = np.concatenate(v) if v else np.array([])
    v = v[np.isfinite(v)]
    return float(v.mean()) if v.size else np.nan


def gait_scores(source, norms, band: str | None = "auto") -> pd.DataFrame:
    """GVS, GPS (per side and overall) and GDI of a Result (or a list: a session, cycles pooled per
    side; or a curves table) against ``norms`` (:class:`gaitid.norms.Norms`).

    ``band``: the norms' speed band; 'auto' picks the band holding the subject's mean walking
    speed (all speeds when the norms have no bands or the speed is unknown); None: all speeds.
    Columns (:data:`SCORE_COLUMNS`): ``score`` ('GVS', 'GPS', 'GDI'), ``side`` ('Left', 'Right',
    'Overall'), ``name`` (e.g. 'pelvic tilt'), ``variable``, ``component``, ``value``, ``unit``
    ('deg'; '' for the GDI), ``n_cycles`` (the cycles used: those whose nine curves are complete, when
    some are not; ``note`` then says how many of how many), the controls' ``reference_mean`` and
    ``reference_sd`` of the same score (when the norms hold them), ``band``, ``note`` (why a value is NaN).
    """
    curves, results = _curves_of(source)
    if band == "auto":
        speed = subject_speed(results if results else pd.DataFrame())
        band = norms.band_for_speed(speed)
    ref = norms.select(band or "")
    rows = []
    gvs_side = {}
    for side in ("Left", "Right"):
        reference, notes = ref.score_reference(side)
        kin, keys = kinematic_curves(curves, side)
        n_all = len(keys)
        complete = np.isfinite(kin).all(axis=(1, 2)) if n_all else np.zeros(0, bool)
        if complete.any() and not complete.all():  # the complete cycles only (a gap left NaN spoils a cycle)
            kin = kin[complete]
        n = len(kin)
        used = "" if n == n_all or not n_all else f"from {n} of {n_all} cycles (the others' kinematics incomplete)"
        mean = kin.mean(axis=0) if n else np.full((len(GPS_VARIABLES), SCORE_PERCENT.size), np.nan)
        absent = np.isnan(kin).all(axis=(0, 2)) if n else np.ones(len(GPS_VARIABLES), bool)
        if n:
            incomplete = np.isnan(kin).any(axis=2).any(axis=0)
            mean[incomplete] = np.nan  # a variable some cycle lacks: no GVS rather than a partial mean
        gvs = gait_variable_scores(mean, reference)
        gvs_side[side] = gvs
        for j, (var, comp, name) in enumerate(GPS_VARIABLES):
            note = notes[j] or (used if np.isfinite(gvs[j]) else "no cycle on this side" if n == 0 else
                                f"no {var} {comp} in the results (not computed by the model, or no marker data)"
                                if absent[j] else "curve incomplete in some cycle, and no cycle has all nine")
            rm, rs = ref.score_norm("GVS", name)
            rows.append(("GVS", side, name, var, comp, gvs[j], "deg", n, rm, rs, band or "", note))
        rm, rs = ref.score_norm("GPS", "GPS")
        gps = gait_profile_score(gvs)
        rows.append(("GPS", side, "GPS", "", "", gps, "deg", n, rm, rs, band or "",
                     used if np.isfinite(gps) else "a GVS of this side is missing"))
        if ref.gdi is None:
            rows.append(("GDI", side, "GDI", "", "", np.nan, "", n, np.nan, np.nan, band or "",
                         "the norms hold no GDI basis (too few control strides, or read from CSV/GCD)"))
        else:
            g = ref.gdi.gdi(gait_vectors(mean)) if np.isfinite(mean).all() else np.nan
            rows.append(("GDI", side, "GDI", "", "", float(g), "", n, 100.0, 10.0, band or "",
                         used if np.isfinite(g) else "kinematics incomplete"))
    overall = overall_gait_profile_score(gvs_side["Left"], gvs_side["Right"])
    rm, rs = ref.score_norm("GPS", "GPS overall")
    rows.append(("GPS", "Overall", "GPS", "", "", float(overall), "deg", np.nan, rm, rs, band or "",
                 "" if np.isfinite(overall) else "needs both sides' GVS"))
    out = pd.DataFrame(rows, columns=SCORE_COLUMNS)
    out["n_cycles"] = out["n_cycles"].astype("Int64")
    return out


def summary_lines(scores: pd.DataFrame) -> list[str]:
    """One-line summaries of a :func:`gait_scores` table for a report's first page."""
    def val(score, side):
        v = scores.loc[(scores["score"] == score) & (scores["side"] == side), "value"]
        return float(v.iloc[0]) if len(v) else np.nan

    def fmt(x, digits=1):
        return f"{x:.{digits}f}" if np.isfinite(x) else "\u2013"

    band = scores["band"].iloc[0] if len(scores) else ""
    lines = [f"GPS overall {fmt(val('GPS', 'Overall'))} deg (left {fmt(val('GPS', 'Left'))}, "
             f"right {fmt(val('GPS', 'Right'))})",
             f"GDI left {fmt(val('GDI', 'Left'), 0)}, right {fmt(val('GDI', 'Right'), 0)}"]
    if band:
        lines.append(f"reference: speed band {band}")
    return lines
