"""The defaults that only the Python package has, declared once, beside nothing else: every
default C++ also has (the timeout, the exit statuses) is bound from C++ instead
(``_pgroups.default_timeout_seconds``, ``_pgroups.exit_codes``)."""

from __future__ import annotations

import datetime

# Seconds past the timeout before the watchdog ends a rank stuck in a call torch cannot cancel.
WATCHDOG_GRACE_SECONDS = 5.0
# What torch is given for "no timeout" (0 in pgroups): it takes a timedelta, never none.
NO_TIMEOUT = datetime.timedelta(days=365)
# A recovering rank's heartbeat: how often it beats, and how long a silent one is waited for
# before the rank is judged dead (pgroups.torch.start_heartbeat, recover).
HEARTBEAT_INTERVAL_SECONDS = 0.2
HEARTBEAT_WINDOW_SECONDS = 2.0
