"""``python -m gaitid.synthetic OUTDIR``: write the synthetic sample files (see gaitid.synthetic)."""

from gaitid.synthetic.files import main

raise SystemExit(main())
