#!/usr/bin/env bash
# Builds a bare git repository guarded by fence's hooks, seeded with one commit on main.
#
#   test-repos/make-hooked-repo.sh DIR [STORE_URL]
#
# DIR must not exist yet. STORE_URL is written into DIR/fence.conf; without it the hook has no store
# and refuses pushes to fenced refs until DIR/fence.conf names one (it never takes a store from the
# pusher's environment).
# The repo id (what resource names are built from) is DIR's name without ".git".
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 DIR [STORE_URL]" >&2
  exit 2
fi
dir=$1
store=${2:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fence="$here/../bin/fence"

if [ -e "$dir" ]; then
  echo "$0: $dir already exists" >&2
  exit 2
fi

git init --bare -q --initial-branch=main "$dir"

# Seed main before the hooks exist, so the first commit is not a tokenless push the hook would record.
seed=$(mktemp -d)
trap 'rm -rf "$seed"' EXIT
git clone -q "$dir" "$seed/clone" 2>/dev/null
(
  cd "$seed/clone"
  git checkout -q -b main
  git -c user.name=seed -c user.email=seed@example.invalid commit -q --allow-empty -m "initial commit"
  git push -q origin main
)

args=(install --bare "$(cd "$dir" && pwd)")
if [ -n "$store" ]; then
  args+=(--store "$store")
fi
"$fence" "${args[@]}"
