# Helpers shared by the CLI test scripts (sourced after FLATRT, SRC and CASE are set):
#   TMP            a scratch directory removed on exit (also kills $bg_pid if a case set it)
#   fail MSG       counts a failure and prints it
#   expect STATUS DESCRIPTION -- COMMAND...
#                  runs COMMAND with stdout to $TMP/out, stderr to $TMP/err; checks the exit status
#   contains FILE TEXT DESCRIPTION / lacks FILE TEXT DESCRIPTION
#   finish         exits 1 after printing the failure count, or prints "CASE: ok"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/frt_cli.XXXXXX")
bg_pid=
cleanup() {
    if [ -n "$bg_pid" ]; then kill "$bg_pid" 2>/dev/null || true; fi
    rm -rf "$TMP"
}
trap cleanup EXIT
failures=0

fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

expect() {
    want=$1
    what=$2
    shift 3
    set +e
    "$@" >"$TMP/out" 2>"$TMP/err"
    got=$?
    set -e
    if [ "$got" -ne "$want" ]; then
        fail "$what: exit status $got, expected $want"
        sed 's/^/  stdout: /' "$TMP/out" | head -20
        sed 's/^/  stderr: /' "$TMP/err" | head -20
    fi
}

contains() {
    if ! grep -qF -- "$2" "$1"; then
        fail "$3: '$2' not in $(basename "$1")"
        sed 's/^/  | /' "$1" | head -20
    fi
}
lacks() {
    if grep -qF -- "$2" "$1"; then fail "$3: '$2' should not be in $(basename "$1")"; fi
}

finish() {
    if [ "$failures" -ne 0 ]; then
        echo "$CASE: $failures failure(s)"
        exit 1
    fi
    echo "$CASE: ok"
}
