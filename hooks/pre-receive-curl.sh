#!/bin/bash
# installed by fence
# fence curl shim: asks 'fence serve' whether to accept a push, and says what it says.
#
# For git hosts whose hook environment has no Java or no store access (GHES's default environment has
# bash and curl): needs bash, curl and coreutils only, plus git to answer ancestry questions. Installed
# as a pre-receive hook (or as post-receive, to record landed pushes: the mode follows the file name,
# or FENCE_SHIM_HOOK=pre-receive|post-receive).
#
# Settings, from the environment, else from fence-shim.conf beside this script (KEY=VALUE lines):
#   FENCE_SERVER          URL of fence serve, e.g. https://fence.internal:8700          (required)
#   FENCE_CREDENTIAL      <name>:<secret> of a credential with the hook role             (required)
#   FENCE_SHIM_BUDGET     seconds for all requests of one push (default 3; GHES gives all hooks 5 s)
#   FENCE_ON_SERVER_DOWN  reject (default) or accept: what to do with a push when the server cannot be
#                         reached, times out or fails (5xx). A push carrying fence= is always refused.
#   FENCE_REPO_ID         plain git only: the repo id (default: fence.repoId, else the directory name)
#   FENCE_SHIM_TRANSPORT  auto (default) or curl. auto: a server on this host (http://127.x.x.x or
#                         http://localhost) is asked through bash's own /dev/tcp, which saves starting curl on
#                         every push; anything else (https://, another host, a push of 16 refs or more, a
#                         bash without /dev/tcp) goes through curl, which speaks TLS. Either way the budget holds:
#                         past it the push is treated as one whose server is down.
#
# The credential goes to curl through its config on standard input, not its command line, so other
# users cannot read it in the process list; through /dev/tcp it never leaves bash. Exit 0 accepts the
# push, 1 refuses it.
#
# Only fence serve's verdict accepts a push: each request carries a fresh random nonce, and the answer must
# be status 200 with the first line exactly "fence-verdict/1 nonce=<that nonce> exit=0". Anything else
# that answers (a proxy, a captive or login page, another service, a reply cut short or meant for another
# request) refuses the push with reason=bad-server-reply, whatever FENCE_ON_SERVER_DOWN says.
#
# Every push pays for each process this script starts, so its usual path starts one or two: git (one
# ancestry answer, a short walk) and, unless the server is on this host, curl. The rest is bash builtins.
set -u

# The push is read and the first ancestry walk started before anything else: git then runs while this
# script reads its settings, checks them and builds its request. The mode follows the file name unless
# FENCE_SHIM_HOOK says otherwise; set in fence-shim.conf, it is known only later, and until then decides
# nothing but whether the walk starts early (an answer is walked for when needed either way).
by_name=pre-receive
case "${0##*/}" in *post-receive*) by_name=post-receive ;; esac

# The push's standard input, kept for every round. A push of up to 16 ref updates is read by bash itself
# and sent on curl's command line (ref names and ids are no secret); a larger one goes to a private
# temporary file that curl reads.
input=""
lines=0
while [ "$lines" -lt 16 ]; do
  IFS= read -r line || { input+=$line; break; }
  input+=$line$'\n'
  lines=$((lines + 1))
done
tmp=""
if [ "$lines" -ge 16 ]; then
  tmp=$(umask 077 && mktemp "${TMPDIR:-/tmp}/fence-shim.XXXXXX" 2>/dev/null) || tmp=""
  if [ -n "$tmp" ]; then
    trap 'rm -f "$tmp"' EXIT
    { printf '%s' "$input"; cat; } > "$tmp"
  else
    rest=$(cat; printf x)
    input+=${rest%x}
  fi
fi

