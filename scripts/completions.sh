#!/bin/sh
# completions.sh ANNOUNCE SHELL: ArgumentParser's completion script for SHELL (bash, zsh, fish)
# with two things it does not do: `announce help <TAB>` offers the subcommands, and bash's
# call of announce for dynamic values (-d's devices, cancel's ids) keeps its stderr quiet
# (no `command not found` on the terminal when announce is not on PATH). The bash script is
# sourced, never run: it has no #! line.
set -eu
bin=$1 shell=$2
script=$("$bin" --generate-completion-script "$shell")
# The subcommands, as bash's script lists them in its dispatch: `    play|alert|...|help)`.
names=$("$bin" --generate-completion-script bash | sed -n 's/^    \(play|[a-z|-]*\))$/\1/p' | tr '|' ' ' | sed 's/ help$//')
[ -n "$names" ] || { echo "completions.sh: no subcommands found in $bin's bash script" >&2; exit 1; }
case $shell in
bash) printf '%s\n' "$script" | sed \
        -e '1{/^#!/d;}' \
        -e 's|^    "${COMP_WORDS\[0\]}" "${@}" "${words\[@\]}"$|& 2>/dev/null|' \
        -e "/^_announce_help() {/,/^}/ s|^    __announce_offer_flags_options -1\$|&\n    [[ \${COMP_CWORD} -eq 2 ]] \&\& COMPREPLY+=(\$(compgen -W '$names' -- \"\${cur}\"))|" ;;
zsh) printf '%s\n' "$script" | sed -e "/^_announce_help() {/,/^}/ s|'\*:subcommands:'|'1:subcommand:($names)'|" ;;
fish) printf '%s\n' "$script" | sed -e "/positional \"announce\" -eq 1' -fa '[a-z]*'/{p;s/\"announce\" -eq 1/\"announce help\" -eq 1/;}" \
        | grep -v "\"announce help\" -eq 1' -fa 'help'" ;;
*) echo "completions.sh: bash, zsh or fish, not $shell" >&2; exit 64 ;;
esac
