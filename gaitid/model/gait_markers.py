"""The few marker labels gait events and plate assignment use, from the model file's ``[gait]``.

Each role (``heel``, ``toe``, ``ankle`` per foot; ``pelvis``, ``pelvis_front``, ``pelvis_back``)
lists candidate labels in the model (``{S}`` = the side prefix); :func:`gait_markers` picks, for
a trial, the first candidate it has for each foot role; the pelvis roles keep their lists (the stages
use the labels present). Models without a ``[gait]`` table use Plug-in Gait's labels
(:data:`gaitid.model.markerset.DEFAULT_GAIT`). See models/README.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from gaitid.core.errors import DataError, SettingsError
from gaitid.core.trial import Trial
from gaitid.core.vocabulary import SIDES
from gaitid.model.markerset import Model
from gaitid.model.trial_markers import apply_aliases


@dataclass(frozen=True)
class FootMarkers:
    """Labels of one foot's markers: heel, toe (forefoot) and ankle (lateral malleolus)."""

    heel: str
    toe: str
    ankle: str


@dataclass(frozen=True)
class GaitMarkers:
    """Marker labels per foot, and candidate pelvis markers (those present are used): ``pelvis``
    for the pelvis centre, ``pelvis_front`` / ``pelvis_back`` for its forward axis."""

    left: FootMarkers
    right: FootMarkers
    pelvis: tuple[str, ...]
    pelvis_front: tuple[str, ...] = ()
    pelvis_back: tuple[str, ...] = ()

    def foot(self, side: str) -> FootMarkers:
        if side == "Left":
            return self.left
        if side == "Right":
            return self.right
        raise SettingsError(f"side must be one of {', '.join(SIDES)}, not {side!r}")


def gait_markers(model: Model, trial: Trial) -> GaitMarkers:
    """The model's ``[gait]`` labels resolved for this trial, as the trial names them.

    The model's ``[aliases]`` apply (a model label the trial lacks is found under an alias),
    and the result names the trial's own labels ('L_FCC' for an ISB model's 'LCAL'), so the
    stages read the trial as it is. DataError naming the role, the foot, the labels looked for
    and the model when a foot role has none."""
    aliased = apply_aliases(trial, model)
    original = dict(zip(aliased.marker_labels, trial.marker_labels))  # model label -> the trial's
    present = set(aliased.marker_labels) | set(aliased.virtual_labels)
    feet = {}
    for side in SIDES:
        roles = {}
        for role in ("heel", "toe", "ankle"):
            candidates = [lab.replace("{S}", model.sides[side]) for lab in model.gait[role]]
            found = next((lab for lab in candidates if lab in present), None)
            if found is None:
                raise DataError(f"no {role} marker for the {side.lower()} foot (model '{model.name}' looks for "
                                f"{', '.join(candidates)}; events and plate assignment need it)", trial.path)
            roles[role] = original.get(found, found)
        feet[side] = FootMarkers(**roles)
    pelvis = {role: tuple(original.get(lab, lab) for lab in model.gait[role])
              for role in ("pelvis", "pelvis_front", "pelvis_back")}
    return GaitMarkers(feet["Left"], feet["Right"], **pelvis)
