#!/usr/bin/env bash
# Builds the lab's server images without any container registry, from Debian's packages:
#
#   debootstrap --variant=minbase SUITE ROOT $MIRROR        a minimal Debian root
#   chroot ROOT apt-get install --no-install-recommends PACKAGES
#   + docker/entrypoint.sh (the official images' contract) and a small server config
#   tar -C ROOT . | docker import --change ENTRYPOINT/CMD/ENV/... - TAG   one single layer
#
# Three servers, each from the Debian release that ships it (--server NAME):
#   mariadb-10.11  Debian 12 bookworm: mariadb-server-core   innoflush/mariadb:10.11-offline
#   mariadb-11.8   Debian 13 trixie:   mariadb-server-core   innoflush/mariadb:11.8-offline
#   mysql-9.7      Debian sid:         mysql-server-core     innoflush/mysql:9.7-offline
# The same root also runs without Docker: --keep-root DIR keeps it for the lab's local
# backend (`innoflush lab run --server-root DIR`: the server in a chroot); --root-only
# builds only that (no Docker engine needed).
#
# usage: docker/build-offline-image.sh [--server NAME] [--if-missing] [--tag TAG]
#                                      [--keep-root DIR] [--root-only] [--rootfs-tar FILE]
#   --server NAME      mariadb-10.11 (default), mariadb-11.8 or mysql-9.7
#   --if-missing       do nothing when what is asked exists (the image TAG, and DIR with
#                      --keep-root): how `make docker-ready` calls it
#   --tag TAG          image name (default: the server's, above)
#   --keep-root DIR    also keep the finished root at DIR (replaced if there)
#   --root-only        build the root for --keep-root DIR only, import no image
#   --rootfs-tar FILE  also keep the root file system as FILE (.tar), for `docker import`
#                      on another host
# Environment (all optional):
#   MIRROR           Debian mirror for debootstrap and apt (default http://deb.debian.org/debian);
#                    a local mirror or a mounted Debian DVD works too (file:///media/cdrom)
#   SECURITY_MIRROR  security updates (default http://deb.debian.org/debian-security;
#                    empty: none, e.g. for a DVD; sid has none)
#   SUITE            Debian release (default: the server's, above)
#   PACKAGES         what to install (default: the server's -server-core and -client-core;
#                    "mariadb-server mariadb-client": the full packages, 440 MB instead of 143)
#   BUILD_DIR        where to build the root (default /var/tmp; needs about 1 GB, and a
#                    file system that allows device nodes and executables)
#   DEBOOTSTRAP_CACHE  a directory to keep the downloaded .debs in for the next build
# A mirror that serves a fixed snapshot has Release files past their Valid-Until date (sid
# and trixie here): apt refuses them, so apt is run again with Check-Valid-Until=false, and
# the script says so.
# Needs root (debootstrap, chroot), debootstrap and, unless --root-only, a Docker engine
# (scripts/docker-engine.sh).
#
# For a host with no network at all: run this where a Debian mirror is reachable, then
#   docker save TAG | gzip > innoflush-server.tar.gz    (copy it over)
#   docker load < innoflush-server.tar.gz
# or point MIRROR at a local mirror. See docker/README.md.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
server=mariadb-10.11
tag=""
if_missing=0
rootfs_tar=""
keep_root=""
root_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --server) server=$2; shift ;;
    --server=*) server=${1#--server=} ;;
    --if-missing) if_missing=1 ;;
    --tag) tag=$2; shift ;;
    --tag=*) tag=${1#--tag=} ;;
    --keep-root) keep_root=$2; shift ;;
    --keep-root=*) keep_root=${1#--keep-root=} ;;
    --root-only) root_only=1 ;;
    --rootfs-tar) rootfs_tar=$2; shift ;;
    --rootfs-tar=*) rootfs_tar=${1#--rootfs-tar=} ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

# the server's release, packages, image name and the name of its binary
case "$server" in
  mariadb-10.11) def_suite=bookworm; def_packages="mariadb-server-core mariadb-client-core"
                 def_tag=${INNOFLUSH_OFFLINE_IMAGE:-innoflush/mariadb:10.11-offline}
                 product=mariadb; daemon=mariadbd; version_pkg=mariadb-server-core ;;
  mariadb-11.8)  def_suite=trixie; def_packages="mariadb-server-core mariadb-client-core"
                 def_tag=innoflush/mariadb:11.8-offline
                 product=mariadb; daemon=mariadbd; version_pkg=mariadb-server-core ;;
  mysql-9.7)     def_suite=sid; def_packages="mysql-server-core mysql-client-core"
                 def_tag=innoflush/mysql:9.7-offline
                 product=mysql; daemon=mysqld; version_pkg=mysql-server-core ;;
  *) echo "unknown --server $server: mariadb-10.11, mariadb-11.8 or mysql-9.7" >&2; exit 2 ;;
esac
tag=${tag:-$def_tag}
if [ "$root_only" = 1 ] && [ -z "$keep_root" ]; then
  echo "--root-only needs --keep-root DIR (where to put the root)" >&2; exit 2
fi

