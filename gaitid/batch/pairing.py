"""Whose trial it is, which static trial calibrates it, which subject data it uses, its session.

- :func:`subject_identity`: whose trial it is: the C3D's subject name (SUBJECTS:NAMES), else
  the one Vicon subject file (``.vsk``/``.mp``) in its folder, else Vicon's database layout (the
  patient folder holding a ``*.Patient.enf``).
- :func:`pair_statics`: each walking trial's static trial, by subject first (never another
  subject's: a different name, or anthropometry stored in both files that differs), then by
  folder (same folder, else its parent or a subfolder; never a sibling folder, which is
  another session whose markers were placed anew), then by name (shared words, ignoring
  words such as "static", "cal", "walk"). A tie or no match is reported with the reason and
  never broken by file time.
- :func:`check_static`: a static trial the user named checked against the walking trial.
- :func:`session_key`: trials of one subject in one folder form a session (pooled in a
  session report); a trial whose subject is unknown and shares no static is its own session.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from gaitid.batch.session import (
    ANTHRO,
    MIN_MARKER_OVERLAP,
    ROLE_WORDS,
    TrialInfo,
    find_trials,
    name_words,
    scan_trial,
)
from gaitid.subject.layers import named_subject


def _patient_folder(folder: Path) -> Path | None:
    for d in (folder, folder.parent):
        try:
            if any(d.glob("*.Patient.enf")):
                return d
        except OSError:
            continue
    return None


def subject_identity(info: TrialInfo) -> tuple[str | None, str, str]:
    """(key, kind, how) of the trial's subject; key None when nothing says whose it is.
    kind: 'name' (C3D subject name or subject file, comparable with each other) or 'patient'
    (Vicon database patient folder)."""
    key, kind, how, _ = _identity(info)
    return key, kind, how


def subject_label(info: TrialInfo) -> str | None:
    """The subject's name as the files spell it (C3D name, subject file stem or patient
    folder), or None."""
    return _identity(info)[3]


def _identity(info: TrialInfo) -> tuple[str | None, str, str, str | None]:
    named = named_subject(info.path, info.subject_name)  # the C3D's name, else the folder's one subject file
    if named is not None:
        return named[0].lower(), "name", named[1], named[0]
    patient = _patient_folder(info.path.parent)
    if patient is not None:
        return str(patient).lower(), "patient", f"Vicon patient folder '{patient.name}'", patient.name
    return None, "", "no subject name in the file, no single subject file in the folder", None


def compare_anthropometry(a: dict, b: dict) -> tuple[str, str]:
    """('same' | 'different' | 'unknown', detail) from the values both store (SI)."""
    common = [f for f in ANTHRO if f in a and f in b]
    if not common:
        return "unknown", "no anthropometry stored in both"
    diff = [f for f in common if abs(a[f] - b[f]) > ANTHRO[f] + 1e-9]
    if diff:
        f = diff[0]
        unit, k = ("kg", 1.0) if f == "mass" else ("mm", 1000.0)
        return "different", f"{f.replace('_', ' ')} {a[f] * k:g} vs {b[f] * k:g} {unit}"
    if len(common) >= 3:
        return "same", f"same anthropometry ({len(common)} values)"
    return "unknown", f"only {', '.join(common)} stored in both"


def same_subject(w: TrialInfo, s: TrialInfo) -> tuple[str, str]:
    """('same' | 'different' | 'unknown', why) for a walking trial and a static trial."""
    kw, kind_w, how_w = subject_identity(w)
    ks, kind_s, how_s = subject_identity(s)
    anthro, detail = compare_anthropometry(w.anthropometry, s.anthropometry)
    if kw is not None and ks is not None and kind_w == kind_s:
        if kw != ks:
            return "different", f"another subject ({how_s}, this trial: {how_w})"
        if anthro == "different":
            return "different", f"same subject name but different anthropometry ({detail})"
        return "same", f"same subject ({how_w})"
    if anthro == "different":
        return "different", f"another subject's anthropometry ({detail})"
    if anthro == "same":
        return "same", detail
    parts = ([how_w] if kw is None else []) + [detail]
    return "unknown", f"subject not confirmed ({'; '.join(parts)})"


def _folder_rank(trial: Path, static: Path) -> int | None:
    """0 same folder, 1 parent or subfolder, None otherwise (another session)."""
    a, b = trial.parent, static.parent
    if a == b:
        return 0
    if a.parent == b or b.parent == a:
        return 1
    return None


def _name_score(a: str, b: str) -> int:
    wa = {w for w in name_words(a) if w not in ROLE_WORDS and not w.isdigit()}
    wb = {w for w in name_words(b) if w not in ROLE_WORDS and not w.isdigit()}
    return len(wa & wb)


@dataclass(frozen=True)
class Pairing:
    """A walking trial's static trial (or None) and why."""

    trial: Path
    static: Path | None
    reason: str
    candidates: tuple[Path, ...] = ()  # the tied candidates when there is a tie


