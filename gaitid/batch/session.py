"""The trials of a session or an archive: what each one is (static or walking, by content).

- :func:`classify_trial`: static or walking **by content** (markers standing still or moving,
  plates loaded steadily or in steps, duration); the file name is only a hint, reported as such.
Whose trial it is, which static calibrates it, its subject data and its session:
:mod:`gaitid.batch.pairing`.
"""

from __future__ import annotations

import glob
import math
import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import numpy as np

from gaitid.core.errors import GaitIDError, SettingsError
from gaitid.core.trial import Trial

RULES_VERSION = 2  # bump when classification or identity rules change (invalidates scan caches)
STILL_M = 0.05  # static: 3/4 of the markers move less than this (m; 2.5-97.5 percentile range)
MOVING_M = 0.25  # walking: 3/4 of the markers move more than this
LOADED_N = 20.0  # a plate is loaded above this vertical force (N)
MIN_MARKER_OVERLAP = 0.5  # a static must carry at least this share of the walking trial's markers
STATIC_WORDS = {"static", "statics", "stat", "cal", "calib", "calibration", "standing", "stand", "neutral"}
ROLE_WORDS = STATIC_WORDS | {"walk", "walking", "gait", "motion", "dynamic", "dyn", "trial", "session", "c", "d"}
ANTHRO = {  # Subject field -> largest difference still taken as the same subject (SI)
    "mass": 2.0, "height": 0.03, "leg_length_left": 0.02, "leg_length_right": 0.02,
    "knee_width_left": 0.01, "knee_width_right": 0.01, "ankle_width_left": 0.01, "ankle_width_right": 0.01,
}


# ----------------------------------------------------------------------------- files


RUN_RECORD = "gaitid-run.json"  # a batch trial folder's record of what its outputs were made from
OUTPUT_SUFFIXES = (".csv", ".parquet", ".xlsx", ".pdf", ".html", ".mot", ".sto", ".json", ".pkl")


@dataclass(frozen=True)
class NotATrial:
    """A ``*.c3d`` name found that is not a trial file, and why (a folder, a dangling link...)."""

    path: Path
    reason: str


def is_gaitid_output(path: Path) -> bool:
    """True for a file gaitid wrote: anything in a batch trial folder (it holds ``gaitid-run.json``),
    and a ``<trial>_results.c3d`` beside other outputs of the same trial (``<trial>_*.csv``, the
    report...), as ``gaitid run -o`` leaves them."""
    folder = path.parent
    if (folder / RUN_RECORD).is_file():
        return True
    stem = path.stem
    if not stem.endswith("_results"):
        return False
    trial = stem[: -len("_results")]
    try:
        siblings = [e.name for e in os.scandir(folder)]
    except OSError:
        return False
    return any(n.startswith(f"{trial}_") and Path(n).suffix.lower() in OUTPUT_SUFFIXES for n in siblings)


def _not_a_file(p: Path) -> str:
    if p.is_symlink() and not p.exists():
        return f"a symbolic link to {os.readlink(p)}, which does not exist"
    if p.is_dir():
        return "a folder named like a C3D file, not a file"
    if not p.exists():
        return "does not exist"
    return "not a regular file"


GAITID_OUTPUT = "gaitid's own output (a results C3D beside its trial's tables, or in a batch trial folder), not a trial"


def find_sources(sources: Iterable[str | os.PathLike]) -> tuple[list[Path], list[NotATrial]]:
    """The C3D files under the folders / matching the glob patterns (sorted, resolved, without
    duplicates and without gaitid's own outputs, :func:`is_gaitid_output`), and the ``*.c3d``
    names that are not trial files, each with the reason: folders, dangling symbolic links, and
    gaitid's own outputs named as files (as a shell glob gives them; under a folder or matching
    a pattern they are passed over)."""
    found: set[Path] = set()
    rejected: dict[Path, str] = {}

    def consider(q: Path) -> None:
        if q.suffix.lower() != ".c3d":
            return
        if q.is_file():
            if not is_gaitid_output(q):
                found.add(q)
        else:
            rejected.setdefault(q.absolute(), _not_a_file(q))

    for src in sources:
        p = Path(src)
        if p.is_dir():
            for q in p.rglob("*"):
                consider(q)
        elif p.is_file():
            if p.suffix.lower() == ".c3d" and is_gaitid_output(p):  # e.g. a shell glob over a run's folder
                rejected[p.absolute()] = GAITID_OUTPUT
            else:
                found.add(p)
        elif p.is_symlink():
            rejected[p.absolute()] = _not_a_file(p)
        else:
            matches = [Path(m) for m in glob.glob(str(src), recursive=True)]
            if not matches:
                raise SettingsError(f"no file or folder matches {src!r}")
            for m in matches:
                consider(m)
    return sorted({q.resolve() for q in found}), [NotATrial(k, v) for k, v in sorted(rejected.items())]


