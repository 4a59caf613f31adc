"""The subject stage: body mass, height and model parameters, from every source, with where each came from.

- :mod:`gaitid.subject.stage`: the one way in: :func:`~gaitid.subject.stage.gather_subject`
  (every source merged, before processing) and :func:`~gaitid.subject.stage.subject_data`
  (the stage of ``process``), both giving a :class:`~gaitid.subject.stage.SubjectData`;
- :mod:`gaitid.subject.layers`: the sources of one trial, most trusted first, and the user's
  :class:`~gaitid.subject.layers.SubjectOptions`;
- :mod:`gaitid.subject.merge`: merging them with the source of each value, disagreements, tables;
- :mod:`gaitid.subject.readers`: subject files (``.vsk``, ``.mp``, tables) read;
- :mod:`gaitid.subject.check`: the trial and subject checked against the model before processing;
- :mod:`gaitid.subject.bodymass`: the body mass from the force plates.

The :class:`~gaitid.core.subject_record.Subject` record and the grammar of its keys are lower,
in :mod:`gaitid.core.subject_record`, where the reader and the model use them.
"""
