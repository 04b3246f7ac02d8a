# Shared by the cross-target scripts: installs Debian packages that are
# missing, quietly and idempotently (nothing runs when all are installed).
#
#   apt_install_missing LABEL [--arch ARCH] PACKAGE...
#
# --arch adds a foreign dpkg architecture first (e.g. arm64 for `:arm64`
# packages). Exits the calling script on a failed install.

apt_install_missing() {
    local label=$1 arch="" p
    shift
    if [[ "${1:-}" == "--arch" ]]; then
        arch=$2
        shift 2
    fi
    local missing=()
    for p in "$@"; do
        if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
            missing+=("$p")
        fi
    done
    (( ${#missing[@]} )) || return 0
    echo "$label: installing ${missing[*]}"
    local sudo=""
    [[ $(id -u) == 0 ]] || sudo=sudo
    if [[ -n "$arch" ]] && ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
        $sudo dpkg --add-architecture "$arch"
    fi
    # An unrelated stale index (seen: a mirror's armhf list) makes apt-get
    # update exit 100 while the lists we need arrived; the install below is
    # what has to succeed.
    $sudo apt-get update -qq || echo "$label: warning: apt-get update reported errors; trying the install anyway"
    local apt_log
    apt_log=$(mktemp)
    if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$apt_log" 2>&1; then
        cat "$apt_log" >&2
        echo "$label: apt-get install failed" >&2
        exit 1
    fi
    rm -f "$apt_log"
}
