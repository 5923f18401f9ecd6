#!/usr/bin/env bash
# Run by `npm test` first: installs the system packages the tests need when they are missing —
# Debian's chromium (the dashboard's browser tests) and the PostgreSQL server (the postgres store's
# tests). Where it cannot (no apt-get, not root and no password-less sudo) it says what to install and
# fails, unless SESSIOND_TEST_DEPS=skip (then the tests that need them fail and say so themselves).
set -euo pipefail

# Where to look for them (a test points it at an empty directory).
root="${SESSIOND_TEST_DEPS_ROOT:-}"
missing=()
[ -x "$root/usr/bin/chromium" ] || missing+=(chromium)
compgen -G "$root/usr/lib/postgresql/*/bin/postgres" >/dev/null || missing+=(postgresql)
[ ${#missing[@]} -eq 0 ] && exit 0

say() { echo "npm test: $*" >&2; }
cannot() {
  if [ "${SESSIOND_TEST_DEPS:-}" = "skip" ]; then
    say "$1; going on without ${missing[*]} (SESSIOND_TEST_DEPS=skip)"
    exit 0
  fi
  say "the tests need the Debian packages ${missing[*]}, and $1."
  say "install them (apt-get install -y ${missing[*]}), or set SESSIOND_TEST_DEPS=skip to run without them."
  exit 1
}

command -v apt-get >/dev/null || cannot "there is no apt-get here"
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo=(sudo -n); else
    cannot "this is not root and sudo needs a password"
  fi
fi
say "installing ${missing[*]} with apt-get (once)"
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
