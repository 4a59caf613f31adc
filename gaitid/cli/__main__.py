import sys

from gaitid.cli import main

sys.exit(main())
