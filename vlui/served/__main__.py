"""``python -m vlui.served``: see :mod:`vlui.served.cli`."""

import sys

from vlui.served.cli import main

if __name__ == "__main__":
    sys.exit(main())
