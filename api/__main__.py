"""``python -m replcheck``: the same command line as the ``replcheck`` script."""

from replcheck.cli.launch import run_as_module

run_as_module()