def find_trials(sources: Iterable[str | os.PathLike]) -> list[Path]:
    """Every C3D file under the folders / matching the glob patterns, sorted, without duplicates
    and without gaitid's own outputs (:func:`find_sources`)."""
    return find_sources(sources)[0]


def name_words(stem: str) -> list[str]:
    """A file name's words, lower case: ``PiG_Calibration3_FF`` -> pi, g, calibration, 3, ff;
    ``ClinicalWalk01`` -> clinical, walk, 01 (so 'cal' in 'Clinical' is not a word)."""
    return [w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", stem)]


def name_says_static(stem: str) -> bool:
    """True when a word of the name is static, cal, calibration... (a hint, never a decision)."""
    return bool(STATIC_WORDS & set(name_words(stem)))


# ----------------------------------------------------------------------------- content


def column_percentiles(a: np.ndarray, q) -> np.ndarray:
    """``numpy.nanpercentile(a, q, axis=0)`` of a 2-D array, bit for bit, without its loop over
    the columns: the columns sorted (NaN last) and those with as many values taken together."""
    q = np.asarray(q, float)
    counts = np.count_nonzero(~np.isnan(a), axis=0)
    ordered = np.sort(a, axis=0)
    out = np.full(q.shape + a.shape[1:], np.nan)
    for n in np.unique(counts[counts > 0]):
        cols = counts == n
        out[..., cols] = np.percentile(ordered[:n, cols], q, axis=0)
    return out


def marker_motion(trial: Trial) -> dict:
    """How much the markers move: ``motion_m``, the 75th percentile over markers of each
    marker's extent (norm of its 97.5 - 2.5 percentile positions over the frames it is seen, m);
    ``n_markers`` used (seen in a quarter of the frames, else in 10 frames); ``travel_m``, horizontal displacement of the markers' median
    point from first to last frame."""
    X = trial.markers
    out = {"motion_m": math.nan, "n_markers": 0, "travel_m": math.nan}
    if X.size == 0 or X.shape[0] < 2:
        return out
    seen = np.isfinite(X[..., 0]).mean(axis=0)
    keep = seen >= 0.25
    if keep.sum() < 3:  # a walkway longer than the capture volume: markers seen briefly
        keep = np.isfinite(X[..., 0]).sum(axis=0) >= 10
    if keep.sum() < 3:
        return out
    Xk = X[:, keep]
    lo, hi = column_percentiles(Xk.reshape(Xk.shape[0], -1), [2.5, 97.5]).reshape(2, -1, 3)
    with warnings.catch_warnings():  # frames where no marker is seen: NaN, expected
        warnings.simplefilter("ignore", RuntimeWarning)
        centre = np.nanmedian(Xk, axis=1)
    extent = np.linalg.norm(hi - lo, axis=1)
    ok = np.flatnonzero(np.isfinite(centre[:, 0]))
    travel = float(np.linalg.norm(centre[ok[-1], :2] - centre[ok[0], :2])) if ok.size > 1 else math.nan
    return {"motion_m": float(np.percentile(extent, 75)), "n_markers": int(keep.sum()), "travel_m": travel}


def plate_loading(trial: Trial) -> str:
    """'no force plates', 'no plate loaded', 'plates k steadily loaded (standing)', or
    'plate loads come and go (steps)'."""
    if not trial.force_plates:
        return "no force plates"
    steady, stepped = [], []
    for p in trial.force_plates:
        fz = np.abs(p.point.force[:, 2])
        loaded = np.isfinite(fz) & (fz > LOADED_N)
        if not loaded.any():
            continue
        lo, mid, hi = np.percentile(fz[loaded], [5, 50, 95])
        (steady if loaded.mean() >= 0.95 and hi - lo < 0.5 * mid else stepped).append(p.index)
    if not steady and not stepped:
        return "no plate loaded"
    if stepped:
        return f"plate loads come and go (steps on plate{'s' if len(stepped) > 1 else ''} " \
               f"{', '.join(map(str, stepped))})"
    return f"plate{'s' if len(steady) > 1 else ''} {', '.join(map(str, steady))} steadily loaded (standing)"


def classify_trial(trial: Trial) -> tuple[str, list[str]]:
    """('static' | 'walking' | 'functional' | 'unknown', reasons) from the trial's content.

    Static: three quarters of the markers stay within ``STILL_M`` (5 cm) over the trial (a
    subject standing still). Walking: three quarters move more than ``MOVING_M`` (25 cm):
    steps, over ground or on a treadmill. In between, or with fewer than three markers seen in
    10 frames: 'unknown'. Functional (a hip star arc or a knee flexion): not static, in place
    (the markers' median point travels under 0.5 m), no plate stepped on, and a thigh swinging
    in the pelvis or a knee bending (:func:`gaitid.model.functional.functional_motion`). Plate
    loading, duration and the file name are reported as supporting facts; the name never decides."""
    m = marker_motion(trial)
    reasons = []
    stem = trial.path.stem if trial.path is not None else ""
    hint = name_says_static(stem)
    plates = plate_loading(trial)
    facts = [plates, f"{trial.duration:.2f} s"]
    if hint:
        facts.append("the name suggests a static trial (a hint only)")
    if m["n_markers"] < 3:
        return "unknown", ["fewer than 3 markers seen: cannot tell", *facts]
    motion = m["motion_m"]
    if motion < STILL_M:
        kind = "static"
        reasons.append(f"markers still: 3/4 of {m['n_markers']} markers move less than {motion * 100:.1f} cm "
                       f"(static below {STILL_M * 100:g} cm)")
    elif motion > MOVING_M:
        kind = "walking"
        how = (f", travelling {m['travel_m']:.1f} m" if math.isfinite(m["travel_m"]) and m["travel_m"] > 0.5
               else ", in place (treadmill?)")
        reasons.append(f"markers moving: 3/4 of {m['n_markers']} markers move more than {motion:.2f} m{how}")
    else:
        kind = "unknown"
        reasons.append(f"3/4 of the markers move up to {motion:.2f} m: neither standing still "
                       f"(< {STILL_M:g} m) nor walking (> {MOVING_M:g} m)")
    if kind != "static" and not (m["travel_m"] > 0.5) and not plates.startswith("plate loads come and go"):
        from gaitid.model.functional import functional_motion

        joint, why = functional_motion(trial)
        if joint is not None:  # in place, no steps, a hip or knee moving: a functional calibration trial
            return "functional", [f"a {joint} functional trial: {why}", *reasons, *facts]
    return kind, reasons + facts


# ----------------------------------------------------------------------------- scanned trials


@dataclass(frozen=True)
class TrialInfo:
    """What pairing and sessions need from one file (read once)."""

    path: Path
    kind: str  # 'static' | 'walking' | 'functional' | 'unknown'
    reasons: tuple[str, ...]
    subject_name: str | None  # SUBJECTS:NAMES
    anthropometry: dict = field(default_factory=dict)  # Subject field -> SI value (PROCESSING)
    markers: frozenset = frozenset()
    error: str = ""  # the file could not be read

    @property
    def name(self) -> str:
        return self.path.name

    def as_dict(self) -> dict:
        return {"path": str(self.path), "kind": self.kind, "reasons": list(self.reasons),
                "subject_name": self.subject_name, "anthropometry": self.anthropometry,
                "markers": sorted(self.markers), "error": self.error}

    @classmethod
    def from_dict(cls, d: dict) -> TrialInfo:
        return cls(Path(d["path"]), d["kind"], tuple(d["reasons"]), d["subject_name"], dict(d["anthropometry"]),
                   frozenset(d["markers"]), d.get("error", ""))


def trial_info(trial: Trial, path: Path | None = None) -> TrialInfo:
    kind, reasons = classify_trial(trial)
    anthro = {f: getattr(trial.subject, f) for f in ANTHRO if getattr(trial.subject, f) is not None}
    name = (trial.subject.name or "").strip() or None
    return TrialInfo(Path(path or trial.path), kind, tuple(reasons), name, anthro, frozenset(trial.marker_labels))


def scan_trial(path: str | os.PathLike, cop_threshold: float = 10.0) -> TrialInfo:
    """Read a file and describe it (:class:`TrialInfo`); a file that cannot be read is 'unknown'
    with the error (it is then processed as a trial, so its error reaches the summary)."""
    from gaitid.pipeline import load_trial

    path = Path(path)
    try:
        trial = load_trial(path, cop_threshold=cop_threshold)
    except GaitIDError as exc:
        return TrialInfo(path, "unknown", (f"cannot read: {exc.reason}",), None, {}, frozenset(), str(exc))
    return trial_info(trial, path)
