import CLI
exit(CommandLine.run())
