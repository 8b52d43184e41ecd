#!/usr/bin/env bash
# Clones a (hooked) bare repository as one agent's working copy.
#
#   test-repos/make-agent-clone.sh BARE DIR NAME
#
# Commits in DIR are authored by NAME. On a plain git remote reached through the file system the hook
# runs in the pusher's environment, so push with REMOTE_USER=NAME to be seen as NAME by the hook
# (and matched by agent-pushers patterns). That is a demo convenience, not an identity: a local-path
# remote has no trust boundary (see the top-level README's "Trust model").
set -euo pipefail

if [ $# -ne 3 ]; then
  echo "usage: $0 BARE DIR NAME" >&2
  exit 2
fi
bare=$1
dir=$2
name=$3

git clone -q "$bare" "$dir"
git -C "$dir" config user.name "$name"
git -C "$dir" config user.email "$name@agents.invalid"
echo "cloned $bare into $dir as $name; push with: REMOTE_USER=$name git -C $dir push ..."
