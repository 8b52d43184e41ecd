#!/usr/bin/env bash
# Replays the paused-agent incident against a real hooked bare repository, with plain git pushes that
# carry the fence options by hand (what 'fence push' does for an agent), and checks that the fence held.
#
#   test-repos/replay-incident.sh [WORKDIR]
#
# WORKDIR (default: a new temporary directory) must not exist yet. The store is WORKDIR/fence.db
# unless FENCE_STORE names another one. Exits 0 when agent-a's late push was FENCED and agent-b's
# commit is still the tip of main; 1 otherwise.
#
# The story: agent-a leases main with a short TTL, commits, and stalls past the TTL (a rate-limit
# back-off, a slow test run, a context compaction). agent-b leases main, commits and pushes. agent-a
# wakes up and force-pushes with its old token: FENCED. It then drops the token: still refused.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fence="$here/../bin/fence"
work=${1:-$(mktemp -d)/incident}
if [ -e "$work" ]; then
  echo "$0: $work already exists" >&2
  exit 2
fi
mkdir -p "$work"
export FENCE_STORE=${FENCE_STORE:-sqlite:$work/fence.db}

# The first field of that name in one line of JSON (fence prints the grant's own fields first).
json_number() { grep -o "\"$1\":[0-9]*" | head -n 1 | cut -d: -f2; }
json_string() { grep -o "\"$1\":\"[^\"]*\"" | head -n 1 | cut -d'"' -f4; }
say() { printf '\n== %s\n' "$*"; }

say "a hooked bare repository and two agent clones in $work"
"$here/make-hooked-repo.sh" "$work/app.git" "$FENCE_STORE" >/dev/null
# Pushers named agent-* always need a token: dropping it is no way around the fence.
echo "agent-pushers = agent-*" >> "$work/app.git/fence.conf"
"$here/make-agent-clone.sh" "$work/app.git" "$work/agent-a" agent-a >/dev/null
"$here/make-agent-clone.sh" "$work/app.git" "$work/agent-b" agent-b >/dev/null

say "agent-a leases main for 2s and writes its migration"
grant_a=$("$fence" lease acquire --repo app --ref main --holder agent-a --ttl 2s --json)
token_a=$(json_number token <<<"$grant_a")
proof_a=$(json_string proof <<<"$grant_a")
echo "agent-a holds token $token_a"
echo "-- 0042 (agent-a's version)" > "$work/agent-a/0042_add_invoice_currency.sql"
git -C "$work/agent-a" add 0042_add_invoice_currency.sql
git -C "$work/agent-a" commit -q -m "0042: add invoice currency (agent-a)"

say "agent-a stalls; its lease lapses"
sleep 3

say "agent-b leases main, writes and pushes"
grant_b=$("$fence" lease acquire --repo app --ref main --holder agent-b --ttl 5m --json)
token_b=$(json_number token <<<"$grant_b")
proof_b=$(json_string proof <<<"$grant_b")
echo "agent-b holds token $token_b"
echo "-- 0042 (agent-b's version)" > "$work/agent-b/0042_add_invoice_currency.sql"
git -C "$work/agent-b" add 0042_add_invoice_currency.sql
git -C "$work/agent-b" commit -q -m "0042: add invoice currency (agent-b)"
REMOTE_USER=agent-b git -C "$work/agent-b" push -q -o "fence=$token_b" -o "fence-proof=$proof_b" origin main
tip_b=$(git -C "$work/agent-b" rev-parse HEAD)

say "agent-a wakes up and force-pushes with its old token"
status=0
if REMOTE_USER=agent-a git -C "$work/agent-a" push --force -o "fence=$token_a" -o "fence-proof=$proof_a" origin main; then
  echo "FAIL: agent-a's stale push was accepted" >&2
  status=1
fi

say "agent-a drops the token and tries again"
if REMOTE_USER=agent-a git -C "$work/agent-a" push --force origin main; then
  echo "FAIL: agent-a's tokenless force-push was accepted" >&2
  status=1
fi

say "what the ledger saw"
"$fence" audit timeline --repo app --ref main

tip=$(git -C "$work/app.git" rev-parse refs/heads/main)
if [ "$tip" != "$tip_b" ]; then
  echo "FAIL: main is $tip, not agent-b's $tip_b" >&2
  status=1
fi
if [ "$status" -eq 0 ]; then
  say "the fence held: main is still agent-b's commit ${tip_b:0:12}"
fi
exit "$status"
