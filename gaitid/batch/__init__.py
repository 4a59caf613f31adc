"""Batch runs: a session folder or a whole archive, on this machine or a Dask cluster.

Conventions (documented in the README and docs/sessions.md):

- Trials: every ``*.c3d`` found under the given folders or glob patterns (recursively for
  folders). Each is classified by content (:func:`gaitid.batch.session.classify_trial`): static
  trials (markers standing still) calibrate walking trials and are not processed; every other
  trial is processed (a trial that cannot be classified too, so its problem is reported).
- Each walking trial's static trial: :func:`gaitid.batch.pairing.pair_static`: same subject, then
  same folder, then name; a tie or no match is reported per trial (summary column
  ``pairing`` and a warning in the trial's report), never broken by file time. A ``pairing``
  table (columns ``trial`` or ``path``, and ``static``; e.g. an edited ``batch_summary.csv``)
  overrides the automatic choice for the trials it lists.
- Subject data: :func:`gaitid.subject.stage.gather_subject`, the layers of
  :func:`gaitid.subject.layers.subject_layers` merged (command line > ``--subject`` file > C3D
  PROCESSING > ``.vsk``/``.mp`` of the subject beside the trial); which source gave each value
  is in ``OUTDIR/<trial>/<trial>_subject.csv`` and the summary's ``subject_sources``.
- Outputs: ``OUTDIR/<trial>/`` holds the tables (CSV), the report (PDF, HTML),
  ``<trial>_results.c3d`` and ``gaitid-run.json`` (what the outputs were made from);
  ``OUTDIR/batch_summary.csv`` lists every trial with its subject, session, static, pairing
  reason, status (ok, failed, skipped = up to date), error, time and cycle counts;
  ``OUTDIR/batch_cycles.csv`` (and ``.parquet`` with ``parquet=True``) holds every cycle of
  every trial, one row per cycle and variable component (columns subject, session, trial,
  side, cycle, kinetic, variable, component, unit, pct_0 ... pct_100), and
  ``OUTDIR/batch_parameters.csv`` every discrete parameter of every cycle, ``batch_emg.csv`` and
  ``batch_emg_timing.csv`` the trials' EMG tables one after the other (docs/emg.md): each trial's job
  writes its rows beside its outputs (``gaitid-batch_*.part``) and the tables are those pieces
  copied one after the other (:mod:`gaitid.batch.combined`).
- Reruns: a trial whose inputs (trial, static, subject files), settings, options and gaitid
  version are those recorded in its ``gaitid-run.json`` is not processed again, whether it
  succeeded (status skipped) or failed (status failed, same error) unless ``force``; session
  reports and the combined tables are rebuilt only when one of their trials changed.
- One failing trial is recorded with its error and never stops the batch.
- Session reports: with reports on, the trials of one subject in one folder
  (:func:`gaitid.batch.pairing.session_key`) get ``OUTDIR/session_<subject>_<folder>_report.pdf/.html``
  pooling their cycles (a session of one trial gets none: its trial report is the same), read
  from ``OUTDIR/<trial>/gaitid-result.pkl``: the trial's cycles, per-frame output curves,
  normalised cycle curves, parameters, contacts and the few markers that give the direction of
  progression (about 1 MB for the sample walk; a trial's job of another ``OUTPUTS_VERSION`` is
  run again, ``--force`` rebuilds them all).
- Parallel: ``jobs`` worker processes on this machine, or a Dask distributed scheduler
  (``scheduler`` address; workers must see the same paths). Each trial is processed by
  the same function whichever way it runs, so the results are identical.
"""

from gaitid.batch.budget import Budget, trial_memory
from gaitid.batch.combined import spreadsheet_safe, write_combined_tables
from gaitid.batch.job import describe_plan, pack_result, run_job, unpack_result
from gaitid.batch.plan import Job, plan, read_pairing
from gaitid.batch.runner import SUMMARY_COLUMNS, run_batch
from gaitid.batch.workers import WorkerPool
from gaitid.subject.layers import SubjectOptions  # (run_batch's subject=)

__all__ = ["Budget", "Job", "SUMMARY_COLUMNS", "SubjectOptions", "WorkerPool", "describe_plan", "pack_result", "plan",
           "read_pairing", "run_batch", "run_job", "spreadsheet_safe", "trial_memory", "unpack_result",
           "write_combined_tables"]
