"""`python -m tools.readiness`: tools/readiness/report.py."""

import sys

from tools.readiness.report import main

sys.exit(main())
