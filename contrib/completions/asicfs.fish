# fish completion for asicfs(1).
set -l commands mount umount open close create ls extract add remove sign verify extend decrypt encrypt card tokens remote help

# The settings -o takes (as 'asicfs --help' lists them); mount and open take mount options too.
function __asicfs_settings
    string split ' ' -- tsa-url= ocsp-url= profile= tsl= tsl-cert= tsl-signer-sha256= ocsp-tm-policy= trust-anchors= cache-dir= demo= \
        mobile-id.url= mobile-id.relying-party-uuid= mobile-id.relying-party-name= mobile-id.tls-cert= mobile-id.timeout= \
        smart-id.url= smart-id.relying-party-uuid= smart-id.relying-party-name= smart-id.tls-cert= smart-id.timeout= smart-id.api= smart-id.signature-algorithm= smart-id.scheme-name= \
        remote.url= remote.tls-cert= remote.client-identity= remote.client-identity-passphrase-file= remote.username= \
        remote.password-file= remote.timeout= pinentry= transient-names= notify= proxy=
    if __fish_seen_subcommand_from mount open
        string split ' ' -- ro create open-containers= allow_other
    end
end

# The value given with -m/--method on the command line so far (the last one wins).
function __asicfs_method
    set -l tokens (commandline -opc)
    set -l method
    for i in (seq (count $tokens))
        if contains -- $tokens[$i] -m --method; and test $i -lt (count $tokens)
            set method $tokens[(math $i + 1)]
        end
    end
    echo $method
end

# The key= parameters of the method given with -m/--method (as 'asicfs sign --help' lists them).
function __asicfs_sign_parameters
    set -l method (__asicfs_method)
    set -l place role= city= state= postal-code= country=
    switch "$method"
        case mobile-id
            string split ' ' -- phone= idcode= language= message= $place
        case smart-id
            string split ' ' -- country= idcode= document= qr= display= message= role= city= state= postal-code=
        case id-card
            string split ' ' -- reader= can= pin-fd= $place
        case pkcs11
            string split ' ' -- module= label= slot= key= pin-fd= $place
        case pkcs12
            string split ' ' -- file= passphrase-file= $place
        case remote
            string split ' ' -- credential= pin-fd= $place
    end
end

# The key= parameters of the decryption method given with -m/--method.
function __asicfs_decrypt_parameters
    set -l method (__asicfs_method)
    switch "$method"
        case id-card
            string split ' ' -- pin-fd= reader= can=
        case pkcs11
            string split ' ' -- module= label= slot= key= pin-fd=
        case pkcs12
            string split ' ' -- file= passphrase-file= passphrase-fd=
        case key
            string split ' ' -- key-file= cert-file= passphrase-file= passphrase-fd=
        case secret
            string split ' ' -- secret-file= label=
        case password
            string split ' ' -- password-file= password-fd= label=
    end
end

complete -c asicfs -f
complete -c asicfs -n "not __fish_seen_subcommand_from $commands" -a "$commands"
complete -c asicfs -n "not __fish_seen_subcommand_from $commands" -l help -d 'show help'
complete -c asicfs -n "not __fish_seen_subcommand_from $commands" -l version -d 'show the version'
complete -c asicfs -s o -l option -x -a '(__asicfs_settings)' -d 'setting'
complete -c asicfs -n "__fish_seen_subcommand_from sign" -s m -l method -x -a 'pkcs12 pkcs11 id-card mobile-id smart-id remote' -d 'signing method'
complete -c asicfs -n "__fish_seen_subcommand_from sign" -a '(__asicfs_sign_parameters)' -d 'parameter'
complete -c asicfs -n "__fish_seen_subcommand_from decrypt" -s m -l method -x -a 'id-card pkcs11 pkcs12 key secret password' -d 'decryption method'
complete -c asicfs -n "__fish_seen_subcommand_from decrypt" -a '(__asicfs_decrypt_parameters)' -d 'parameter'
complete -c asicfs -n "__fish_seen_subcommand_from decrypt" -s d -l directory -x -a '(__fish_complete_directories)' -d 'decrypt into this folder'
complete -c asicfs -n "__fish_seen_subcommand_from decrypt" -l stdout -x -d 'write this file to standard output'
complete -c asicfs -n "__fish_seen_subcommand_from encrypt" -s r -l recipient -r -F -d "a recipient's certificate"
complete -c asicfs -n "__fish_seen_subcommand_from encrypt" -l password-file -r -F -d 'also for this password (CDOC2)'
complete -c asicfs -n "__fish_seen_subcommand_from encrypt" -l format -x -a 'cdoc cdoc1.0 cdoc2' -d 'container format'
complete -c asicfs -n "__fish_seen_subcommand_from verify" -l warnings -x -a 'error warning ignore' -d 'VALID_WITH_WARNINGS: exit 1 (error) or 0'
complete -c asicfs -n "__fish_seen_subcommand_from card" -a 'status certs pins change-pin unblock pin1 pin2 puk reader= can='
complete -c asicfs -n "__fish_seen_subcommand_from remote" -a 'credentials'
complete -c asicfs -n "__fish_seen_subcommand_from tokens" -a 'module='
complete -c asicfs -n "__fish_seen_subcommand_from create add" -s r -l recursive -d 'add folders with everything in them'
complete -c asicfs -n "__fish_seen_subcommand_from ls verify sign tokens card remote create add remove extend extract decrypt encrypt" -l json -d 'print JSON'
complete -c asicfs -n "__fish_seen_subcommand_from mount open" -s f -l foreground -d 'stay in the foreground'
complete -c asicfs -n "__fish_seen_subcommand_from $commands" -F
