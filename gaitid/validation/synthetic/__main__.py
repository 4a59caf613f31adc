"""``python -m gaitid.validation.synthetic OUTDIR``: write the synthetic sample files (see gaitid.validation.synthetic)."""

from gaitid.validation.synthetic.command import main

raise SystemExit(main())
