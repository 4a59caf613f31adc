"""The cycles stage: the output variables, gait cycles and their 0-100 % curves, spatio-temporal and
clinical parameters, gait scores."""
