"""`python -m investigator.cli`: the same as the `investigator` command."""

import sys

from investigator.cli.entry import main

sys.exit(main())
