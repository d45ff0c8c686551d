"""``python -m bench.crowd``: see README.md."""

import sys

from bench.crowd.run import main

sys.exit(main())
