#!/bin/bash
# Builds the container images from the distribution tarball, locally and without any image registry:
#   im-base:bookworm-jre17      Debian bookworm minbase + openjdk-17-jre-headless (debootstrap from the apt mirror)
#   im-pipeline:VERSION         the app (bin/im run), non-root, state volume /var/lib/im, HEALTHCHECK on /health
#   im-kafka:KAFKA_VERSION      the Kafka broker (KRaft) from the project's own Kafka jars
#   im-apicurio:APICURIO_VERSION  Apicurio Registry from the bundle the build fetches
# Idempotent: an image whose inputs did not change (label dev.impipe.input) is kept. Starts Docker if it is absent
# (root: installs docker.io and runs dockerd). Usage:
#   deploy/images/build.sh [--base IMAGE] [--tarball FILE] [--force] [--base-only] [--print-tags]
#   --base IMAGE   build FROM your own image (needs java 17+ and bash, plus useradd/groupadd); skips im-base
#   --tarball FILE the distribution (default deploy/target/im-pipeline-*.tar.gz; run ./mvnw package first)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BASE=""
TARBALL=""
FORCE=0
PRINT=0
BASE_ONLY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --base) BASE="$2"; shift 2 ;;
    --tarball) TARBALL="$2"; shift 2 ;;
    --force) FORCE=1; shift ;;
    --print-tags) PRINT=1; shift ;;
    --base-only) BASE_ONLY=1; shift ;;
    -h|--help) sed -n '2,13p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "build.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
log() { echo "[images] $*" >&2; }

prop() { sed -n "s:.*<$1>\(.*\)</$1>.*:\1:p" "$ROOT/pom.xml" | head -1; }
VERSION="$(sed -n 's:^  <version>\(.*\)</version>:\1:p' "$ROOT/pom.xml" | head -1)"
KAFKA_VERSION="$(prop kafka.version)"
APICURIO_VERSION="$(prop apicurio.version)"
APP_TAG="im-pipeline:$VERSION"
KAFKA_TAG="im-kafka:$KAFKA_VERSION"
APICURIO_TAG="im-apicurio:$APICURIO_VERSION"
DEFAULT_BASE="im-base:bookworm-jre17"
if [ "$PRINT" = 1 ]; then printf '%s\n' "$APP_TAG" "$KAFKA_TAG" "$APICURIO_TAG" "$DEFAULT_BASE"; exit 0; fi

ensure_docker() {
  if docker info >/dev/null 2>&1; then return; fi
  if ! command -v dockerd >/dev/null 2>&1; then
    [ "$(id -u)" = 0 ] || { echo "build.sh: Docker is not running and installing it needs root" >&2; exit 1; }
    log "installing docker.io (apt-get)"
    apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker.io >/dev/null
  fi
  if ! docker info >/dev/null 2>&1; then
    [ "$(id -u)" = 0 ] || { echo "build.sh: dockerd is not running and starting it needs root" >&2; exit 1; }
    log "starting dockerd (log /var/log/im-dockerd.log)"
    # Published ports bind to loopback unless a run names another address.
    nohup dockerd --storage-driver=overlay2 --ip=127.0.0.1 >/var/log/im-dockerd.log 2>&1 &
    echo $! > /var/run/im-dockerd.pid
    for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
    docker info >/dev/null 2>&1 || { echo "build.sh: dockerd did not come up (see /var/log/im-dockerd.log)" >&2; exit 1; }
  fi
}

# The configured Debian mirror (deb822 .sources or one-line sources.list).
debian_mirror() {
  local m
  m=$(grep -h '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' | grep -v security | head -1 || true)
  [ -n "$m" ] || m=$(grep -h '^deb ' /etc/apt/sources.list 2>/dev/null | awk '{print $2}' | grep -v security | head -1 || true)
  echo "${m:-http://deb.debian.org/debian}"
}

label() { docker image inspect --format "{{ index .Config.Labels \"dev.impipe.input\" }}" "$1" 2>/dev/null || true; }

build_base() {
  if [ "$FORCE" = 0 ] && docker image inspect "$DEFAULT_BASE" >/dev/null 2>&1; then log "$DEFAULT_BASE exists"; return; fi
  command -v debootstrap >/dev/null 2>&1 || {
    [ "$(id -u)" = 0 ] || { echo "build.sh: debootstrap missing" >&2; exit 1; }
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null; }
  local dir mirror
  dir="$(mktemp -d /tmp/im-base-rootfs.XXXXXX)"
  mirror="$(debian_mirror)"
  log "debootstrap bookworm minbase + openjdk-17-jre-headless from $mirror"
  debootstrap --variant=minbase --include=openjdk-17-jre-headless bookworm "$dir" "$mirror" >"$dir.log" 2>&1 \
    || { tail -20 "$dir.log" >&2; exit 1; }
  # Smaller image: no apt lists, caches, docs or man pages.
  rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/* "$dir"/usr/share/doc/* "$dir"/usr/share/man/*
  tar -C "$dir" -c . | docker import \
    -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8' \
    -c 'CMD ["bash"]' - "$DEFAULT_BASE" >/dev/null
  rm -rf "$dir" "$dir.log"
  log "built $DEFAULT_BASE"
}

ensure_docker
if [ -z "$BASE" ]; then build_base; BASE="$DEFAULT_BASE"; fi
if [ "$BASE_ONLY" = 1 ]; then exit 0; fi
if [ -z "$TARBALL" ]; then TARBALL="$(ls "$ROOT"/deploy/target/im-pipeline-"$VERSION".tar.gz 2>/dev/null || true)"; fi
[ -f "$TARBALL" ] || { echo "build.sh: no tarball; run ./mvnw -B package -DskipTests first (or pass --tarball)" >&2; exit 1; }

BASE_ID="$(docker image inspect --format '{{.Id}}' "$BASE")"
CTX="$(mktemp -d /tmp/im-images.XXXXXX)"
trap 'rm -rf "$CTX"' EXIT
tar -xzf "$TARBALL" -C "$CTX"
mv "$CTX"/im-pipeline-* "$CTX/im-pipeline"
cp "$HERE"/*.sh "$CTX/"
# What the tarball holds, independent of build timestamps: every jar entry's name and CRC, and the scripts.
content_sum() {
  (cd "$CTX/im-pipeline/$1" && for f in $(find . -type f | sort); do
     case "$f" in *.jar) echo "$f"; unzip -v "$f" | awk 'NR>3 && $7 ~ /^[0-9a-f]+$/ {print $7, $8}' ;; *) sha256sum "$f" ;; esac
   done) | sha256sum | cut -c1-16
}
LIB_SUM="$(cd "$CTX/im-pipeline" && { content_sum lib; sha256sum bin/im; } | sha256sum | cut -c1-16)"
build_one() { # tag dockerfile content-of-inputs
  local tag="$1" file="$2" input
  input="$(cat "$HERE/$file" "$HERE"/*.sh | sha256sum | cut -c1-16)-$BASE_ID-$3"
  if [ "$FORCE" = 0 ] && [ "$(label "$tag")" = "$input" ]; then log "$tag is up to date"; return; fi
  log "building $tag FROM $BASE"
  docker build -q -f "$HERE/$file" --build-arg "BASE=$BASE" --label "dev.impipe.input=$input" -t "$tag" "$CTX" >/dev/null
  log "built $tag"
}
build_one "$APP_TAG" app.Dockerfile "$LIB_SUM"
build_one "$KAFKA_TAG" kafka.Dockerfile "$LIB_SUM"
build_one "$APICURIO_TAG" apicurio.Dockerfile "$APICURIO_VERSION"
docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E '^im-' >&2
