#!/bin/bash
# The reference hook of 'fence bench': what a hand-written bash + redis-cli pre-receive hook costs when it
# does the same token check as fence's (Kleppmann's storage rule: a push's token must be at least the
# highest token accepted on the ref), and nothing else. Not a fence hook: no proofs, no leases, no
# ledger, no FENCED message. It is the yardstick the design's budget names.
#
# Reads the ref updates on stdin and the push options from GIT_PUSH_OPTION_*; then one redis-cli EVAL
# checks every ref's highest token and raises it, atomically. Settings: FENCE_BENCH_REDIS_PORT (default
# 6379), FENCE_BENCH_REDIS_HOST (default 127.0.0.1), FENCE_BENCH_KEY_PREFIX (default bench:highest).
set -u

token=""
i=0
while [ "$i" -lt "${GIT_PUSH_OPTION_COUNT:-0}" ]; do
  v="GIT_PUSH_OPTION_$i"
  case "${!v}" in fence=*) token=${!v#fence=} ;; esac
  i=$((i + 1))
done
case "$token" in '' | *[!0-9]*)
  echo "REJECTED: push with -o fence=<token>" >&2
  exit 1 ;;
esac

keys=()
while read -r old new ref; do
  keys+=("${FENCE_BENCH_KEY_PREFIX:-bench:highest}:{$ref}")
done
[ "${#keys[@]}" -gt 0 ] || exit 0

# Every key: refuse if the token is below its highest; else raise them all. One round trip.
script='for i = 1, #KEYS do
  local h = tonumber(redis.call("GET", KEYS[i]) or "0")
  if tonumber(ARGV[1]) < h then return "stale " .. KEYS[i] .. " " .. h end
end
for i = 1, #KEYS do redis.call("SET", KEYS[i], ARGV[1]) end
return "ok"'
answer=$(redis-cli -h "${FENCE_BENCH_REDIS_HOST:-127.0.0.1}" -p "${FENCE_BENCH_REDIS_PORT:-6379}" \
  EVAL "$script" "${#keys[@]}" "${keys[@]}" "$token" 2>&1)
if [ "$answer" = ok ]; then
  exit 0
fi
echo "REJECTED: token $token: $answer" >&2
exit 1
