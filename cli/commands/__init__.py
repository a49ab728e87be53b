"""One module per ``replcheck`` subcommand (see cli.main)."""
