#!/bin/bash
# Entrypoint of the offline MariaDB and MySQL images (docker/build-offline-image.sh).
#
# It keeps the contract of the official mariadb/mysql images, so the lab's Docker backend
# and docker/compose.yaml drive this image and the official ones the same way:
#   - arguments that start with "-" are options for the server: `docker run IMAGE
#     --innodb-flush-method=O_DIRECT` runs `mariadbd --innodb-flush-method=O_DIRECT`;
#     any other command (bash, mariadb ...) is run as given;
#   - on first start, when /var/lib/mysql (or --datadir) holds no database, it is
#     initialised, with the root password from MARIADB_ROOT_PASSWORD / MYSQL_ROOT_PASSWORD
#     (or *_FILE), or none with MARIADB_ALLOW_EMPTY_ROOT_PASSWORD / MYSQL_ALLOW_EMPTY_PASSWORD,
#     or a random one printed once with MARIADB_RANDOM_ROOT_PASSWORD /
#     MYSQL_RANDOM_ROOT_PASSWORD; root gets the host MARIADB_ROOT_HOST / MYSQL_ROOT_HOST
#     (default '%') besides localhost;
#   - MARIADB_DATABASE / MYSQL_DATABASE create a database; MARIADB_USER / MYSQL_USER with
#     MARIADB_PASSWORD / MYSQL_PASSWORD create a user with all privileges on it;
#   - started as root, it runs the server as the mysql user (uid 999, as in the official
#     images) and gives it the datadir; started with `--user UID:GID`, it runs as that
#     user, and the datadir must be writable by it (files then stay the caller's).
# The initialisation is done without networking (MariaDB: mariadb-install-db, then one
# `mariadbd --bootstrap` reading SQL from stdin; MySQL: `mysqld --initialize-insecure`
# with the SQL as its --init-file, a pipe), so a TCP connection only succeeds once the
# real server runs. Passwords never appear in a command line or a file.
set -eo pipefail

log() { printf '%s [Note] [Entrypoint]: %s\n' "$(date --rfc-3339=seconds)" "$*" >&2; }
die() { printf '%s [ERROR] [Entrypoint]: %s\n' "$(date --rfc-3339=seconds)" "$*" >&2; exit 1; }

# file_env VAR [DEFAULT]: VAR from $VAR or from the file named by $VAR_FILE
file_env() {
  local var=$1 file_var="${1}_FILE" def=${2:-}
  if [ -n "${!var:-}" ] && [ -n "${!file_var:-}" ]; then
    die "both $var and $file_var are set (but are exclusive)"
  fi
  local val=$def
  if [ -n "${!var:-}" ]; then
    val=${!var}
  elif [ -n "${!file_var:-}" ]; then
    val=$(<"${!file_var}")
  fi
  export "$var"="$val"
  unset "$file_var"
}

# mariadb_env NAME: MARIADB_NAME, else MYSQL_NAME (MYSQL_ALLOW_EMPTY_PASSWORD for
# MARIADB_ALLOW_EMPTY_ROOT_PASSWORD), the way the official MariaDB image reads them
mariadb_env() {
  local name=$1 mysql_name="MYSQL_${1}"
  [ "$name" = ALLOW_EMPTY_ROOT_PASSWORD ] && mysql_name=MYSQL_ALLOW_EMPTY_PASSWORD
  file_env "MARIADB_$name"
  file_env "$mysql_name"
  local m="MARIADB_$name"
  if [ -z "${!m}" ] && [ -n "${!mysql_name}" ]; then
    export "$m"="${!mysql_name}"
  fi
}

