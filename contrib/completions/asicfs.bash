# bash completion for asicfs(1): commands, their options, signing methods and their key=
# parameters, -o settings and container files. Works with and without the bash-completion
# package (its helpers are used only when they are there).

# The settings -o takes (as 'asicfs --help' lists them), and mount's own options.
_asicfs_settings="tsa-url= ocsp-url= profile= tsl= tsl-cert= tsl-signer-sha256= ocsp-tm-policy= trust-anchors= cache-dir= demo=
 mobile-id.url= mobile-id.relying-party-uuid= mobile-id.relying-party-name= mobile-id.tls-cert= mobile-id.timeout=
 smart-id.url= smart-id.relying-party-uuid= smart-id.relying-party-name= smart-id.tls-cert= smart-id.timeout= smart-id.api= smart-id.signature-algorithm= smart-id.scheme-name=
 remote.url= remote.tls-cert= remote.client-identity= remote.client-identity-passphrase-file= remote.username=
 remote.password-file= remote.timeout= pinentry= transient-names= notify= proxy="
_asicfs_mount_options="ro create open-containers= allow_other"

# The key= parameters of a signing method (as 'asicfs sign --help' lists them).
_asicfs_parameters() {
    local place="role= city= state= postal-code= country="
    case $1 in
        mobile-id) echo "phone= idcode= language= message= $place" ;;
        smart-id) echo "country= idcode= document= qr= display= message= role= city= state= postal-code=" ;;
        id-card) echo "reader= can= pin-fd= $place" ;;
        pkcs11) echo "module= label= slot= key= pin-fd= $place" ;;
        pkcs12) echo "file= passphrase-file= $place" ;;
        remote) echo "credential= pin-fd= $place" ;;
    esac
}

# The key= parameters of a decryption method (as 'asicfs decrypt --help' lists them).
_asicfs_decrypt_parameters() {
    case $1 in
        id-card) echo "pin-fd= reader= can=" ;;
        pkcs11) echo "module= label= slot= key= pin-fd=" ;;
        pkcs12) echo "file= passphrase-file= passphrase-fd=" ;;
        key) echo "key-file= cert-file= passphrase-file= passphrase-fd=" ;;
        secret) echo "secret-file= label=" ;;
        password) echo "password-file= password-fd= label=" ;;
    esac
}

