"""The core every stage shares: errors, the vocabulary, the Trial, the Settings, where the
shipped resources are, and the per-frame signal and rotation arithmetic. Imports nothing above it."""
