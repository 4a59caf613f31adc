"""Checking gaitid against references: Plug-in Gait kinetics stored in C3D files, OpenSim's inverse
dynamics, and synthetic trials with exact ground truth."""
