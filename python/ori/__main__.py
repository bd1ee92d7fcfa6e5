"""`python -m ori`: the `ori` command line."""

import sys

from . import main

sys.exit(main())
