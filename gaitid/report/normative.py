"""The report's normative bands: :class:`gaitid.norms.Norms`, read by :func:`gaitid.norms.read_norms`.

Kept so that ``read_normative`` / ``NormativeBands`` still work: a gaitid norms TOML file
(``gaitid norms build``), the curves CSV (variable, component, percent, mean, sd [, unit,
side, n]) or a Vicon GCD file; layouts in docs/clinical.md. A band is drawn pooled over
sides, all speeds, and only on a panel in the same unit. Moment bands must be in the
report's convention: ``Norms.in_convention(report_convention)`` converts norms that state
theirs (TOML, GCD: external).
"""

from __future__ import annotations

from gaitid.norms import Norms as NormativeBands
from gaitid.norms import read_norms as read_normative

__all__ = ["NormativeBands", "read_normative"]
