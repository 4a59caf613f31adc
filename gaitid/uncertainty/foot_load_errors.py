"""The feet's loads for every column of a design: centre-of-pressure offsets and force scale errors.

Each foot contact (a run of frames on a valid plate, :class:`~gaitid.contacts.foot_loads.FootLoad` state
'plate') has its own errors: a constant horizontal offset d of the centre of pressure and a
scale error g on the force and the free moment. The solver receives the load as
:func:`gaitid.contacts.foot_loads.filtered_load` gives it, the force F at a fixed point O plus the couple
M_O = (COP - O) x F + T, both low-pass filtered. Both are linear in the errors and the filter
is linear, so with F_c, M_c the contact's own part of F and M_O (zero elsewhere) each filtered
once::

    F' = F + sum_c g_c F_c          M_O' = M_O + sum_c (g_c M_c + (1 + g_c) d_c x F_c)

exactly, for every column at once, without filtering per column.

A foot's load decomposed from a plate both feet load (``FootLoad.source`` 'decomposed') has the
decomposition's errors on its decomposed frames (mask m), drawn once per trial like every other
source: a force e moved from one foot to the other (the first side gets +e, the other -e: the
plate's measured total is kept) acting at the foot's COP, and a constant horizontal offset q of
that foot's COP. With r = COP - O, each filtered once (f(.)), s = +1 or -1 by side::

    F' = F' + s f(m) e          M_O' = M_O' + s f(m r) x e + q x (f(m F) + s f(m) e)

exact, and linear in the filter as above.
"""

from __future__ import annotations

import numpy as np

from gaitid.contacts.foot_loads import FootLoad, filtered_load
from gaitid.core import rotation, signal
from gaitid.core.vocabulary import SIDES
from gaitid.dynamics.types import ExternalLoad
from gaitid.uncertainty.design import Design


def contacts_of(load: FootLoad) -> list[tuple[int, int]]:
    """The foot's contacts as [start, stop) frame runs of state 'plate'."""
    starts, stops = signal.runs(np.asarray(load.state == "plate", bool))
    return list(zip(starts.tolist(), stops.tolist()))


def perturbed_loads(loads: dict[str, FootLoad], design: Design, rate: float, settings
                    ) -> tuple[dict[str, ExternalLoad], dict[str, FootLoad]]:
    """Per side, the solver's load and the foot load (for the ground-reaction output) of every
    column, stacked frame-major ((n C) rows)."""
    C = design.n_columns
    ext, feet = {}, {}
    for side in SIDES:
        load = loads[side]
        n = load.force_lab.shape[0]
        nominal = filtered_load(load, rate, settings.force_cutoff, settings.filter_order)
        finite = np.isfinite(nominal.point_lab).all(axis=1)
        O = nominal.point_lab[finite][0] if finite.any() else np.zeros(3)
        F = np.repeat(nominal.force_lab[:, None], C, axis=1)
        M = np.repeat(nominal.free_moment_lab[:, None], C, axis=1)
        raw = np.repeat(load.force_lab[:, None], C, axis=1)
        M_raw = rotation.cross(load.cop_lab - O, load.force_lab) + load.free_moment_lab  # as filtered_load moves it
        for c, (a, b) in enumerate(contacts_of(load)):
            gain = design.value(("gain", side, c))
            d = np.column_stack([design.value(("cop", side, c, 0)), design.value(("cop", side, c, 1)), np.zeros(C)])
            if not (gain.any() or d.any()):
                continue
            inside = np.zeros(n, bool)
            inside[a:b] = True
            keep = inside[:, None] | np.isnan(load.force_lab)  # NaN (unknown) stays NaN, the rest is zero
            F_c = np.where(keep, load.force_lab, 0.0)
            Ff_c = signal.butter_lowpass(F_c, rate, settings.force_cutoff, settings.filter_order)
            Mf_c = signal.butter_lowpass(np.where(keep, M_raw, 0.0), rate, settings.force_cutoff, settings.filter_order)
            F += gain[None, :, None] * Ff_c[:, None]
            M += gain[None, :, None] * Mf_c[:, None] + (1.0 + gain)[None, :, None] * rotation.cross(d[None], Ff_c[:, None])
            raw += gain[None, :, None] * F_c[:, None]
        sign = 1.0 if side == SIDES[0] else -1.0
        e = sign * np.column_stack([design.value(("shared_force", i)) for i in range(3)])  # (C, 3)
        q = np.column_stack([design.value(("shared_cop", side, 0)), design.value(("shared_cop", side, 1)), np.zeros(C)])
        m = load.decomposed
        if m.any() and (e.any() or q.any()):
            unknown = np.isnan(load.force_lab).any(axis=1)[:, None]  # NaN stays NaN, filtered in runs as the load

            def filtered(x):
                return signal.butter_lowpass(np.where(unknown, np.nan, np.where(m[:, None], x, 0.0)), rate,
                                             settings.force_cutoff, settings.filter_order)

            mf, rf, Ff = filtered(np.ones((n, 1))), filtered(np.nan_to_num(load.cop_lab - O)), filtered(load.force_lab)
            shift = mf[:, None] * e[None]  # (n, C, 3)
            F += shift
            M += rotation.cross(rf[:, None], e[None]) + rotation.cross(q[None], Ff[:, None] + shift)
            raw += m[:, None, None] * e[None]
        point = np.repeat(nominal.point_lab[:, None], C, axis=1).reshape(-1, 3)
        ext[side] = ExternalLoad(0, F.reshape(-1, 3), point, M.reshape(-1, 3))
        feet[side] = FootLoad(side, raw.reshape(-1, 3), point, M.reshape(-1, 3), np.repeat(load.state, C))
    return ext, feet
