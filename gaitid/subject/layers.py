"""The layers of subject data one trial uses, from every source, most trusted first.

:func:`subject_layers` gives them in the order of :data:`gaitid.subject.merge.PRECEDENCE`:
values typed on the command line, the ``--subject`` file (a table gives the row of the trial's
subject), the C3D's PROCESSING values, then the Vicon subject files (``.vsk``, ``.mp``) beside
the trial that are its subject's (:func:`beside_subject_files`). What the user gave for every
trial: :class:`SubjectOptions`. Whose trial it is by name
(:func:`named_subject`): the C3D's subject name, else the one subject file in its folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from gaitid.core.errors import GaitIDError, SettingsError
from gaitid.core.subject_record import Subject, as_subject
from gaitid.subject.readers import read_subject, read_subjects, select_subject

VICON_SUBJECT_FILES = (".vsk", ".mp")


@dataclass(frozen=True)
class SubjectOptions:
    """Subject data the user gave for every trial: ``values`` typed on the command line (a dict
    of SI values, see :func:`gaitid.core.subject_record.as_subject`), a ``file`` (``--subject``),
    and ``plates`` (estimate the mass from the force plates)."""

    values: dict | None = None
    file: Path | None = None
    plates: bool = False

    @classmethod
    def from_mass(cls, mass: float | str | None) -> SubjectOptions:
        if mass == "plates":
            return cls(plates=True)
        return cls(values={"mass": float(mass)}) if mass is not None else cls()


def subject_files(folder: Path) -> list[Path]:
    """Vicon subject files (``.vsk``, ``.mp``) in a folder, sorted."""
    try:
        return sorted(p for p in folder.iterdir() if p.suffix.lower() in VICON_SUBJECT_FILES and p.is_file())
    except OSError:
        return []


def named_subject(path: Path | None, subject_name: str | None) -> tuple[str, str] | None:
    """(name, how it is known) of the subject of the trial at ``path``: its C3D subject name
    (``subject_name``), else the stem of the one Vicon subject file in its folder; None when
    neither says."""
    if subject_name:
        return subject_name, f"C3D subject '{subject_name}'"
    stems = sorted({p.stem for p in subject_files(path.parent)}, key=str.lower) if path is not None else []
    if len(stems) == 1:
        return stems[0], f"subject file {stems[0]} in the folder"
    return None


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return False


def beside_subject_files(path: Path, subject_name: str | None, given: Path | None = None) -> tuple[list[Path], str]:
    """The ``.vsk`` / ``.mp`` files beside the trial at ``path`` that are its subject's: those
    named after its C3D subject (``subject_name``); without a subject name, the files of the
    folder's only subject. Returns the files and a note when some were not used. ``given``: the
    ``--subject`` file, already a layer of its own: neither returned nor named as not used."""
    files = [p for p in subject_files(path.parent) if given is None or not _same_file(p, given)]
    if not files:
        return [], ""
    stems = {p.stem.lower() for p in files}
    if subject_name:
        mine = [p for p in files if p.stem.lower() == subject_name.lower()]
        if not mine:
            return [], (f"subject file(s) {', '.join(p.name for p in files)} beside the trial not used: "
                        f"the trial's subject is '{subject_name}'")
        return mine, ""
    if len(stems) == 1:
        return files, ""
    return [], (f"subject files of {len(stems)} subjects beside the trial ({', '.join(p.name for p in files)}) "
                "and no subject name in it: none used")


def subject_layers(trial_subject: Subject, path: str | os.PathLike | None, *, cli: Subject | dict | None = None,
                   subject_file: str | os.PathLike | None = None) -> tuple[list[tuple[str, Subject]], list[str]]:
    """The layers of subject data for the trial at ``path`` whose file stores ``trial_subject``,
    most trusted first (see the module docstring), and notes on sources not used. ``cli``:
    values typed on the command line; ``subject_file``: the ``--subject`` file (a table with
    several subjects gives the row named as the trial's subject, else as one of its folders).
    ``path`` None (a trial not read from a file): no subject file beside it."""
    path = Path(path) if path is not None else None
    name = (trial_subject.name or "").strip() or None
    layers: list[tuple[str, Subject]] = []
    notes: list[str] = []
    if cli:
        layers.append(("command line", as_subject(cli, "command line")))
    if subject_file is not None:
        sf = Path(subject_file)
        subjects = read_subjects(sf)
        named = named_subject(path, name)
        folders = [p.name for p in path.parents[:3]] if path is not None else []
        names = [name] + ([named[0].lower()] if named else []) + folders
        pick = select_subject(subjects, names)
        if pick is None and len(subjects) == 1:
            pick = next(iter(subjects.values()))
            if name and pick.name and pick.name.lower() != name.lower() and sf.suffix.lower() in (".vsk", ".mp"):
                notes.append(f"--subject {sf.name} is named '{pick.name}' but the trial's subject is "
                             f"'{name}'; used as given")
        if pick is None:
            raise SettingsError(f"{sf}: no subject for {path.name if path else 'the trial'} (looked for "
                                f"{', '.join(repr(n) for n in names if n)}; the file has {', '.join(subjects)})")
        layers.append((f"--subject {sf.name}" + (f" [{pick.name}]" if len(subjects) > 1 else ""), pick))
    layers.append(("C3D PROCESSING", trial_subject))
    given = Path(subject_file) if subject_file is not None else None
    files, note = beside_subject_files(path, name, given) if path is not None else ([], "")
    if note:
        notes.append(note)
    for p in sorted(files, key=lambda q: (q.suffix.lower() != ".vsk", q.name)):
        try:
            layers.append((f"{p.name} beside the trial", read_subject(p)))
        except GaitIDError as exc:
            notes.append(f"{p.name} beside the trial not used: {exc.reason}")
    return layers, notes
