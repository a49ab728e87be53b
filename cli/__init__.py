"""The ``replcheck`` command line, a thin layer over the Python API (``replcheck``).

- ``main``: the parser and ``main()``; ``launch``: the console script's entry point.
- ``commands/``: one module per subcommand.
- ``args``: the options commands share; ``outputs``: output paths checked up front;
  ``exits``: exit codes and ``UsageError``.
- ``report`` and ``junit``: what users read (tables, JSON, HTML, JUnit XML).
"""
