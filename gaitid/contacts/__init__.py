"""Force-plate contacts: when each plate is loaded, and which foot loads it (the contacts stage).

- :mod:`gaitid.contacts.intervals` -- loaded periods of each plate at its analog rate;
- :mod:`gaitid.contacts.assign` -- each contact given to a foot, or invalid with the reason
  (centre of pressure under one foot, whole foot on the plate, no other foot; overrides);
- :mod:`gaitid.contacts.ownership` -- per frame and plate, which foot loads it, and where a
  foot's load is not measured and why;
- :mod:`gaitid.contacts.treadmill` -- treadmill trials: detection, and foot contacts from the
  per-frame ownership (a belt is never unloaded);
- :mod:`gaitid.contacts.geometry` -- points against foot triangles and plate outlines.
"""

from gaitid.contacts.assign import (
    FootContact,
    assign_contacts,
    contacts_table,
    feet_ground_points,
    ground_points,
    resolve_plate_overrides,
)
from gaitid.contacts.contact import LISTED_REJECTED, listed_rejections
from gaitid.contacts.geometry import distance_to_triangle, inside_distance
from gaitid.contacts.intervals import ContactInterval, contact_mask, plate_intervals, trial_intervals
from gaitid.contacts.ownership import PlateOwnership, plate_ownership

__all__ = [
    "LISTED_REJECTED", "ContactInterval", "FootContact", "PlateOwnership", "assign_contacts", "contact_mask",
    "contacts_table", "distance_to_triangle", "feet_ground_points", "ground_points", "inside_distance",
    "listed_rejections", "plate_intervals", "plate_ownership",
    "resolve_plate_overrides", "trial_intervals",
]
