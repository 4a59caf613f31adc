"""Panel titles, colours and the sign-convention labels of the report, in one place.

Components follow Plug-in Gait's layout on both sides: X sagittal, Y frontal,
Z transverse, with the same sign meaning on the left and the right.

The axis label states what a positive value means (``"Dorsiflexion (+)"``).

Angles: Plug-in Gait's signs (flexion, dorsiflexion, adduction/varus, inversion,
internal rotation positive; see :func:`gaitid.core.rotation.joint_angles`). Pelvis (in the
direction of progression): anterior tilt, that side up (obliquity), that side forward
(internal rotation) positive; foot progression (foot long axis against the direction of
progression): internal (in-toeing) positive, so a typical foot is at -5 to -15 deg.

Moments: the label names the net *muscle* (internal) moment a positive value
stands for. gaitid's moments use the angle's axes: with ``convention='external'``
they equal Plug-in Gait's outputs sign by sign (:func:`gaitid.pipeline.process`),
i.e. the external moment along the angle's positive axis, which the muscles
balance with the opposite rotation: positive = "Plantarflexor", "Extensor",
"Abductor", "External rotator" (the real Plug-in Gait files: ankle X +1.0 to
+1.5 N.m/kg at 45 % of the cycle, knee X positive at loading response, hip Y
positive through stance). ``convention='internal'`` (gaitid's default) is the
negation: the muscle moment along the angle's positive axis, so positive =
"Dorsiflexor", "Flexor", "Adductor", "Internal rotator" and a push-off ankle
moment is negative. ``tests/test_report.py`` checks these words against the
signs of real stance phases.

Powers: moment . relative angular velocity, positive = generation, whatever the
convention.
"""

from __future__ import annotations

JOINTS = ("Hip", "Knee", "Ankle")  # top to bottom, as gait reports print them
# kinematics page rows: (variable, {component: panel title}); foot progression: transverse only
KINEMATIC_ROWS = (
    ("PelvisAngles", {"X": "Pelvic tilt", "Y": "Pelvic obliquity", "Z": "Pelvic rotation"}),
    ("HipAngles", {"X": "Hip flexion/extension", "Y": "Hip ab/adduction", "Z": "Hip rotation"}),
    ("KneeAngles", {"X": "Knee flexion/extension", "Y": "Knee varus/valgus", "Z": "Knee rotation"}),
    ("AnkleAngles", {"X": "Ankle dorsi/plantarflexion", "Y": "Ankle inversion/eversion", "Z": "Ankle rotation"}),
    ("FootProgressAngles", {"Z": "Foot progression"}),
)
COMPONENTS = ("X", "Y", "Z")
PLANES = {"X": "Sagittal", "Y": "Frontal", "Z": "Transverse"}
SIDE_COLOURS = {"Left": "#d62728", "Right": "#2ca02c"}  # clinical convention: left red, right green
NORMATIVE_COLOUR = "#cccccc"
CONTRIBUTION_PARTS = ("Inertial", "Velocity", "Gravity", "External")
CONTRIBUTION_COLOURS = {"Inertial": "#1f77b4", "Velocity": "#9467bd", "Gravity": "#8c564b",
                        "External": "#ff7f0e", "Total": "#111111"}

# positive direction of each angle (Plug-in Gait)
ANGLE_POSITIVE = {
    ("PelvisAngles", "X"): "Anterior tilt", ("PelvisAngles", "Y"): "Up", ("PelvisAngles", "Z"): "Internal rotation",
    ("FootProgressAngles", "Z"): "Internal",
    ("HipAngles", "X"): "Flexion", ("HipAngles", "Y"): "Adduction", ("HipAngles", "Z"): "Internal rotation",
    ("KneeAngles", "X"): "Flexion", ("KneeAngles", "Y"): "Varus", ("KneeAngles", "Z"): "Internal rotation",
    ("AnkleAngles", "X"): "Dorsiflexion", ("AnkleAngles", "Y"): "Inversion",
    ("AnkleAngles", "Z"): "Internal rotation",
}
# muscle group of a positive *internal* moment: the one rotating the joint the angle's + way
INTERNAL_MOMENT_POSITIVE = {
    ("HipMoment", "X"): "Flexor", ("HipMoment", "Y"): "Adductor", ("HipMoment", "Z"): "Internal rotator",
    ("KneeMoment", "X"): "Flexor", ("KneeMoment", "Y"): "Adductor", ("KneeMoment", "Z"): "Internal rotator",
    ("AnkleMoment", "X"): "Dorsiflexor", ("AnkleMoment", "Y"): "Inverter",
    ("AnkleMoment", "Z"): "Internal rotator",
}
OPPOSITE = {"Flexor": "Extensor", "Adductor": "Abductor", "Internal rotator": "External rotator",
            "Dorsiflexor": "Plantarflexor", "Inverter": "Everter"}
