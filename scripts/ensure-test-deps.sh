#!/usr/bin/env bash
# `npm test` runs this first (pretest): the browser tests need Debian's chromium and the deploy-recipe test needs
# nginx. As root, missing ones are installed through apt-get (as CI does); otherwise it stops at once with one
# line naming what to install, instead of tests that skip or fail later. EMI_SKIP_SYSTEM_DEPS=1 skips the check.
set -euo pipefail
[ "${EMI_SKIP_SYSTEM_DEPS:-}" = "1" ] && exit 0

# The tests look for these exact paths; the variables exist so that the check itself can be tested.
chromium="${EMI_CHROMIUM_PATH:-/usr/bin/chromium}"
nginx="${EMI_NGINX_PATH:-/usr/sbin/nginx}"
need=()
[ -x "$chromium" ] || need+=(chromium)
[ -x "$nginx" ] || need+=(nginx)
# libfaketime for the schedule's clock tests (test/schedule-s39-cli.test.ts preloads it into node).
compgen -G "/usr/lib/*/faketime/libfaketime.so.1" >/dev/null || need+=(faketime)
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" = "0" ] && [ "${EMI_APT_INSTALL:-1}" = "1" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing ${need[*]} through apt-get (needed by the browser, nginx and clock tests)" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  exit 0
fi

echo "npm test needs ${need[*]}: run 'sudo apt-get install -y ${need[*]}' (Debian/Ubuntu), or set EMI_SKIP_SYSTEM_DEPS=1 to run without those tests" >&2
exit 1
