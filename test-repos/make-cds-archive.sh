#!/usr/bin/env bash
# Makes the class-data archive that bin/fence starts the JVM with, trained on the pre-receive hook's
# real path over a throw-away repository (bin/fence --build-archive, for the java and jar picked here):
#
#   test-repos/make-cds-archive.sh
#
# It picks java and fence.jar the way bin/fence does (FENCE_JAVA, JAVA_HOME, PATH; FENCE_JAR,
# bin/fence.jar, lib/fence.jar, target/fence.jar) and writes, next to the jar,
#   fence-<JDK version>.jsa  on JDK 17 to 24 (a static AppCDS archive), or
#   fence-<JDK version>.aot  on JDK 25 and later (an AOT cache),
# and the leaner fence-<JDK version>-sqlite and -redis ones that hooks installed for one store use.
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

# The launcher's own training run (dev.fence.hookpath.ArchiveTraining): the hook's real path, in a throw-away
# repository set up as 'fence install' does, on SQLite and on Redis (FENCE_WARMUP_REDIS, else a private
# redis-server when one is on PATH); then once per store.
for store in "" sqlite redis; do
  FENCE_JAVA=$java FENCE_JAR=$jar "$fence" --build-archive $store
done