sql_escape() {  # a string for a '...' SQL literal
  local s=${1//\\/\\\\}
  s=${s//$'\n'/\\n}
  printf '%s' "${s//\'/\\\'}"
}

sql_ident() {  # a name for a `...` SQL identifier
  printf '%s' "${1//\`/\`\`}"
}

# server_config KEY CMD...: the value the server will use for KEY, with the options given
server_config() {
  local key=$1
  shift
  "$@" --verbose --help 2>/dev/null | awk -v key="$key" '$1 == key && NF == 2 { print $2; exit }'
}

# `docker stop` while initialising: bash as PID 1 would ignore SIGTERM
trap 'exit 143' TERM INT

if [ "${1:0:1}" = '-' ]; then
  # the image's server: mariadbd in a MariaDB image, mysqld in a MySQL one
  if command -v mariadbd >/dev/null; then set -- mariadbd "$@"; else set -- mysqld "$@"; fi
fi

if [ "$1" != mariadbd ] && [ "$1" != mysqld ]; then
  exec "$@"
fi

# the server's options are checked before anything is written
if ! out=$("$@" --verbose --help 2>&1 >/dev/null); then
  die "the server rejects its options: $(printf '%s' "$out" | tr '\n' ' ')"
fi
DATADIR=$(server_config datadir "$@" | sed 's:/*$::')
SOCKET=$(server_config socket "$@")
DATADIR=${DATADIR:-/var/lib/mysql}
SOCKET=${SOCKET:-/run/mysqld/mysqld.sock}

user_args=()
if [ "$(id -u)" = 0 ]; then
  user_args=(--user=mysql)
  mkdir -p "$DATADIR" "$(dirname "$SOCKET")"
  # the mysql user gets what it must write; files it already owns are left alone
  find "$DATADIR" \! -user mysql -exec chown mysql:mysql '{}' +
  chown mysql:mysql "$(dirname "$SOCKET")"
elif [ ! -w "$DATADIR" ]; then
  die "datadir $DATADIR is not writable by uid $(id -u): give a datadir this user owns"
fi

if [ ! -d "$DATADIR/mysql" ]; then
  mariadb_env ROOT_PASSWORD
  mariadb_env ALLOW_EMPTY_ROOT_PASSWORD
  mariadb_env RANDOM_ROOT_PASSWORD
  mariadb_env ROOT_HOST
  mariadb_env DATABASE
  mariadb_env USER
  mariadb_env PASSWORD
  MARIADB_ROOT_HOST=${MARIADB_ROOT_HOST:-%}
  if [ -z "$MARIADB_ROOT_PASSWORD" ] && [ -z "$MARIADB_ALLOW_EMPTY_ROOT_PASSWORD" ] \
      && [ -z "$MARIADB_RANDOM_ROOT_PASSWORD" ]; then
    die "the database is uninitialized and no password option is given: you need to" \
        "specify one of MARIADB_ROOT_PASSWORD, MARIADB_ALLOW_EMPTY_ROOT_PASSWORD and" \
        "MARIADB_RANDOM_ROOT_PASSWORD (or their MYSQL_ names)"
  fi
  if [ -n "$MARIADB_RANDOM_ROOT_PASSWORD" ]; then
    MARIADB_ROOT_PASSWORD=$(tr -dc '[:alnum:]' </dev/urandom | head -c 32)
    log "GENERATED ROOT PASSWORD: $MARIADB_ROOT_PASSWORD"
  fi
  if [ "$MARIADB_USER" = root ]; then
    die "MARIADB_USER=root: root is created anyway, set MARIADB_ROOT_PASSWORD instead"
  fi

  log "initialising the datadir $DATADIR"
  # the server's own options (InnoDB page and log sizes ...) apply from the start;
  # networking, the binlog and the buffer pool dump do not belong to the initialisation
  init_opts=("${@:2}" --skip-networking --skip-log-bin
             --loose-innodb-buffer-pool-load-at-startup=0
             --loose-innodb-buffer-pool-dump-at-shutdown=0)
  pw=$(sql_escape "$MARIADB_ROOT_PASSWORD")
  root_host=$(sql_escape "$MARIADB_ROOT_HOST")
  if [ "$1" = mysqld ]; then
    # MySQL: --initialize-insecure creates root@localhost without a password; the
    # statements of --init-file run right after it, read from a pipe (never a file)
    sql="ALTER USER 'root'@'localhost' IDENTIFIED BY '$pw';"
    if [ "$MARIADB_ROOT_HOST" != localhost ]; then
      sql+="
CREATE USER 'root'@'$root_host' IDENTIFIED BY '$pw';
GRANT ALL ON *.* TO 'root'@'$root_host' WITH GRANT OPTION;
GRANT PROXY ON ''@'' TO 'root'@'$root_host' WITH GRANT OPTION;"
    fi
  else
    if ! out=$(mariadb-install-db --datadir="$DATADIR" "${user_args[@]}" \
          --auth-root-authentication-method=normal --skip-test-db \
          --skip-name-resolve --cross-bootstrap "${init_opts[@]}" --expire-logs-days=0 2>&1)
    then
      # the server's messages, without the advice install-db adds after them
      printf '%s\n' "$out" | sed '/^Installation of system tables failed/,$d' >&2
      die "initialising the datadir failed (mariadb-install-db; the server's messages above)"
    fi
    sql="FLUSH PRIVILEGES;
DELETE FROM mysql.global_priv WHERE User = '' OR (User = 'root' AND Host <> 'localhost');
FLUSH PRIVILEGES;
ALTER USER 'root'@'localhost' IDENTIFIED BY '$pw';"
    if [ "$MARIADB_ROOT_HOST" != localhost ]; then
      sql+="
CREATE USER 'root'@'$root_host' IDENTIFIED BY '$pw';
GRANT ALL ON *.* TO 'root'@'$root_host' WITH GRANT OPTION;
REPLACE INTO mysql.proxies_priv VALUES ('$root_host', 'root', '', '', 1, '', NOW());"
    fi
  fi
  if [ -n "$MARIADB_DATABASE" ]; then
    sql+="
CREATE DATABASE IF NOT EXISTS \`$(sql_ident "$MARIADB_DATABASE")\`;"
  fi
  if [ -n "$MARIADB_USER" ]; then
    user=$(sql_escape "$MARIADB_USER")
    sql+="
CREATE USER '$user'@'%' IDENTIFIED BY '$(sql_escape "$MARIADB_PASSWORD")';"
    if [ -n "$MARIADB_DATABASE" ]; then
      sql+="
GRANT ALL ON \`$(sql_ident "$MARIADB_DATABASE")\`.* TO '$user'@'%';"
    fi
  fi
  sql+="
FLUSH PRIVILEGES;"
  if [ "$1" = mysqld ]; then
    # as root it stays root for this one step (then the files are chowned below): a
    # server that switched to the mysql user may no longer open its own /dev/fd/N
    init_user=()
    [ "$(id -u)" = 0 ] && init_user=(--user=root)
    if ! out=$("$@" "${init_user[@]}" --initialize-insecure "${init_opts[@]}" \
          --init-file=<(printf '%s\n' "$sql") 2>&1); then
      printf '%s\n' "$out" >&2
      die "initialising the datadir failed (mysqld --initialize-insecure; its messages above)"
    fi
  # one statement a line: --bootstrap reads up to each ";" at the end of a line
  elif ! out=$(printf '%s\n' "$sql" | "$@" "${user_args[@]}" --bootstrap "${init_opts[@]}" \
          --expire-logs-days=0 2>&1); then
    printf '%s\n' "$out" >&2
    die "setting up the root account failed"
  fi
  if [ "$(id -u)" = 0 ]; then  # the initialisation leaves a file or two to root
    find "$DATADIR" \! -user mysql -exec chown mysql:mysql '{}' +
  fi
  unset pw sql MARIADB_ROOT_PASSWORD MYSQL_ROOT_PASSWORD MARIADB_PASSWORD MYSQL_PASSWORD
  log "datadir initialised; starting the server"
fi

exec "$@" "${user_args[@]}"