def folder_subjects(infos: Iterable[TrialInfo]) -> dict[Path, set[str]]:
    """The known subjects (identity keys) of each folder's trials."""
    out: dict[Path, set[str]] = {}
    for i in infos:
        key = subject_identity(i)[0]
        out.setdefault(i.path.parent, set())
        if key is not None:
            out[i.path.parent].add(key)
    return out


def _session_candidate(w: TrialInfo, c: TrialInfo, subjects_by_folder: dict[Path, set[str]]
                       ) -> tuple[int, str, str] | str | None:
    """Whether calibration trial ``c`` (a static, a functional trial) may be walking trial ``w``'s:
    None when outside its folder's reach, the reason (text) when another subject's or, in a folder of
    several known subjects, of an unknown one with no name word in common; else (folder rank,
    subject verdict, why)."""
    rank = _folder_rank(w.path, c.path)
    if rank is None:
        return None
    verdict, why = same_subject(w, c)
    if verdict == "different":
        return f"{c.name}: {why}"
    known = subjects_by_folder.get(w.path.parent, set()) | subjects_by_folder.get(c.path.parent, set())
    if verdict == "unknown" and len(known) > 1 and _name_score(w.path.stem, c.path.stem) == 0:
        return f"{c.name}: {why}, in a folder with trials of {len(known)} subjects and no shared name word"
    return rank, verdict, why


def _session_candidates(w: TrialInfo, others: list[TrialInfo], subjects_by_folder: dict[Path, set[str]] | None
                        ) -> tuple[list[tuple[TrialInfo, int, str, str]], list[str]]:
    """:func:`_session_candidate` over ``others``: the candidates (trial, rank, verdict, why) and the
    rejections' reasons (trials out of reach are neither)."""
    found, rejected = [], []
    for o in others:
        c = _session_candidate(w, o, subjects_by_folder or {})
        if isinstance(c, str):
            rejected.append(c)
        elif c is not None:
            found.append((o, *c))
    return found, rejected


def pair_static(w: TrialInfo, statics: list[TrialInfo], subjects_by_folder: dict[Path, set[str]] | None = None
                ) -> Pairing:
    """The static trial of walking trial ``w`` among ``statics`` (see the module docstring).
    ``subjects_by_folder`` (:func:`folder_subjects` of every trial): where a folder holds
    several known subjects, a trial whose subject is unknown is paired by name only."""
    eligible, (found, rejected) = [], _session_candidates(w, statics, subjects_by_folder)
    for s, rank, verdict, why in found:
        if w.markers and s.markers:
            share = len(w.markers & s.markers) / len(w.markers)
            if share < MIN_MARKER_OVERLAP:
                rejected.append(f"{s.name}: another marker set (has {share:.0%} of this trial's markers)")
                continue
        eligible.append(((verdict == "same", -rank, _name_score(w.path.stem, s.path.stem)), s, why))
    if not eligible:
        if rejected:
            return Pairing(w.path, None, "none fits: " + "; ".join(rejected))
        return Pairing(w.path, None, "none in its folder, the folder above or a subfolder")
    best = max(e[0] for e in eligible)
    top = [e for e in eligible if e[0] == best]
    if len(top) > 1:
        names = ", ".join(e[1].name for e in top)
        return Pairing(w.path, None, f"tie between {names} (equally plausible: "
                                     f"{'same subject' if best[0] else 'subject not confirmed'}, "
                                     f"{'same folder' if best[1] == 0 else 'folder above/below'}, names equally "
                                     "similar); not broken by file time: name the static with --pairing or --static",
                       tuple(e[1].path for e in top))
    key, s, why = top[0]
    parts = [why, "same folder" if key[1] == 0 else "folder above/below"]
    if key[2] and len(eligible) > 1:
        parts.append(f"{key[2]} shared name word(s)")
    reason = ", ".join(parts) + (f"; not: {'; '.join(rejected)}" if rejected else "")
    return Pairing(w.path, s.path, reason)


