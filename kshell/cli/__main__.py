"""`python -m kshell.cli`: the `komputer` program, as the installed script runs it."""

import sys

from kshell.cli.main import main

sys.exit(main())
