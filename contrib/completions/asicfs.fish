# fish completion for asicfs(1).
set -l commands mount umount open close create ls extract add remove sign verify extend card tokens remote help
complete -c asicfs -f
complete -c asicfs -n "not __fish_seen_subcommand_from $commands" -a "$commands"
complete -c asicfs -n "not __fish_seen_subcommand_from $commands" -l help -d 'show help'
complete -c asicfs -n "not __fish_seen_subcommand_from $commands" -l version -d 'show the version'
complete -c asicfs -n "__fish_seen_subcommand_from sign" -s m -l method -x -a 'pkcs12 pkcs11 id-card mobile-id smart-id remote' -d 'signing method'
complete -c asicfs -n "__fish_seen_subcommand_from card" -a 'status certs pins change-pin unblock pin1 pin2 puk reader= can='
complete -c asicfs -n "__fish_seen_subcommand_from remote" -a 'credentials'
complete -c asicfs -n "__fish_seen_subcommand_from ls verify sign tokens card remote create add remove extend extract" -l json -d 'print JSON'
complete -c asicfs -n "__fish_seen_subcommand_from mount open" -s f -l foreground -d 'stay in the foreground'
complete -c asicfs -n "__fish_seen_subcommand_from $commands" -F
