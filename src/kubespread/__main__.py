"""``python -m kubespread``: the same command line as the ``kubespread`` executable."""

from kubespread.cli import main

main()
