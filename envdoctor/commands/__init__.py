"""One module per subcommand: `register(subparsers)` adds it, `args.func(args)` runs it and returns the exit code."""
