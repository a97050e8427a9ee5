import sys

from tools.shift.command import main

sys.exit(main())