is_id() { [[ (${#1} -eq 40 || ${#1} -eq 64) && "$1" != *[!0-9a-f]* ]]; }

# The first update's ancestry walk (see answer) starts now, in the background, so that git runs while
# this script gathers the rest of the request.
walk_for=""
if [ "${FENCE_SHIM_HOOK:-$by_name}" = pre-receive ]; then
  first=${input%%$'\n'*}
  first_old=${first%% *}
  first_new=${first#* }
  first_new=${first_new%% *}
  if is_id "$first_old" && is_id "$first_new" && [[ "$first_old$first_new" != *0000000000000000000000000000000000000000* ]]; then
    # A process substitution, not a coproc: its pipe stays open after git exits, a coproc's may not.
    exec {walk_fd}< <(exec git rev-list --first-parent --max-count=16 "$first_new" 2>/dev/null)
    walk_for="$first_old $first_new"
  fi
fi

shim_dir=${BASH_SOURCE[0]%/*}
[ "$shim_dir" = "${BASH_SOURCE[0]}" ] && shim_dir=.
case "$shim_dir" in /*) ;; *) shim_dir=$PWD/$shim_dir ;; esac
conf="$shim_dir/fence-shim.conf"
if [ -r "$conf" ]; then
  while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in '' | '#'*) continue ;; esac
    key=${line%%=*}
    value=${line#*=}
    key=${key//[[:space:]]/}
    value=${value#"${value%%[![:space:]]*}"}
    value=${value%"${value##*[![:space:]]}"}
    case "$key" in
      FENCE_SERVER | FENCE_CREDENTIAL | FENCE_SHIM_BUDGET | FENCE_ON_SERVER_DOWN | FENCE_REPO_ID | FENCE_SHIM_HOOK | FENCE_SHIM_TRANSPORT)
        if [ -z "${!key:-}" ]; then printf -v "$key" '%s' "$value"; fi ;;
    esac
  done < "$conf"
fi

prefix=""
if [ -n "${GL_ID:-}${GL_REPOSITORY:-}" ]; then prefix="GL-HOOK-ERR: "; fi
say() { printf '%s%s\n' "$prefix" "$1" >&2; }

hook=${FENCE_SHIM_HOOK:-$by_name}

# True when the push carries a fence token (or its push options cannot be read): such a push fails closed.
carries_token() {
  local n=${GIT_PUSH_OPTION_COUNT:-0} i=0 v
  case "$n" in '' | *[!0-9]*) return 0 ;; esac
  while [ "$i" -lt "$n" ]; do
    v="GIT_PUSH_OPTION_$i"
    case "${!v:-}" in fence=* | fence-proof=*) return 0 ;; esac
    i=$((i + 1))
  done
  return 1
}

refuse() {
  say "REJECTED resource=- ref=- token=- current=0 reason=${2:-store-down}"
  say "fence: $1"
  exit 1
}

# The server cannot be asked: fail closed, or accept tokenless pushes when so configured.
server_down() {
  if [ "$hook" = post-receive ]; then
    say "warning: fence could not record the landed push: $1"
    exit 0
  fi
  if carries_token; then
    refuse "the fence server is unavailable ($1); pushes carrying a fence token are refused until it is back. This is an infrastructure problem, not a conflict: report it to the operator."
  fi
  if [ "${FENCE_ON_SERVER_DOWN:-reject}" = accept ]; then
    say "warning: fence server unavailable ($1); push accepted without a fence check (FENCE_ON_SERVER_DOWN=accept)"
    exit 0
  fi
  refuse "the fence server is unavailable ($1); fenced pushes are refused until it is back. This is an infrastructure problem, not a conflict: report it to the operator."
}

# An answer that is not fence serve's verdict for this request: never a reason to let a push through, and
# no sign that the server is down either (something else answered in its place).
bad_reply() {
  if [ "$hook" = post-receive ]; then
    say "warning: fence could not record the landed push: the reply from $FENCE_SERVER is not a fence verdict ($1)"
    exit 0
  fi
  refuse "the reply from $FENCE_SERVER is not a fence verdict ($1), so the push is refused. FENCE_SERVER must point at fence serve itself (not a proxy, a login page or another service), of a version that answers fence-verdict/1. This is an infrastructure problem, not a conflict: report it to the operator." bad-server-reply
}

# A configuration problem: never a reason to let a push through.
misconfigured() {
  if [ "$hook" = post-receive ]; then
    say "warning: fence could not record the landed push: $1"
    exit 0
  fi
  refuse "$1" bad-config
}

[ -n "${FENCE_SERVER:-}" ] || misconfigured "FENCE_SERVER is not set (environment or $conf)"
case "$FENCE_SERVER" in http://* | https://*) ;; *) misconfigured "FENCE_SERVER must be an http:// or https:// URL" ;; esac
[ -n "${FENCE_CREDENTIAL:-}" ] || misconfigured "FENCE_CREDENTIAL is not set (environment or $conf)"
# Patterns here are globs, not [[ =~ ]]: bash compiles a regular expression each time it meets one.
cred_name=${FENCE_CREDENTIAL%%:*}
cred_secret=${FENCE_CREDENTIAL#*:}
case "$cred_name:$cred_secret" in
  "$FENCE_CREDENTIAL") ;;
  *) misconfigured "FENCE_CREDENTIAL is not <name>:<secret>" ;;
esac
[[ -n "$cred_name" && "$cred_name" != *[!A-Za-z0-9._-]* && -n "$cred_secret" && "$cred_secret" != *[!A-Za-z0-9_-]* ]] \
  || misconfigured "FENCE_CREDENTIAL is not <name>:<secret>"
case "${FENCE_SHIM_TRANSPORT:-auto}" in auto | curl) ;; *) misconfigured "FENCE_SHIM_TRANSPORT must be auto or curl" ;; esac
budget=${FENCE_SHIM_BUDGET:-3}
case "$budget" in
  [0-9] | [0-9][0-9] | [0-9][0-9][0-9] | [0-9].[0-9] | [0-9].[0-9][0-9] | [0-9].[0-9][0-9][0-9] | \
    [0-9][0-9].[0-9] | [0-9][0-9].[0-9][0-9] | [0-9][0-9].[0-9][0-9][0-9] | \
    [0-9][0-9][0-9].[0-9] | [0-9][0-9][0-9].[0-9][0-9] | [0-9][0-9][0-9].[0-9][0-9][0-9]) ;;
  *) misconfigured "FENCE_SHIM_BUDGET must be seconds, e.g. 3 or 2.5" ;;
esac
case "$budget" in
  *.*) whole=${budget%%.*} frac=${budget#*.}000 ;;
  *) whole=$budget frac=000 ;;
esac
budget_ms=$((10#$whole * 1000 + 10#${frac:0:3}))
# Milliseconds since the epoch into now, without starting date where bash has EPOCHREALTIME (5.0+).
now_ms() {
  if [ -n "${EPOCHREALTIME:-}" ]; then
    local t=${EPOCHREALTIME/[.,]/}
    now=$((10#${t:0:${#t}-3}))
  else
    now=$(date +%s%3N)
  fi
}
now_ms
start_ms=$now

# A push to a symbolic ref updates its target, and fence serve cannot see this repository's refs: such a
# push is refused here when it leads anywhere (the Java hook refuses it when it leads into fenced refs,
# with the same lines), unless the same push updates the target with the same ids (git then skips it).
# Loose files "ref: <target>", read with builtins; a reftable repository is asked through git.
# GIT_NAMESPACE is not applied here.
sym_safe() {
  case "$1" in
    refs/*) [[ "$1" != *..* && "$1" != *//* && "$1" != */ && "$1" != *.lock && "$1" != */.* && "$1" != *[[:cntrl:]\\\ ~^:?*[]* ]] ;;
    *) [[ -n "$1" && "$1" != *[!A-Z_]* ]] ;;
  esac
}
sym_target() {
  local f first
  sym_safe "$1" || return 1
  if [ -d "${GIT_DIR:-.}/reftable" ]; then
    target=$(git symbolic-ref -q "$1" 2>/dev/null) || return 1
    return 0
  fi
  f=${GIT_DIR:-.}/$1
  [ -f "$f" ] || return 1
  IFS= read -r first < "$f" || [ -n "$first" ] || return 1
  case "$first" in ref:*) ;; *) return 1 ;; esac
  first=${first#ref:}
  first=${first#"${first%%[![:space:]]*}"}
  target=${first%"${first##*[![:space:]]}"}
}
if [ "$hook" = pre-receive ]; then
  sym_all=$input
  [ -n "$tmp" ] && sym_all=$(cat "$tmp")
  sym_rejected=() sym_told=()
  while IFS=' ' read -r sym_old sym_new sym_ref; do
    [ -n "$sym_ref" ] || continue
    sym_name=$sym_ref sym_chain="" sym_problem="" sym_depth=0 target=""
    while [ "$sym_depth" -lt 5 ] && sym_target "$sym_name"; do
      sym_chain+="${sym_chain:+ -> }$target"
      sym_safe "$target" || { sym_problem="its target is not a valid ref name"; break; }
      sym_name=$target
      sym_depth=$((sym_depth + 1))
    done
    [ -n "$sym_chain" ] || continue
    if [ -z "$sym_problem" ] && [ "$sym_depth" -ge 5 ]; then
      sym_problem="more than 5 levels of symbolic refs, or a loop"
    fi
    if [ -z "$sym_problem" ]; then
      case $'\n'"$sym_all"$'\n' in *$'\n'"$sym_old $sym_new $sym_name"$'\n'*) continue ;; esac
      sym_told+=("fence: $sym_ref is a symbolic ref to $sym_chain: git would update $sym_name, which fence guards under its own name. Push to $sym_name itself instead (for example: git push origin <commit>:$sym_name, with the lease options for $sym_name).")
    else
      sym_told+=("fence: $sym_ref is a symbolic ref that cannot be resolved ($sym_problem); git would refuse to update it, and fence refuses the push.")
    fi
    sym_rejected+=("REJECTED ref=$sym_ref reason=symbolic-ref")
  done <<< "$sym_all"
  if [ "${#sym_rejected[@]}" -gt 0 ]; then
    for line in "${sym_rejected[@]}" "${sym_told[@]}"; do say "$line"; done
    say "fence: the push was refused as a whole; nothing was recorded. Pushing under another name that points at the same ref is refused the same way."
    exit 1
  fi
fi

# Host identity and push options, as the hook sees them: form fields (name=value, encoded when sent).
fields=()
for name in ${!GL_@} ${!GITHUB_@} ${!GITEA_@} ${!GIT_PUSH_OPTION_@} FENCE_PUSHER REMOTE_USER USER LOGNAME; do
  # Exported variables only (as the environment hands them to the hook; not fence-shim.conf's).
  [ -n "${!name+x}" ] || continue
  case "${!name@a}" in *x*) fields+=("env=$name=${!name}") ;; esac
done
# Plain git: resources are named after the repo id: FENCE_REPO_ID (environment or fence-shim.conf), else
# measured here as the Java hook would.
if [ -n "${FENCE_REPO_ID:-}" ]; then
  fields+=("env=FENCE_REPO_ID=$FENCE_REPO_ID")
elif [ -z "${GL_ID:-}${GL_REPOSITORY:-}${GITHUB_REPO_NAME:-}${GITEA_REPO_ID:-}" ]; then
  case "${GIT_DIR:-.}" in
    .) git_dir=$PWD ;;
    /*) git_dir=$GIT_DIR ;;
    *) git_dir=$(cd "$GIT_DIR" 2>/dev/null && pwd) || git_dir="" ;;
  esac
  [ -d "$git_dir" ] || git_dir=""
  repo_id=""
  # fence.repoId as 'git config --file' reads it. The way fence install writes it (a [fence] section with
  # repoId = a plain word) is read here; git is asked only when the file says it any other way (quotes,
  # escapes, a comment after the value, a section header that is not plainly [fence]).
  ask_git=""
  if [ -n "$git_dir" ] && [ -r "$git_dir/config" ]; then
    in_fence=""
    while IFS= read -r cl || [ -n "$cl" ]; do
      cl=${cl#"${cl%%[![:space:]]*}"}
      cl=${cl%"${cl##*[![:space:]]}"}
      lc=${cl,,}
      case "$lc" in
        '' | '#'* | ';'*) continue ;;
        '[fence]') in_fence=1; continue ;;
        '['*fence*) ask_git=1; break ;;
        '['*) in_fence=""; continue ;;
      esac
      [ -n "$in_fence" ] || continue
      case "$lc" in repoid | repoid[[:space:]=]*) ;; *) continue ;; esac
      # (A key without '=' means true; git says what that makes of a repo id.)
      case "$cl" in *=*) ;; *) ask_git=1; break ;; esac
      value=${cl#*=}
      value=${value#"${value%%[![:space:]]*}"}
      case "$value" in '' | *[!A-Za-z0-9._/:@+-]*) ask_git=1; break ;; esac
      repo_id=$value
    done < "$git_dir/config"
  fi
  if [ -n "$git_dir" ]; then
    [ -n "$ask_git" ] && { repo_id=$(git config --file "$git_dir/config" --get fence.repoId 2>/dev/null) || repo_id=""; }
    if [ -z "$repo_id" ]; then
      base=${git_dir##*/}
      if [ "$base" = .git ]; then parent=${git_dir%/.git}; base=${parent##*/}; fi
      if [ "${#base}" -gt 4 ] && [ "${base%.git}" != "$base" ]; then base=${base%.git}; fi
      repo_id=$base
    fi
  fi
  [ -n "$repo_id" ] && fields+=("env=FENCE_REPO_ID=$repo_id")
fi

# Sets ans to "yes" or "no": is $1 an ancestor of (or equal to) $2? As the Java hook decides it, with git.
answer() {
  local out rc recent=""
  is_id "$1" && is_id "$2" || return 1
  # Usually $1 is one of the last few first parents of $2 (the old tip of a push of a few commits): a
  # short walk says yes in about a third of the time merge-base takes; anything else goes to merge-base.
  # (A walk that failed printed nothing, and so answers nothing here either.)
  if [ "$walk_for" = "$1 $2" ]; then
    IFS= read -r -N 65536 -u "$walk_fd" recent
    exec {walk_fd}<&-
    walk_for=""
  else
    recent=$(git rev-list --first-parent --max-count=16 "$2" 2>/dev/null)
  fi
  case $'\n'"$recent"$'\n' in *$'\n'"$1"$'\n'*) ans=yes; return 0 ;; esac
  git merge-base --is-ancestor "$1" "$2" >/dev/null 2>&1
  rc=$?
  case $rc in
    0) ans=yes ;;
    1) ans=no ;;
    *)
      out=$(git merge-base --is-ancestor "$1" "$2" 2>&1)
      case "$out" in *[Nn]"ot a valid"*) ans=no ;; *) return 1 ;; esac ;;
  esac
}

