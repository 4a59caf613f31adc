"""Multibody oracles from the seed texts: independent formulations used to check the solver.

- :mod:`gaitid.dynamics.multibody.planar` -- planar n-link chains, tau = M q'' + C + G + E (seeds 001, 002),
  plus the printed (corrected) closed forms.
- :mod:`gaitid.dynamics.multibody.screw` -- open chains in twist-wrench form: recursive Newton-Euler
  (``rnea``, with the transmitted joint wrenches), mass matrix, Coriolis, gravity and forward
  dynamics (seed 003, Modern Robotics).
- :mod:`gaitid.dynamics.multibody.forward` -- forward-dynamics integration (scipy ``solve_ivp`` and the
  seeds' explicit Euler), seed 000's double pendulum.
- :mod:`gaitid.dynamics.multibody.trajectories` -- minimum-jerk trajectories (seed 001).
- :mod:`gaitid.dynamics.multibody.anthropometry` -- seed 001's Dempster arm parameters.

Import the submodules directly (``from gaitid.dynamics.multibody import screw``).
"""
