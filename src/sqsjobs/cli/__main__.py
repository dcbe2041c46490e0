"""``python -m sqsjobs.cli``: the same command line as the ``sqsjobs`` script."""

from . import main

main(prog_name="sqsjobs")