# The transport: bash's own TCP for plain HTTP to this host (saves starting curl), else curl.
tcp_host="" tcp_port="" tcp_path=""
if [ "${FENCE_SHIM_TRANSPORT:-auto}" = auto ]; then
  case "$FENCE_SERVER" in
    http://127.* | http://localhost | http://localhost[:/]*)
      rest=${FENCE_SERVER#http://}
      authority=${rest%%/*}
      tcp_path=""
      [ "$authority" != "$rest" ] && tcp_path=/${rest#*/}
      tcp_path=${tcp_path%/}
      tcp_host=${authority%%:*}
      tcp_port=80
      [ "$authority" != "$tcp_host" ] && tcp_port=${authority#*:}
      [[ -n "$tcp_port" && ${#tcp_port} -le 5 && "$tcp_port" != *[!0-9]* ]] || tcp_host=""
      ;;
  esac
fi

# A form field's value as application/x-www-form-urlencoded: the server decodes %XX and + and splits on
# & and the first =, and takes other bytes as they are.
form_value() {
  case "$1" in
    *[%\&+]*)
      local v=${1//[%]/%25}
      v=${v//[&]/%26}
      form=${v//[+]/%2B} ;;
    *) form=$1 ;;
  esac
}

# The fields and the push, encoded for /dev/tcp while git may still be walking; the facts follow per round.
base_body=""
if [ -n "$tcp_host" ] && [ -z "$tmp" ]; then
  for field in "${fields[@]}" "stdin=$input"; do
    form_value "${field#*=}"
    base_body+="${base_body:+&}${field%%=*}=$form"
  done
fi

# The commonest question (is the old tip in the new one?) is answered up front for small pushes, which
# saves a round trip; the server asks for anything else it needs.
facts=()
if [ "$hook" = pre-receive ]; then
  zero=0000000000000000000000000000000000000000
  head_lines=$input
  count=0
  while [ -n "$head_lines" ] && [ "$count" -lt 16 ]; do
    line=${head_lines%%$'\n'*}
    if [ "$line" = "$head_lines" ]; then head_lines=""; else head_lines=${head_lines#*$'\n'}; fi
    count=$((count + 1))
    old=${line%% *}
    new=${line#* }
    new=${new%% *}
    case "$old$new" in *"$zero"*) continue ;; esac
    if answer "$old" "$new"; then facts+=("fact=$old $new $ans"); fi
  done
fi

# Asks with curl; sets response to the body, a newline and the HTTP status.
ask_curl() {
  local request=(curl -sS -X POST --max-time "$1" --connect-timeout "$2" -H 'Accept: text/plain' -H 'Expect:'
    -w '\n%{http_code}') field rc problem
  for field in "${fields[@]}" "${facts[@]}" "nonce=$nonce"; do request+=(--data-urlencode "$field"); done
  if [ -n "$tmp" ]; then
    request+=(--data-urlencode "stdin@$tmp")
  else
    request+=(--data-urlencode "stdin=$input")
  fi
  response=$("${request[@]}" -K - "$FENCE_SERVER/v1/hook/$hook" 2>&1 \
    <<< "header = \"Authorization: Bearer $FENCE_CREDENTIAL\"")
  rc=$?
  if [ "$rc" -ne 0 ]; then
    # curl's own message ("curl: (7) Failed to connect ..."), wherever -w's status landed beside it.
    problem=""
    case "$response" in
      *"curl: "*)
        problem=${response##*curl: }
        problem=${problem%%$'\n'*} ;;
    esac
    # 8: not an HTTP answer; 18: the answer ended before its Content-Length; 61: an encoding never asked for.
    case $rc in 8 | 18 | 61) bad_reply "curl exit $rc: $problem" ;; esac
    server_down "curl exit $rc: $problem"
  fi
}

# Asks over bash's /dev/tcp (a server on this host, plain HTTP/1.0, so the reply ends when the server
# closes the connection); sets response as ask_curl does. Returns non-zero when it could not connect,
# and the caller then asks with curl, which reports the problem exactly.
#
# bash cannot bound a connect: to a server whose accept queue is full it waits as long as TCP retries
# (minutes). So a child process connects, sends the request and copies the answer back, after a "+" that
# says it got connected; the shim waits for it with read's own timeout and gives up at the budget.
ask_tcp() {
  local fd pid body=$base_body field reply status head rc request length lower
  for field in "${facts[@]}"; do
    form_value "${field#*=}"
    body+="&${field%%=*}=$form"
  done
  body+="&nonce=$nonce"
  local LC_ALL=C
  # Built first and written with one printf: bash flushes its output at every newline of a format, and a
  # request in eight small writes reaches the server as eight packets.
  printf -v request 'POST %s/v1/hook/%s HTTP/1.0\r\nHost: %s\r\nAuthorization: Bearer %s\r\nAccept: text/plain\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n%s' \
    "$tcp_path" "$hook" "$tcp_host:$tcp_port" "$FENCE_CREDENTIAL" "${#body}" "$body"
  exec {fd}< <(
    # A server that closes early must not kill the child with SIGPIPE: the write fails, the read says why.
    trap '' PIPE
    { exec {sock}<>"/dev/tcp/$tcp_host/$tcp_port"; } 2>/dev/null || exit 0
    printf +
    printf '%s' "$request" >&"$sock" 2>/dev/null
    # -N reads in blocks until the server closes (-d '' would read a byte per system call).
    IFS= read -r -N 1048576 -t "$1" -u "$sock" reply
    printf '%s' "$reply"
  )
  pid=$!
  IFS= read -r -N 1048577 -t "$1" -u "$fd" reply
  rc=$?
  exec {fd}<&-
  if [ "$rc" -gt 128 ]; then
    kill "$pid" 2>/dev/null
    [ -n "$reply" ] || server_down "could not connect within the ${budget}s budget"
    server_down "no answer within the ${budget}s budget"
  fi
  [ -n "$reply" ] || return 1
  reply=${reply#+}
  head=${reply%%$'\r\n\r\n'*}
  [ "$head" != "$reply" ] || server_down "the fence server closed the connection without an answer"
  case "$head" in HTTP/1.[01]\ [0-9][0-9][0-9]*) ;; *) bad_reply "the answer is not HTTP" ;; esac
  status=${head#HTTP/1.? }
  status=${status:0:3}
  response=${reply#*$'\r\n\r\n'}
  # A connection that broke off mid-answer ends it early; curl checks this itself.
  lower=${head,,}
  case "$lower" in
    *$'\r\n'content-length:*)
      length=${lower##*$'\r\n'content-length:}
      length=${length%%$'\r'*}
      length=${length//[[:space:]]/}
      [ "$length" = "${#response}" ] || bad_reply "the answer ended after ${#response} of its ${length} bytes" ;;
  esac
  response+=$'\n'$status
}

# A fresh nonce for each request, which the verdict must carry back: 128 bits from the kernel's random
# source where bash has SRANDOM (5.1+), else from bash's RANDOM with the time and process id.
new_nonce() {
  if [ -n "${SRANDOM:-}" ]; then
    printf -v nonce '%08x%08x%08x%08x' "$SRANDOM" "$SRANDOM" "$SRANDOM" "$SRANDOM"
  else
    local t=${EPOCHREALTIME:-0}
    printf -v nonce '%04x%04x%04x%04x%04x%04x%s%x' "$RANDOM" "$RANDOM" "$RANDOM" "$RANDOM" "$RANDOM" "$RANDOM" \
      "${t//[^0-9]/}" "$$"
  fi
}

# Text from the server, fit to show in one line of a message: printable, at most 120 characters.
shown() {
  local t=${1//[^[:print:]]/?}
  printf '%s' "${t:0:120}"
}

# Sets max_time (what is left of the budget, in seconds) and connect (curl's connect timeout); a budget
# spent is a server that did not answer in time.
time_left() {
  now_ms
  left=$((budget_ms - (now - start_ms)))
  [ "$left" -gt 100 ] || server_down "no answer within the ${budget}s budget"
  printf -v max_time '%d.%03d' $((left / 1000)) $((left % 1000))
  connect=$max_time
  [ "$left" -gt 1000 ] && connect=1
}

for round in 1 2 3 4 5; do
  [ "$round" -le 4 ] || refuse "the fence server still needed ancestry answers after 4 rounds" contended
  time_left
  new_nonce
  if [ -n "$tcp_host" ] && [ -z "$tmp" ] && ask_tcp "$max_time"; then
    :
  else
    # (after a connection /dev/tcp could not open, what is left of the budget)
    time_left
    ask_curl "$max_time" "$connect"
  fi
  status=${response##*$'\n'}
  body=${response%$'\n'*}
  first=${body%%$'\n'*}
  rest=""
  [ "$first" != "$body" ] && rest=${body#*$'\n'}
  rest=${rest%$'\n'}
  case "$status" in
    200) ;;
    5?? | 408) server_down "HTTP $status: $(shown "${rest:-$first}")" ;;
    401 | 403) misconfigured "the fence server refused this hook's credential (HTTP $status: $(shown "$rest"))" ;;
    *)
      # fence serve's own error answer ("error", then what was wrong) is a request it refused; anything else
      # came from something that is not fence serve.
      [ "$first" = error ] && misconfigured "the fence server answered HTTP $status: $(shown "$rest")"
      bad_reply "HTTP $status, not from fence serve" ;;
  esac
  case "$first" in
    "fence-verdict/1 nonce=$nonce exit=0")
      [ -n "$rest" ] && printf '%s\n' "$rest" >&2
      exit 0 ;;
    "fence-verdict/1 nonce=$nonce exit=1")
      [ -n "$rest" ] && printf '%s\n' "$rest" >&2
      exit 1 ;;
    "fence-verdict/1 nonce=$nonce need")
      [ "$hook" = pre-receive ] || bad_reply "ancestry questions to a post-receive hook"
      questions=$rest
      while [ -n "$questions" ]; do
        line=${questions%%$'\n'*}
        if [ "$line" = "$questions" ]; then questions=""; else questions=${questions#*$'\n'}; fi
        case "$line" in need\ *) ;; *) continue ;; esac
        line=${line#need }
        ancestor=${line%% *}
        descendant=${line#* }
        answer "$ancestor" "$descendant" \
          || refuse "git merge-base --is-ancestor $ancestor $descendant failed in this repository" malformed
        facts+=("fact=$ancestor $descendant $ans")
      done
      ;;
    fence-verdict/1\ nonce=*) bad_reply "a verdict for another request, or of an unknown form: $(shown "$first")" ;;
    *) bad_reply "HTTP 200, and its first line is '$(shown "$first")'" ;;
  esac
done
