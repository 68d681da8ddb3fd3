# bash completion for asicfs(1): commands, their options, signing methods and container files.
_asicfs() {
    local cur prev words cword
    _init_completion || return
    local commands="mount umount open close create ls extract add remove sign verify extend card tokens remote help"
    local containers='@(asice|sce|bdoc|asics|scs|ASICE|SCE|BDOC|ASICS|SCS)'
    if [[ $cword -eq 1 ]]; then
        COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
        return
    fi
    case $prev in
        -m|--method) COMPREPLY=($(compgen -W "pkcs12 pkcs11 id-card mobile-id smart-id remote" -- "$cur")); return ;;
        -o|--option|--config) return ;;
        --warnings) COMPREPLY=($(compgen -W "error ignore" -- "$cur")); return ;;
        -d|--directory) _filedir -d; return ;;
    esac
    case ${words[1]} in
        card)
            if [[ $cword -eq 2 ]]; then COMPREPLY=($(compgen -W "status certs pins change-pin unblock" -- "$cur")); return; fi
            case ${words[2]} in
                change-pin) COMPREPLY=($(compgen -W "pin1 pin2 puk reader= can= old-fd= new-fd=" -- "$cur")) ;;
                unblock) COMPREPLY=($(compgen -W "pin1 pin2 reader= can= puk-fd= new-fd=" -- "$cur")) ;;
                *) COMPREPLY=($(compgen -W "--json --pem reader= can=" -- "$cur")) ;;
            esac
            return ;;
        remote) COMPREPLY=($(compgen -W "credentials --json" -- "$cur")); return ;;
        tokens) COMPREPLY=($(compgen -W "module= --json" -- "$cur")); return ;;
        umount) _filedir -d; return ;;
        mount|open)
            if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "-f --foreground -o --no-file-manager" -- "$cur")); return; fi
            if [[ $cword -eq 3 && ${words[1]} == mount ]]; then _filedir -d; else _filedir "$containers"; fi
            return ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "--help --json --config -o -q --method --signature --replace --mime --stdout --force --directory --warnings --notify" -- "$cur"))
        return
    fi
    if [[ $cword -eq 2 ]]; then _filedir "$containers"; else _filedir; fi
}
complete -F _asicfs asicfs
