#!/usr/bin/env bash
# Checks that the services the test suite talks to are reachable, starting them with this
# machine's own commands when they are installed but stopped. Each entry: name, host, port,
# start command. SQLite is embedded; NATS (with JetStream) backs the distributed event bus and
# artifact store tests; PostgreSQL backs the Postgres record store tests (database `test`, trust
# authentication on 127.0.0.1, see src/stores/postgres/testing/test-postgres.ts). Chromium is no
# service but is checked here too: the dashboard's browser tests need it. So is bubblewrap: the
# terminal environment's sandbox tests run under it (src/rollouts/environments/command-sandbox.test.ts).
set -uo pipefail

required_services=(
  'NATS JetStream|127.0.0.1|4222|start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log'
  'PostgreSQL|127.0.0.1|5432|pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start'
)

reachable() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

missing=()
for entry in "${required_services[@]}"; do
  IFS='|' read -r name host port start <<<"$entry"
  if ! reachable "$host" "$port"; then
    echo "check-services: $name is not reachable at $host:$port; starting it" >&2
    eval "$start" >/dev/null 2>&1 || true
    for _ in $(seq 1 30); do reachable "$host" "$port" && break; sleep 1; done
  fi
  reachable "$host" "$port" || missing+=("$name ($host:$port)")
done

# Installs a Debian package as root (or through sudo) when this machine has apt-get; quiet, and
# with a refreshed package list only when the first try fails.
install_debian_package() {
  local run=()
  if [ "$(id -u)" != 0 ]; then command -v sudo >/dev/null || return 1; run=(sudo); fi
  command -v apt-get >/dev/null || return 1
  { "${run[@]}" apt-get install -y "$1" || { "${run[@]}" apt-get update && "${run[@]}" apt-get install -y "$1"; }; } >/dev/null 2>&1
}

# The dashboard's browser tests drive Debian's chromium (test/dashboard.e2e.test.ts); installed once,
# so a machine that has it pays one `test -x`.
if [ ! -x /usr/bin/chromium ]; then
  echo "check-services: /usr/bin/chromium is missing; installing Debian's chromium for the browser tests" >&2
  install_debian_package chromium
  [ -x /usr/bin/chromium ] || missing+=("chromium (/usr/bin/chromium: install it with 'apt-get install -y chromium')")
fi

# The terminal sandbox's tests run commands under bubblewrap and skip without it; CI must not skip
# them, so bwrap must be installed and able to make namespaces here.
if [ ! -x /usr/bin/bwrap ]; then
  echo "check-services: /usr/bin/bwrap is missing; installing Debian's bubblewrap for the sandbox tests" >&2
  install_debian_package bubblewrap
fi
if [ ! -x /usr/bin/bwrap ]; then
  missing+=("bubblewrap (/usr/bin/bwrap: install it with 'apt-get install -y bubblewrap')")
elif ! bwrap_error=$(bwrap --unshare-all --ro-bind / / --dev /dev --proc /proc true 2>&1); then
  missing+=("a working bubblewrap (bwrap cannot make namespaces here: ${bwrap_error})")
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "check-services: the tests need these services and they are not running: ${missing[*]}" >&2
  exit 1
fi
echo "check-services: ok (${#required_services[@]} service(s), chromium and bubblewrap required)"