mirror=${MIRROR:-http://deb.debian.org/debian}
security=${SECURITY_MIRROR-http://deb.debian.org/debian-security}
suite=${SUITE:-$def_suite}
packages=${PACKAGES:-$def_packages}
# sid has no security suite and no -updates
[ "$suite" = sid ] || [ "$suite" = unstable ] && security=""
build_dir=${BUILD_DIR:-/var/tmp}

say() { echo "build-offline-image: $*" >&2; }

have_image() { docker image inspect "$tag" >/dev/null 2>&1; }
have_root() { [ -x "$keep_root/usr/sbin/$daemon" ]; }
if [ "$if_missing" = 1 ] && { [ "$root_only" = 1 ] || have_image; } \
    && { [ -z "$keep_root" ] || have_root; }; then
  [ "$root_only" = 1 ] || say "$tag already exists (remove it with: docker rmi $tag, to build it again)"
  [ -n "$keep_root" ] && say "$keep_root already holds $daemon (remove it to build it again)"
  exit 0
fi
if [ "$root_only" = 0 ] && ! docker version >/dev/null 2>&1; then
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

# import_image: the root at $root as the image $tag, one layer
import_image() {
  local t_import=$SECONDS version_env=MARIADB_VERSION
  [ "$product" = mysql ] && version_env=MYSQL_VERSION
  say "docker import as $tag ($title $version) ..."
  tar --numeric-owner --xattrs -C "$root" --exclude=./dev/* --exclude=./proc/* \
      --exclude=./sys/* -c . | docker import \
    --change 'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]' \
    --change "CMD [\"$daemon\"]" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change "ENV $version_env=$version" \
    --change 'VOLUME /var/lib/mysql' \
    --change 'EXPOSE 3306' \
    --change "LABEL org.opencontainers.image.title=\"innoflush offline $title\"" \
    --change "LABEL org.opencontainers.image.version=\"$version\"" \
    --change "LABEL org.opencontainers.image.description=\"$title from Debian $suite, built by innoflush docker/build-offline-image.sh\"" \
    --message "innoflush offline $title $version (Debian $suite)" \
    - "$tag" >/dev/null
  local size
  size=$(docker image inspect --format '{{.Size}}' "$tag")
  say "built $tag: $title $version, $((size / 1024 / 1024)) MB, in $((SECONDS - t_start)) s" \
    "(import $((SECONDS - t_import)) s)"
}

t_start=$SECONDS
# a root kept by an earlier build makes the image without building again
if [ "$if_missing" = 1 ] && [ "$root_only" = 0 ] && [ -n "$keep_root" ] && have_root \
    && [ -f "$keep_root/etc/innoflush-server" ]; then
  read -r title version _ <"$keep_root/etc/innoflush-server"
  root=$keep_root
  say "$tag from the root kept at $keep_root ($title $version)"
  import_image
  exit 0
fi
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
  case "$mirror:$suite" in file:*|*:sid|*:unstable) ;; *) echo "deb $mirror $suite-updates main" ;; esac
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
if ! in_root apt-get update -qq >"$work/apt.log" 2>&1; then
  if grep -q -i -E "is no longer valid|expired|Valid-Until" "$work/apt.log"; then
    # a fixed snapshot of the archive: its Release files are past their Valid-Until
    say "the mirror's Release files are past their Valid-Until date (a fixed snapshot):" \
        "apt-get again with Acquire::Check-Valid-Until=false"
    echo 'Acquire::Check-Valid-Until "false";' >>"$root/etc/apt/apt.conf.d/01-innoflush"
    in_root apt-get update -qq >>"$work/apt.log" 2>&1 || apt_failed=1
  else
    apt_failed=1
  fi
fi
if [ -n "${apt_failed:-}" ] || ! in_root apt-get install -y -qq $packages >>"$work/apt.log" 2>&1
then
  say "apt-get failed; the end of its log:"
  tail -n 25 "$work/apt.log" >&2
  exit 1
fi
say "apt-get done after $((SECONDS - t_apt)) s"
version=$(in_root dpkg-query -W -f='${Version}' "$version_pkg" 2>/dev/null \
  || in_root dpkg-query -W -f='${Version}' "${version_pkg%-core}")
[ "$product" = mysql ] && title=MySQL || title=MariaDB

# the entrypoint, and what the official images configure: listen on all interfaces (the
# lab passes --bind-address=127.0.0.1), no DNS lookups for clients, nothing in the datadir
install -m 0755 "$here/entrypoint.sh" "$root/usr/local/bin/docker-entrypoint.sh"
if [ "$product" = mysql ]; then
  # Debian's MySQL reads /etc/mysql/my.cnf, which includes conf.d/; its compiled-in
  # secure_file_priv (/var/lib/mysql-files) must exist or mysqld refuses to start
  mkdir -p "$root/etc/mysql/conf.d"
  cat >"$root/etc/mysql/conf.d/05-innoflush-docker.cnf" <<'EOF'
# innoflush offline image (docker/build-offline-image.sh), as in the official images
[mysqld]
skip-name-resolve
host-cache-size = 0
secure-file-priv = /var/lib/mysql-files
EOF
  install -d -o 999 -g 999 -m 0750 "$root/var/lib/mysql-files"
else
  mkdir -p "$root/etc/mysql/mariadb.conf.d"
  cat >"$root/etc/mysql/mariadb.conf.d/05-innoflush-docker.cnf" <<'EOF'
# innoflush offline image (docker/build-offline-image.sh), as in the official images
[mariadbd]
skip-name-resolve
host-cache-size = 0
EOF
fi
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

if [ -n "$keep_root" ]; then
  # the root for the local backend's chroot: replaced as a whole, never half-written
  mkdir -p "$(dirname "$keep_root")"
  rm -rf "$keep_root.new" && mv "$root" "$keep_root.new"
  rm -rf "$keep_root" && mv "$keep_root.new" "$keep_root"
  root=$keep_root
  printf '%s %s (Debian %s)\n' "$title" "$version" "$suite" >"$root/etc/innoflush-server"
  say "root kept at $keep_root ($title $version, $(du -sm "$keep_root" | cut -f1) MB)"
fi
if [ "$root_only" = 1 ]; then
  say "built the root of $title $version in $((SECONDS - t_start)) s"
  exit 0
fi

import_image
