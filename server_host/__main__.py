"""``python -m server_host`` is ``voicebox-env``."""

import sys

from server_host.cli import main

sys.exit(main())
