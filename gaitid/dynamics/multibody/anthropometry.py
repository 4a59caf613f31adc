"""Seed 001's anthropometric table for the arm (Dempster's data as tabulated by Winter).

Seed 001 ("Multibody dynamics of one and two-link systems", In [24]) takes, for a subject
of height H (m) and mass M (kg):

=================  ===========  =====================  ===========  ====================
segment            length / H   COM from proximal / L  mass / M     radius of gyration / L
=================  ===========  =====================  ===========  ====================
upper arm          0.188        0.436                  0.0280       0.322
forearm and hand   0.253        0.682                  0.0220       0.468
=================  ===========  =====================  ===========  ====================

(ratios of Dempster 1955 as tabulated in Winter, *Biomechanics and Motor Control of Human
Movement*, table 4.1; the radius of gyration is about the centre of mass). The project's
full body-segment tables, if any, live in ``models/bsip/`` and are not this module's concern.
"""

from __future__ import annotations

from gaitid.core.errors import ModelError
from gaitid.dynamics.multibody.planar import PlanarChain

# name: (length / height, COM distance from the proximal joint / length, mass / body mass,
#        radius of gyration about the COM / length)
SEED001_TABLE: dict[str, tuple[float, float, float, float]] = {
    "upper_arm": (0.188, 0.436, 0.0280, 0.322),
    "forearm_hand": (0.253, 0.682, 0.0220, 0.468),
}


def segment_parameters(name: str, height: float, mass: float) -> dict[str, float]:
    """Length (m), COM distance from the proximal joint (m), mass (kg) and moment of inertia
    about the COM (kg.m^2, I = m (r_g L)^2) of a seed 001 segment for a subject."""
    if name not in SEED001_TABLE:
        raise ModelError(f"seed 001 anthropometric table has no segment {name!r} (it has {sorted(SEED001_TABLE)})")
    if not (height > 0 and mass > 0):
        raise ModelError(f"subject height and mass must be positive, got height={height!r} m, mass={mass!r} kg")
    lr, cr, mr, gr = SEED001_TABLE[name]
    L = lr * height
    m = mr * mass
    return {"length": L, "com": cr * L, "mass": m, "inertia": m * (gr * L) ** 2}


def arm_chain(height: float, mass: float) -> PlanarChain:
    """Upper arm + forearm-and-hand as a planar two-link chain (seed 001's arm model)."""
    segs = [segment_parameters(n, height, mass) for n in ("upper_arm", "forearm_hand")]
    return PlanarChain(*([s[k] for s in segs] for k in ("mass", "length", "com", "inertia")))
