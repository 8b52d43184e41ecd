#!/usr/bin/env bash
# Makes the class-data archive that bin/fence starts the JVM with, trained on one run of the
# pre-receive hook over a throw-away hooked repository:
#
#   test-repos/make-cds-archive.sh
#
# It picks java and fence.jar the way bin/fence does (FENCE_JAVA, JAVA_HOME, PATH; FENCE_JAR,
# bin/fence.jar, lib/fence.jar, target/fence.jar) and writes, next to the jar,
#   fence-<JDK version>.jsa  on JDK 17 to 24 (a dynamic CDS archive), or
#   fence-<JDK version>.aot  on JDK 25 and later (an AOT cache).
# The archive only fits the exact JDK it was made with; bin/fence ignores it under any other. Rerun
# after every rebuild of fence.jar or JDK update.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
fence="$root/bin/fence"

java=${FENCE_JAVA:-}
if [ -z "$java" ]; then
  if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then java=$JAVA_HOME/bin/java
  else java=$(command -v java); fi
fi
jar=${FENCE_JAR:-}
if [ -z "$jar" ]; then
  for candidate in "$root/bin/fence.jar" "$root/lib/fence.jar" "$root/target/fence.jar"; do
    if [ -f "$candidate" ]; then jar=$candidate; break; fi
  done
fi
if [ -z "$jar" ]; then
  "$fence" --version >/dev/null # builds target/fence.jar
  jar="$root/target/fence.jar"
fi

jdk_home=$(dirname "$(dirname "$(readlink -f "$java")")")
jdk_version=$(sed -n 's/^JAVA_VERSION="\(.*\)"/\1/p' "$jdk_home/release")
jdk_major=${jdk_version%%.*}
base="${jar%.jar}-$jdk_version"
rm -f "$base.jsa" "$base.aot"
if [ "$jdk_major" -ge 25 ]; then
  archive="$base.aot"
  flag="-XX:AOTCacheOutput=$archive"
else
  archive="$base.jsa"
  flag="-XX:ArchiveClassesAtExit=$archive"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
FENCE_JAVA=$java FENCE_JAR=$jar "$here/make-hooked-repo.sh" "$work/app.git" "sqlite:$work/fence.db" >/dev/null
tip=$(git -C "$work/app.git" rev-parse refs/heads/main)
zero=$(printf '%040d' 0)
# A tokenless branch creation: the hook reads its configuration, opens the store, judges and records.
if ! printf '%s %s refs/heads/training\n' "$zero" "$tip" |
  GIT_DIR="$work/app.git" FENCE_PUSHER=trainer FENCE_JAVA="$java" FENCE_JAR="$jar" FENCE_JAVA_OPTS="$flag" \
    "$fence" hook pre-receive >"$work/training.log" 2>&1; then
  cat "$work/training.log" >&2
  echo "$0: the training run failed" >&2
  exit 1
fi
if [ ! -f "$archive" ]; then
  cat "$work/training.log" >&2
  echo "$0: the JVM wrote no archive" >&2
  exit 1
fi
echo "wrote $archive (for $java, JDK $jdk_version)"
