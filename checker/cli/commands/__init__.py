"""One module per ``replcheck`` subcommand (see checker.cli.main)."""
