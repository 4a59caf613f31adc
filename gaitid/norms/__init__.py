"""Normative data: a lab's reference curves and parameters; gaitid ships none.

A :class:`Norms` holds mean and SD curves per variable, component and side (and pooled over
sides, side ''), parameter norms, optional speed bands, the controls' GVS/GPS (the MAP's
reference) and a GDI basis, with metadata (source, subjects, age range, the moment
convention and unit normalisation the curves are in).

- :mod:`gaitid.norms.data` -- :class:`Norms`, :func:`compare_parameters`;
- :mod:`gaitid.norms.build` -- :func:`build_norms` from control trials (:class:`~gaitid.pipeline.result.Result`
  objects, or result folders of CSV tables written by ``gaitid run`` / ``gaitid batch``);
- :mod:`gaitid.norms.files` -- :func:`write_norms` / :func:`read_norms` (TOML, layout in
  docs/clinical.md); :func:`read_norms` also reads a simple CSV of curves and Vicon's GCD text format.

Curves are kept at 51 points (every 2 % of the cycle). Each cycle counts once (a control with
more cycles weighs more); each point's mean and SD come from the cycles that have a value
there (``n`` per point: a kinetic cycle's last point, the next strike off the plates, is often
missing), and kinetic variables come from kinetic cycles only. SD is the sample SD (ddof 1).
"""

from gaitid.norms.build import (
           ControlTables,
           build_norms,
           control_from_folder,
           control_from_result,
)
from gaitid.norms.data import Norms, compare_parameters, parse_age_range
from gaitid.norms.files import norms_toml, read_gcd, read_norms, read_norms_setting, write_norms

__all__ = ["ControlTables", "Norms", "build_norms", "compare_parameters", "control_from_folder", "control_from_result",
           "norms_toml", "parse_age_range", "read_gcd", "read_norms", "read_norms_setting", "write_norms"]