def pair_functional(w: TrialInfo, functionals: list[TrialInfo],
                    subjects_by_folder: dict[Path, set[str]] | None = None) -> tuple[tuple[Path, ...], str]:
    """The functional calibration trials of walking trial ``w`` (hip star arcs, knee flexions) and
    why: every one of its session, as :func:`pair_static` takes a static (never another
    subject's, never a sibling folder's; the nearest folder; those of the same subject when any
    is), all of them (a hip and a knee trial, one per leg)."""
    found, rejected = _session_candidates(w, functionals, subjects_by_folder)
    eligible = [((verdict == "same", -rank), f) for f, rank, verdict, _ in found]
    if not eligible:
        return (), "none fits: " + "; ".join(rejected) if rejected else "none in its session"
    best = max(key for key, _ in eligible)
    chosen = sorted(f.path for key, f in eligible if key == best)
    return tuple(chosen), (f"{'same subject' if best[0] else 'subject not confirmed'}, "
                           f"{'same folder' if best[1] == 0 else 'folder above/below'}")


def pair_statics(walks: list[TrialInfo], statics: list[TrialInfo]) -> dict[Path, Pairing]:
    """:func:`pair_static` for every walking trial, by path."""
    by_folder = folder_subjects([*walks, *statics])
    return {w.path: pair_static(w, statics, by_folder) for w in walks}


def walking_trials(sources: Iterable[str | os.PathLike]) -> tuple[list[Path], dict[Path, Pairing]]:
    """The walking trials among the files of ``sources`` (folders, files, globs; static and
    functional calibration trials recognised by content) and each one's static trial (:func:`pair_statics`), by path."""
    infos = [scan_trial(p) for p in find_trials(sources)]
    walks = [i for i in infos if i.kind not in ("static", "functional")]
    return [w.path for w in walks], pair_statics(walks, [i for i in infos if i.kind == "static"])


def check_static(walk: TrialInfo, static: TrialInfo) -> list[str]:
    """Problems with a static trial the user named for a walking trial: it is not a static
    (by content), or it is another subject's. Empty when none."""
    out = []
    if static.kind == "walking":
        out.append(f"{static.path.name} is a walking trial, not a static one ({'; '.join(static.reasons[:2])})")
    elif static.kind == "unknown":
        out.append(f"{static.path.name} may not be a static trial ({'; '.join(static.reasons[:2])})")
    verdict, why = same_subject(walk, static)
    if verdict == "different":
        out.append(f"{static.path.name} is {why}")
    return out


def session_key(info: TrialInfo, pairing: Pairing | None) -> tuple[str, str]:
    """(key, label) of the session a walking trial belongs to: its subject in its folder; a
    trial whose subject is unknown joins the trials calibrated by the same static, else stands
    alone. ``label`` is a readable name for file names (``flatFoot_btkdata``)."""
    key, kind, _ = subject_identity(info)
    folder = info.path.parent
    if key is not None:
        return f"{kind}:{key}@{folder}", f"{subject_label(info)}_{folder.name}"
    if pairing is not None and pairing.static is not None:
        return f"static:{pairing.static}", f"{pairing.static.stem}_{folder.name}"
    return f"trial:{info.path}", f"{info.path.stem}_{folder.name}"
