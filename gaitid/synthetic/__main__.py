"""``python -m gaitid.synthetic OUTDIR``: write the synthetic sample files (see gaitid.synthetic)."""

from gaitid.synthetic.command import main

raise SystemExit(main())