OPPOSITE.update({v: k for k, v in list(OPPOSITE.items())})

KINEMATIC_SUFFIX = "Angles"


def base_variable(variable: str) -> str:
    """'KneeMomentGravity' -> 'KneeMoment' (contribution parts share the moment's sign)."""
    for part in CONTRIBUTION_PARTS:
        if variable.endswith("Moment" + part):
            return variable[: -len(part)]
    return variable


def is_kinematic(variable: str) -> bool:
    """Angles come from markers only, so every cycle has them; the rest needs a kinetic cycle."""
    return variable.endswith(KINEMATIC_SUFFIX)


def sign_label(variable: str, component: str, convention: str = "internal") -> str:
    """What a positive value means, e.g. ``sign_label('AnkleMoment', 'X', 'external') == 'Plantarflexor (+)'``.

    ``convention``: 'internal' or 'external' (moments only; external = -internal,
    so the named muscle group flips). '' when the table has no entry.
    """
    if convention not in ("internal", "external"):
        raise ValueError(f"convention must be 'internal' or 'external', not {convention!r}")
    var = base_variable(variable)
    if var.endswith("Power"):
        return "Generation (+)"
    if (var, component) in ANGLE_POSITIVE:
        return f"{ANGLE_POSITIVE[var, component]} (+)"
    if (var, component) in INTERNAL_MOMENT_POSITIVE:
        group = INTERNAL_MOMENT_POSITIVE[var, component]
        return f"{OPPOSITE[group] if convention == 'external' else group} (+)"
    return ""


def axis_label(variable: str, component: str, unit: str, convention: str = "internal") -> str:
    """Y-axis label: unit on the first line, sign meaning on the second."""
    sign = sign_label(variable, component, convention)
    unit_text = f"[{unit}]" if unit else ""
    return f"{unit_text}\n{sign}" if sign else unit_text


def quantity(variable: str) -> str:
    """'KneeMoment' -> 'Knee moment' (titles)."""
    for word in ("Angles", "Moment", "Power", "Force"):
        if variable.endswith(word):
            joint = variable[: -len(word)]
            return f"{joint} {'angle' if word == 'Angles' else word.lower()}"
    return variable


# ground reaction force panels: (title, axis sign) per component, in the direction of progression
# (anterior, medial = towards the other foot, vertical) or, without pelvis markers, the lab axes
GRF_BODY = (("GRF anterior-posterior", "Anterior (+)"), ("GRF medio-lateral", "Medial (+)"),
            ("GRF vertical", "Vertical (+ up)"))
GRF_LAB = (("GRF lab X", "Lab X (+)"), ("GRF lab Y", "Lab Y (+)"), ("GRF vertical", "Vertical (+ up)"))

ANGLE_CONVENTION = ("Angles in degrees with Plug-in Gait's signs; each axis names the positive direction. "
                    "Pelvis and foot progression are measured against the direction of progression.")


def moment_convention(convention: str, frame: str) -> str:
    """The sentence a kinetics page states once: which moments, in which frame, what + means."""
    where = "the lab frame" if frame == "lab" else f"the {frame} segment's frame"
    if convention == "external":
        return (f"Moments: external (= \u2212 internal, as Plug-in Gait reports them), in {where}; each axis "
                "names the net muscle moment a positive value stands for. Powers: + generation.")
    return (f"Moments: internal (net muscle) moments, in {where}; each axis names the muscle group a "
            "positive value stands for. Powers: + generation.")