# Words; a word ending in '=' gets no space after it (the value follows).
_asicfs_words() {
    local word
    COMPREPLY=()
    for word in $(compgen -W "$1" -- "$2"); do COMPREPLY+=("$word"); done
    if [[ ${#COMPREPLY[@]} -gt 0 && ${COMPREPLY[*]} == *= ]] && type compopt &>/dev/null; then compopt -o nospace 2>/dev/null; fi
}

# Files (or folders with -d): bash-completion's _filedir when it is loaded, else compgen.
_asicfs_files() {
    if declare -F _filedir >/dev/null; then
        if [[ $1 == -d ]]; then _filedir -d; else _filedir "$1"; fi
        return
    fi
    local IFS=$'\n'
    if [[ $1 == -d ]]; then
        COMPREPLY=($(compgen -d -- "$cur"))
    elif [[ -n $1 ]]; then
        shopt -s extglob  # the containers' pattern, as bash-completion has it on too
        COMPREPLY=($(compgen -d -- "$cur"; compgen -f -X "!*.$1" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
    type compopt &>/dev/null && compopt -o filenames 2>/dev/null
}

_asicfs() {
    # The word being completed and the one before it, from COMP_WORDS, splitting at '=' the way
    # users type (key=value is one word): no need for bash-completion's _init_completion.
    local cword=$COMP_CWORD cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"
    local -a words=("${COMP_WORDS[@]}")
    [[ $cur == = ]] && cur=""
    local commands="mount umount open close create ls extract add remove sign verify extend decrypt encrypt card tokens remote help"
    local containers='@(asice|sce|bdoc|asics|scs|ASICE|SCE|BDOC|ASICS|SCS)'
    if [[ $cword -eq 1 ]]; then
        _asicfs_words "$commands --help --version" "$cur"
        return
    fi
    case $prev in
        -m|--method)
            if [[ ${words[1]} == decrypt ]]; then _asicfs_words "id-card pkcs11 pkcs12 key secret password" "$cur"
            else _asicfs_words "pkcs12 pkcs11 id-card mobile-id smart-id remote" "$cur"; fi
            return ;;
        --format) _asicfs_words "cdoc cdoc1.0 cdoc2" "$cur"; return ;;
        -r|--recipient|--password-file) [[ ${words[1]} == encrypt ]] && { _asicfs_files; return; } ;;
        -o|--option)
            if [[ ${words[1]} == mount || ${words[1]} == open ]]; then
                _asicfs_words "$_asicfs_settings $_asicfs_mount_options" "$cur"
            else
                _asicfs_words "$_asicfs_settings" "$cur"
            fi
            return ;;
        --config) _asicfs_files; return ;;
        --warnings) _asicfs_words "error warning ignore" "$cur"; return ;;
        -d|--directory) _asicfs_files -d; return ;;
    esac
    # key=VALUE (bash splits it at '='): --warnings' values, else a path (file=, trust-anchors=, ...).
    if [[ $prev == = ]]; then
        if [[ ${words[cword-2]} == --warnings ]]; then _asicfs_words "error warning ignore" "$cur"; else _asicfs_files; fi
        return
    fi
    case ${words[1]} in
        card)
            if [[ $cword -eq 2 ]]; then _asicfs_words "status certs pins change-pin unblock" "$cur"; return; fi
            case ${words[2]} in
                change-pin) _asicfs_words "pin1 pin2 puk reader= can= old-fd= new-fd=" "$cur" ;;
                unblock) _asicfs_words "pin1 pin2 reader= can= puk-fd= new-fd=" "$cur" ;;
                *) _asicfs_words "--json --pem reader= can=" "$cur" ;;
            esac
            return ;;
        remote) _asicfs_words "credentials --json" "$cur"; return ;;
        tokens) _asicfs_words "module= --json" "$cur"; return ;;
        umount) _asicfs_files -d; return ;;
        mount|open)
            if [[ $cur == -* ]]; then _asicfs_words "-f --foreground -o --no-file-manager" "$cur"; return; fi
            if [[ $cword -eq 3 && ${words[1]} == mount ]]; then _asicfs_files -d; else _asicfs_files "$containers"; fi
            return ;;
        decrypt)
            local i method=""
            for ((i = 2; i < cword; i++)); do
                [[ ${words[i]} == -m || ${words[i]} == --method ]] && method=${words[i+1]}
            done
            if [[ $cur == -* ]]; then _asicfs_words "--method --directory --stdout --json --help" "$cur"; return; fi
            if [[ $cword -gt 2 && -n $method ]]; then _asicfs_words "$(_asicfs_decrypt_parameters "$method")" "$cur"; return; fi
            _asicfs_files "@(cdoc|cdoc2|CDOC|CDOC2)"; return ;;
        encrypt)
            if [[ $cur == -* ]]; then _asicfs_words "--recipient --password-file --format --json --help" "$cur"; return; fi
            _asicfs_files; return ;;
        sign)
            # After the container: the chosen method's key= parameters.
            local i method=""
            for ((i = 2; i < cword; i++)); do
                [[ ${words[i]} == -m || ${words[i]} == --method ]] && method=${words[i+1]}
            done
            if [[ $cword -gt 2 && $cur != -* && -n $method ]]; then
                _asicfs_words "$(_asicfs_parameters "$method")" "$cur"
                return
            fi ;;
    esac
    if [[ $cur == -* ]]; then
        _asicfs_words "--help --json --config -o -q --method --signature --replace --mime --stdout --force --directory --warnings --notify -r --recursive" "$cur"
        return
    fi
    if [[ $cword -eq 2 ]]; then _asicfs_files "$containers"; else _asicfs_files; fi
}
complete -F _asicfs asicfs
