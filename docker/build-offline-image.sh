#!/usr/bin/env bash
# Builds the lab's MariaDB image without any container registry, from Debian's packages:
#
#   debootstrap --variant=minbase bookworm ROOT $MIRROR      a minimal Debian root
#   chroot ROOT apt-get install --no-install-recommends mariadb-server-core mariadb-client-core
#   + docker/entrypoint.sh (the official images' contract) and a small server config
#   tar -C ROOT . | docker import --change ENTRYPOINT/CMD/ENV/... - TAG   one single layer
#
# usage: docker/build-offline-image.sh [--if-missing] [--tag TAG] [--rootfs-tar FILE]
#   --if-missing       do nothing when TAG already exists (how `make docker-ready` calls it)
#   --tag TAG          image name (default innoflush/mariadb:10.11-offline)
#   --rootfs-tar FILE  also keep the root file system as FILE (.tar), for `docker import`
#                      on another host
# Environment (all optional):
#   MIRROR           Debian mirror for debootstrap and apt (default http://deb.debian.org/debian);
#                    a local mirror or a mounted Debian DVD works too (file:///media/cdrom)
#   SECURITY_MIRROR  security updates (default http://deb.debian.org/debian-security;
#                    empty: none, e.g. for a DVD)
#   SUITE            Debian release (default bookworm: MariaDB 10.11)
#   PACKAGES         what to install (default "mariadb-server-core mariadb-client-core";
#                    "mariadb-server mariadb-client": the full packages, 440 MB instead of 143)
#   BUILD_DIR        where to build the root (default /var/tmp; needs about 400 MB, and a
#                    file system that allows device nodes and executables)
#   DEBOOTSTRAP_CACHE  a directory to keep the downloaded .debs in for the next build
# Needs root (debootstrap, chroot), debootstrap and a Docker engine (scripts/docker-engine.sh).
#
# For a host with no network at all: run this where a Debian mirror is reachable, then
#   docker save TAG | gzip > innoflush-mariadb.tar.gz    (copy it over)
#   docker load < innoflush-mariadb.tar.gz
# or point MIRROR at a local mirror. See docker/README.md.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tag=${INNOFLUSH_OFFLINE_IMAGE:-innoflush/mariadb:10.11-offline}
if_missing=0
rootfs_tar=""
while [ $# -gt 0 ]; do
  case "$1" in
    --if-missing) if_missing=1 ;;
    --tag) tag=$2; shift ;;
    --tag=*) tag=${1#--tag=} ;;
    --rootfs-tar) rootfs_tar=$2; shift ;;
    --rootfs-tar=*) rootfs_tar=${1#--rootfs-tar=} ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

mirror=${MIRROR:-http://deb.debian.org/debian}
security=${SECURITY_MIRROR-http://deb.debian.org/debian-security}
suite=${SUITE:-bookworm}
packages=${PACKAGES:-mariadb-server-core mariadb-client-core}
build_dir=${BUILD_DIR:-/var/tmp}

say() { echo "build-offline-image: $*" >&2; }

if [ "$if_missing" = 1 ] && docker image inspect "$tag" >/dev/null 2>&1; then
  say "$tag already exists (remove it with: docker rmi $tag, to build it again)"
  exit 0
fi
if ! docker version >/dev/null 2>&1; then
  say "no Docker engine answers: start one first (sudo scripts/docker-engine.sh start)"
  exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
  say "debootstrap and chroot need root: sudo $0"
  exit 1
fi
debootstrap=$(command -v debootstrap || echo /usr/sbin/debootstrap)
if [ ! -x "$debootstrap" ]; then
  say "debootstrap is missing: apt-get install debootstrap (or make system-deps as root)"
  exit 1
fi

t_start=$SECONDS
work=$(mktemp -d "$build_dir/innoflush-image.XXXXXX")
root="$work/root"
mounts=()
cleanup() {
  for m in "${mounts[@]}" "$root/proc"; do
    mountpoint -q "$m" 2>/dev/null && umount -l "$m"
  done
  # never delete through a mount that is still there (a local mirror)
  for m in "${mounts[@]}"; do mountpoint -q "$m" 2>/dev/null && return; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say "debootstrap --variant=minbase $suite from $mirror (log: $work/debootstrap.log) ..."
boot_args=(--variant=minbase)
if [ -n "${DEBOOTSTRAP_CACHE:-}" ]; then
  mkdir -p "$DEBOOTSTRAP_CACHE"
  boot_args+=(--cache-dir="$(cd "$DEBOOTSTRAP_CACHE" && pwd)")
fi
if ! "$debootstrap" "${boot_args[@]}" "$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1
then
  say "debootstrap failed; the end of its log:"
  tail -n 20 "$work/debootstrap.log" >&2
  [ -f "$root/debootstrap/debootstrap.log" ] && tail -n 20 "$root/debootstrap/debootstrap.log" >&2
  exit 1
fi
say "debootstrap done after $((SECONDS - t_start)) s"

# no documentation, manual pages or translations: they are most of a minimal root's size
mkdir -p "$root/etc/dpkg/dpkg.cfg.d"
cat >"$root/etc/dpkg/dpkg.cfg.d/01-innoflush-nodoc" <<'EOF'
path-exclude=/usr/share/doc/*
path-include=/usr/share/doc/*/copyright
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/locale/*
path-exclude=/usr/share/lintian/*
EOF
cat >"$root/etc/apt/apt.conf.d/01-innoflush" <<'EOF'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Languages "none";
EOF
{
  echo "deb $mirror $suite main"
  case "$mirror" in file:*) ;; *) echo "deb $mirror $suite-updates main" ;; esac
  [ -n "$security" ] && echo "deb $security $suite-security main"
} >"$root/etc/apt/sources.list"
# packages must not start services in the build root
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod +x "$root/usr/sbin/policy-rc.d"
mount -t proc proc "$root/proc"
# a local mirror (file:///...) must be seen at the same path inside the root, for apt
for m in "$mirror" "$security"; do
  case "$m" in
    file://*)
      dir=${m#file://}
      mkdir -p "$root$dir"
      mount --bind -o ro "$dir" "$root$dir"
      mounts+=("$root$dir") ;;
  esac
done

in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
  DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 "$@"; }

# the mysql user first, with the official images' uid and gid (999), so the package
# scripts find it and a datadir keeps the same owner whichever image wrote it
in_root groupadd --system --gid 999 mysql
in_root useradd --system --uid 999 --gid 999 --home-dir /var/lib/mysql --no-create-home \
  --shell /usr/sbin/nologin mysql

say "apt-get install $packages ..."
t_apt=$SECONDS
if ! in_root sh -c "apt-get update -qq && apt-get install -y -qq $packages" \
    >"$work/apt.log" 2>&1; then
  say "apt-get failed; the end of its log:"
  tail -n 25 "$work/apt.log" >&2
  exit 1
fi
say "apt-get done after $((SECONDS - t_apt)) s"
version=$(in_root dpkg-query -W -f='${Version}' mariadb-server-core 2>/dev/null \
  || in_root dpkg-query -W -f='${Version}' mariadb-server)

# the entrypoint, and what the official images configure: listen on all interfaces (the
# lab passes --bind-address=127.0.0.1), no DNS lookups for clients, nothing in the datadir
install -m 0755 "$here/entrypoint.sh" "$root/usr/local/bin/docker-entrypoint.sh"
mkdir -p "$root/etc/mysql/mariadb.conf.d"
cat >"$root/etc/mysql/mariadb.conf.d/05-innoflush-docker.cnf" <<'EOF'
# innoflush offline image (docker/build-offline-image.sh), as in the official images
[mariadbd]
skip-name-resolve
host-cache-size = 0
EOF
install -d -o 999 -g 999 -m 0755 "$root/var/lib/mysql"
install -d -o 999 -g 999 -m 1777 "$root/run/mysqld"

umount "$root/proc"
for m in "${mounts[@]}"; do umount "$m" && { rmdir "$m" 2>/dev/null || true; }; done
mounts=()
rm -f "$root/usr/sbin/policy-rc.d"
in_root apt-get clean
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/debconf/*-old \
  "$root"/var/log/* "$root"/tmp/* "$root"/root/.bash_history "$root"/debootstrap
find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete 2>/dev/null || true
find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete 2>/dev/null || true
rm -rf "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/* \
  "$root"/usr/share/lintian/*
# the machine identity of the build host has no place in an image
: >"$root/etc/machine-id"
rm -f "$root/var/lib/dbus/machine-id"

tar_args=(--numeric-owner --xattrs -C "$root" --exclude=./dev/* --exclude=./proc/*
          --exclude=./sys/* -c .)
if [ -n "$rootfs_tar" ]; then
  tar "${tar_args[@]}" -f "$rootfs_tar"
  say "root file system kept as $rootfs_tar"
fi

say "docker import as $tag (MariaDB $version) ..."
t_import=$SECONDS
tar "${tar_args[@]}" | docker import \
  --change 'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]' \
  --change 'CMD ["mariadbd"]' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change "ENV MARIADB_VERSION=$version" \
  --change 'VOLUME /var/lib/mysql' \
  --change 'EXPOSE 3306' \
  --change 'LABEL org.opencontainers.image.title="innoflush offline MariaDB"' \
  --change "LABEL org.opencontainers.image.version=\"$version\"" \
  --change "LABEL org.opencontainers.image.description=\"MariaDB from Debian $suite, built by innoflush docker/build-offline-image.sh\"" \
  --message "innoflush offline MariaDB $version (Debian $suite)" \
  - "$tag" >/dev/null
size=$(docker image inspect --format '{{.Size}}' "$tag")
say "built $tag: MariaDB $version, $((size / 1024 / 1024)) MB, in $((SECONDS - t_start)) s" \
  "(import $((SECONDS - t_import)) s)"
