"""``python -m ccbench`` is the same as the ``ccbench`` command."""

import sys

from ccbench.cli import main

sys.exit(main())
