"""One module per ``schedbench`` sub-command (discovered by ``bench.cli``)."""
