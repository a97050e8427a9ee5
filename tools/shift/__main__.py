import sys

from tools.shift.command import main
from tools.signals import handle_stops

# SIGTERM (a cancelled CI run) and SIGHUP (a dropped session) stop a shift as Ctrl-C does: the step rolled back, the
# lock released, one line saying what traffic is in place (tools/signals.py).
handle_stops()
sys.exit(main())
