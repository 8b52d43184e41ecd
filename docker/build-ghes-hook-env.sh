#!/usr/bin/env bash
# Builds the GHES pre-receive hook environment tarball for fence (needs Docker; the image is
# linux/amd64).
#
#   docker/build-ghes-hook-env.sh FENCE_CONF [OUTPUT]
#
# FENCE_CONF is the hook configuration to bake in (at least "store = URL"; see
# gitlab-config/fence.conf.example). OUTPUT defaults to fence-hook-env.tar.gz. fence.jar comes from
# target/fence.jar, built first when missing. Upload the result with
#   ghe-hook-env-create fence /home/admin/fence-hook-env.tar.gz
# or by URL under Enterprise > Settings > Hooks > Manage environments.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 FENCE_CONF [OUTPUT]" >&2
  exit 2
fi
conf=$1
out=${2:-fence-hook-env.tar.gz}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

if [ ! -f "$conf" ]; then
  echo "$0: $conf: no such file" >&2
  exit 2
fi
if ! grep -Eq '^[[:space:]]*(store|server)[[:space:]]*=' "$conf"; then
  echo "$0: $conf sets neither store nor server: the hook would have nothing to ask" >&2
  exit 2
fi
if [ ! -f "$root/target/fence.jar" ]; then
  (cd "$root" && mvn -B -q -DskipTests package)
fi

context=$(mktemp -d)
name="fence-ghes-hook-env-$$"
trap 'rm -rf "$context"; docker rm -f "$name" >/dev/null 2>&1 || true' EXIT
cp "$root/target/fence.jar" "$context/fence.jar"
cp "$conf" "$context/fence.conf"
cp "$root/docker/Dockerfile.ghes-hook-env" "$context/Dockerfile"

docker build --platform linux/amd64 -t fence-ghes-hook-env "$context"
docker create --name "$name" fence-ghes-hook-env /bin/true >/dev/null
docker export "$name" | gzip > "$out"
echo "wrote $out: upload it as a pre-receive hook environment, then add the hook script from 'fence install --ghes'"
