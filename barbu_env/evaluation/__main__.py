"""``python -m barbu_env.evaluation``: the ``barbu-eval`` command."""

import sys

from .cli import main

sys.exit(main())
