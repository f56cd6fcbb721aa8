import sys

from envdoctor.cli import main

sys.exit(main())
