"""``python -m qa`` is ``talkqa``."""

import sys

from .cli import main

sys.exit(main())
