"""`python -m kgroup ...`: the same as the `kgroup` command."""
import sys

from kgroup.cli import main

sys.exit(main())
