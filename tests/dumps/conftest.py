"""The dump tests reuse the record strategies of tests/records (property round trips)."""
from __future__ import annotations

import sys
from pathlib import Path

_RECORDS_TESTS = str(Path(__file__).resolve().parent.parent / "records")
if _RECORDS_TESTS not in sys.path:
    sys.path.append(_RECORDS_TESTS)
