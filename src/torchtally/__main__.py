"""`python -m torchtally ...`"""

import sys

from torchtally.cli import main

sys.exit(main())
