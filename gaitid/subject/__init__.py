"""The subject stage: body mass, height and model parameters, from every source, with where each came from."""
