#!/bin/bash
# installed by fence
# fence curl shim: sends a push to 'fence serve' and prints the verdict it answers.
#
# Transport only. Every verdict is fence serve's, made by the same Java code as the Java hook's. What this
# script does by itself, when the server cannot be asked (unreachable, past the budget, failing) or its own
# settings are missing, is what fence install wrote into fence-shim.conf from the same policy: refuse every
# update of a fenced ref, as a Java hook whose server is down does (Admission.storeDown, failing closed),
# and let updates of other refs through. A rewrite, a delete, an agent's push, a push with a token: all are
# refused then, and nothing here tells them apart.
#
# Symbolic refs: git updates a symbolic ref's target, not the pushed name. This script only measures, for
# each pushed name that is a symbolic ref, where it leads (up to git's 5 levels) or why it cannot be
# resolved, and sends that as symref= / symref-problem= fields (SymrefFacts); the server decides with its
# fenced patterns (SymbolicRefs.screen), as the Java hook does. When the server gives no verdict (down, or
# the configuration or credential is broken), the one rule here is: a push that updates any symbolic ref
# is refused (REJECTED ref=<ref> reason=symbolic-ref), besides the fenced refs refused as above.
#
# Spellings: a repository whose file system ignores case (core.ignorecase) keeps refs/heads/MAIN and
# refs/heads/main as one file. There this script sends ignorecase=ascii and, for each pushed ref, the
# spellings the repository has of it or of a directory along it, compared by ASCII letters (refcase=
# facts, CaseAliases), and under GIT_NAMESPACE the spellings it has of the namespace (nscase= facts); the
# server decides (ref-case-alias). With the server out of reach, fenced patterns
# match such a repository's refs whatever their case, and as RefFolding spells them (a dot that ends a
# directory's name, or a code point HFS+ passes over, does not count).
#
# For git hosts whose hook environment has no Java or no store access (GHES's default environment has
# bash and curl): needs bash (4.4 or later), curl, git and head, and awk on a repository that ignores case
# and has packed refs. Installed as a pre-receive hook (or as
# post-receive, to record landed pushes: the mode follows the file name, or FENCE_SHIM_HOOK).
#
# Settings, from fence-shim.conf beside this script (KEY=VALUE lines), written by fence install --shim curl:
#   FENCE_SERVER          URL of fence serve, e.g. https://fence.internal:8700        (required)
#   FENCE_CREDENTIAL      <name>:<secret> of a credential with the hook role           (required)
#   FENCE_SHIM_BUDGET     seconds for all requests of one push (default 3; GHES gives all hooks 5 s);
#                         past it the push is one whose server is down
#   FENCE_SHIM_TRANSPORT  auto (default) or curl. auto: a server on this host (http://127.x.x.x or
#                         http://localhost) is asked through bash's own /dev/tcp, which saves starting curl on
#                         every push; anything else (https://, another host, a push of 16 refs or more) goes
#                         through curl, which speaks TLS.
#   FENCE_SHIM_HOOK       pre-receive or post-receive, when the file name does not say which
# Every setting is read from the file only (an environment variable of the same name is ignored: on a
# local-path remote the environment is the pusher's, who could otherwise point the shim at a server of
# its own, or turn a pre-receive into a post-receive). These fence install derived from the policy and
# the host:
#   FENCE_PUSH_VARIABLES  the variables that carry host identity and push options, sent to the server
#   FENCE_REPO_ID         plain git: the repo id resources are named after
#   FENCE_REPO_ID_FROM    other hosts: the variable that holds it (for the lines printed when down)
#   FENCE_FENCED_REFS     the fenced ref patterns, as bash patterns, for when the server cannot be asked
#
# The credential goes to curl through its config on standard input, not its command line, so other
# users cannot read it in the process list; through /dev/tcp it never leaves bash. Exit 0 accepts the
# push, 1 refuses it.
#
# Only fence serve's verdict accepts a push: each request carries a fresh random nonce, and the answer must
# be status 200 with the first line exactly "fence-verdict/1 nonce=<that nonce> exit=0". Anything else
# that answers (a proxy, a captive or login page, another service, a reply cut short or meant for another
# request) refuses the push with reason=bad-server-reply.
#
# Every push pays for each process this script starts: git (one ancestry answer) and either a watchdog
# for the budget of a request over /dev/tcp (a server on this host) or curl. The rest is bash builtins.
set -u
shopt -s extglob
# git's messages are read below, and bash's own pattern matching must not depend on the locale.
export LC_ALL=C
# Ancestry is asked of the objects as pushed: replace refs (refs/replace/*, which a pusher may write) would
# make git answer for the history they substitute instead.
export GIT_NO_REPLACE_OBJECTS=1
unset FENCE_SERVER FENCE_CREDENTIAL FENCE_SHIM_BUDGET FENCE_SHIM_HOOK FENCE_SHIM_TRANSPORT \
  FENCE_PUSH_VARIABLES FENCE_REPO_ID FENCE_REPO_ID_FROM FENCE_FENCED_REFS

by_name=pre-receive
case "${0##*/}" in *post-receive*) by_name=post-receive ;; esac

# The push's standard input. A push of up to 16 ref updates is read by bash itself and sent on curl's
# command line (ref names and ids are no secret); a larger one goes to a private temporary file.
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

# The question the server asks of nearly every push (is the first update's old tip in its new one?) is
# put to git now, in the background, so that git answers while this script reads its settings. git
# merge-base prints the old tip exactly when it is an ancestor of the new one. (exec: git is the
# background process itself, so it starts one fork sooner than it would under a subshell.)
early_for=""
if [ "${FENCE_SHIM_HOOK:-$by_name}" = pre-receive ]; then
  first=${input%%$'\n'*}
  first_old=${first%% *}
  first_new=${first#* }
  first_new=${first_new%% *}
  if is_id "$first_old" && is_id "$first_new" && [[ "$first_old$first_new" != *0000000000000000000000000000000000000000* ]]; then
    # A process substitution, not a coproc: its pipe stays open after git exits, a coproc's may not.
    exec {early_fd}< <(exec git merge-base "$first_old" "$first_new" 2>/dev/null)
    early_for="$first_old $first_new"
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
      FENCE_SERVER | FENCE_CREDENTIAL | FENCE_SHIM_BUDGET | FENCE_SHIM_HOOK | FENCE_SHIM_TRANSPORT | \
        FENCE_PUSH_VARIABLES | FENCE_REPO_ID | FENCE_REPO_ID_FROM | FENCE_FENCED_REFS)
        printf -v "$key" '%s' "$value" ;;
    esac
  done < "$conf"
fi

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

# Where a request may go over /dev/tcp, a watchdog guards its budget (curl bounds its own): bash cannot
# bound a connect by itself (to a server whose accept queue is full it waits as long as TCP retries,
# minutes), so a background process, once given the budget, signals this script (USR1) when it is spent
# before the script closes the watchdog's input; the signal interrupts the connect. The script connects,
# writes and reads itself, so no request waits for a process to start or copies its answer through one.
# The watchdog is started here, before bash has read the functions below, and waits for the budget: the
# fork costs a push 1 to 2 ms less here than after them (fence bench's curl shim row, measured by turns).
# A script that stops before giving it the budget (a broken setting) ends it by exiting.
deadline_passed=""
watch=""
if [ -n "$tcp_host" ] && [ -z "$tmp" ]; then
  trap 'deadline_passed=1' USR1
  # shellcheck disable=SC2034 # _ is read to wait
  exec {watch}> >(
    exec > /dev/null 2>&1
    IFS= read -r seconds || exit 0
    IFS= read -r -t "$seconds" _
    [ $? -gt 128 ] && kill -s USR1 $$
  )
fi

prefix=""
if [ -n "${GL_ID:-}${GL_REPOSITORY:-}" ]; then prefix="GL-HOOK-ERR: "; fi
say() { printf '%s%s\n' "$prefix" "$1" >&2; }

hook=${FENCE_SHIM_HOOK:-$by_name}

# Each ref update of the push whose ref FENCE_FENCED_REFS fences, one "ref" a line, into fenced_refs.
# Without FENCE_FENCED_REFS every ref counts as fenced (closed, not open, when the file lacks it). A ref
# stored in a git namespace (refs/namespaces/t1/refs/heads/main, pushed from outside it) counts by the ref it
# is inside its namespaces, as fence serve judges it (namespaced-ref).
fenced_refs=()
find_fenced() {
  local patterns=() all=$input p old new ref name inner folded ignored="" fenced
  if [ -n "${FENCE_FENCED_REFS+x}" ]; then
    read -r -a patterns <<< "$FENCE_FENCED_REFS"
  else
    patterns=('*')
  fi
  [ -n "$tmp" ] && all=$(cat "$tmp")
  # fence install writes a pattern's '?' as '@(?)': one UTF-8 character other than '/', which in the C
  # locale is one to four bytes (the Java hook counts characters).
  local one=$'@([0-~!-.]|[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf][\x80-\xbf]|[\xf0-\xf4][\x80-\xbf][\x80-\xbf][\x80-\xbf])'
  for p in "${!patterns[@]}"; do patterns[p]=${patterns[p]//'@(?)'/$one}; done
  # On a repository that ignores case, another spelling of a fenced ref is that ref (case_ignored): another
  # case, and as RefFolding folds it, without the dot that ends a directory's name (Windows strips it) and
  # the code points HFS+ passes over (U+200C-U+200F, U+202A-U+202E, U+206A-U+206F, U+FEFF, as UTF-8 bytes).
  local zw=$'[\x8c-\x8f\xaa-\xae]' ia=$'[\xaa-\xaf]'
  if case_ignored; then ignored=1; shopt -s nocasematch; fi
  while IFS=' ' read -r old new ref; do
    [ -n "$ref" ] || continue
    folded=$ref
    if [ -n "$ignored" ]; then
      folded=${folded//.\//\/}
      folded=${folded//$'\xe2\x80'$zw/}
      folded=${folded//$'\xe2\x81'$ia/}
      folded=${folded//$'\xef\xbb\xbf'/}
    fi
    fenced=""
    for name in "$ref" "$folded"; do
      inner=$name
      while [[ "$inner" == refs/namespaces/?*/?* ]]; do inner=${inner#refs/namespaces/*/}; done
      for p in "${patterns[@]}"; do
        # shellcheck disable=SC2053 # $p is a pattern
        if [[ "$name" == $p || "$inner" == $p ]]; then fenced=1; break 2; fi
      done
    done
    [ -z "$fenced" ] || fenced_refs+=("$ref")
  done <<< "$all"
  shopt -u nocasematch
}

# A push to a symbolic ref updates its target, and fence serve cannot see this repository's refs: for
# each pushed name that is a symbolic ref, its resolution is sent as a fact (SymrefFacts: "symref=<ref>
# <target>..." or "symref-problem=<ref> <problem>"), and the server decides. Into sym_refs (the names) and
# sym_facts (the fields). Loose files "ref: <target>", read with builtins; a reftable repository is asked
# through git. Under GIT_NAMESPACE receive-pack writes a pushed name under the namespace's prefix, so it is
# resolved there, and targets inside the namespace are sent as its pushers name them (as SymbolicRefs does):
# read without the prefix, refs/heads/master would be no symbolic ref while git follows
# refs/namespaces/t1/refs/heads/master to t1's main.
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
# Where receive-pack stores the pushed refs under GIT_NAMESPACE (git's expand_namespace: each non-empty
# component becomes refs/namespaces/<component>/); empty without one. Read by find_symbolic and
# find_case_facts, which also reads ns_name: the namespace's non-empty components joined by '/' (as
# GitNamespace.of reads it).
ns="" ns_name=""
ns_rest=${GIT_NAMESPACE:-}
while [ -n "$ns_rest" ]; do
  ns_part=${ns_rest%%/*}
  if [ "$ns_part" = "$ns_rest" ]; then ns_rest=""; else ns_rest=${ns_rest#*/}; fi
  [ -z "$ns_part" ] || { ns+="refs/namespaces/$ns_part/"; ns_name+="${ns_name:+/}$ns_part"; }
done
sym_refs=() sym_facts=() sym_done=""
find_symbolic() {
  local all=$input old new ref name chain problem depth target
  [ -z "$sym_done" ] || return 0
  sym_done=1
  [ -n "$tmp" ] && all=$(cat "$tmp")
  while IFS=' ' read -r old new ref; do
    [ -n "$ref" ] || continue
    name=$ns$ref chain="" problem="" depth=0 target=""
    while [ "$depth" -lt 5 ] && sym_target "$name"; do
      # A target outside the namespace would read as the namespace's own ref without its prefix.
      if [ -n "$ns" ] && [[ "$target" != "$ns"* ]]; then
        chain+=" $target" problem="its target is outside the push's git namespace"
        break
      fi
      chain+=" ${target#"$ns"}"
      sym_safe "$target" || { problem="its target is not a valid ref name"; break; }
      name=$target
      depth=$((depth + 1))
    done
    [ -n "$chain" ] || continue
    case " ${sym_refs[*]} " in *" $ref "*) continue ;; esac
    if [ -z "$problem" ] && [ "$depth" -ge 5 ]; then
      problem="more than 5 levels of symbolic refs, or a loop"
    fi
    sym_refs+=("$ref")
    if [ -z "$problem" ]; then sym_facts+=("symref=$ref$chain"); else sym_facts+=("symref-problem=$ref $problem"); fi
  done <<< "$all"
}

# A repository whose file system ignores case (macOS, Windows) keeps refs/heads/MAIN, refs/HEADS/main and
# refs/heads/main as one file, so each is another's spelling (CaseAliases). Whether this one does: core.ignorecase
# in its config (read with builtins), or a file system on which "head" finds HEAD.
case_state=""
case_ignored() {
  local dir=${GIT_DIR:-.} line section="" key value found=""
  if [ -z "$case_state" ]; then
    case_state=no
    if [ -r "$dir/config" ]; then
      while IFS= read -r line || [ -n "$line" ]; do
        line=${line#"${line%%[![:space:]]*}"}
        case "$line" in
          \[*)
            # "[core]"; a subsection ("[core \"x\"]") is another section. A variable may follow on the line.
            section=${line#\[}
            section=${section%%\]*}
            section=${section//[[:space:]]/}
            section=${section,,}
            line=${line#*\]}
            line=${line#"${line%%[![:space:]]*}"} ;;
        esac
        [ "$section" = core ] || continue
        case "$line" in [A-Za-z]*) ;; *) continue ;; esac
        key=${line%%[=[:space:]#\;]*}
        [ "${key,,}" = ignorecase ] || continue
        value=${line#"$key"}
        value=${value#"${value%%[![:space:]]*}"}
        case "$value" in
          =*)
            value=${value#=}
            value=${value%%[#\;]*}
            value=${value//[\"[:space:]]/} ;;
          *) value=true ;;
        esac
        found=${value,,}
      done < "$dir/config"
    fi
    # As git reads a boolean; a value git would refuse counts as true (it only refuses more).
    case "$found" in
      "" | false | no | off) ;;
      *[!0]*) case_state=yes ;;
    esac
    if [ -e "$dir/head" ] && [ -e "$dir/HEAD" ]; then case_state=yes; fi
  fi
  [ "$case_state" = yes ]
}

# On such a repository, for each pushed ref the spellings the repository has of it, or of a directory along
# it, that differ from the pushed one, compared by ASCII letters (bash and awk in the C locale fold no others):
# the loose refs' directories through bash's case-insensitive globbing, packed-refs through awk. Sent as the
# facts ignorecase=ascii and refcase=<ref> <spelling>; the server decides with its fenced patterns, and takes
# characters other than ASCII in one spelling only (the one this script cannot mistake). Under GIT_NAMESPACE
# the spellings are the namespace's own refs, below its prefix (as CaseAliases.measure reads them): the
# repository's other refs are not the pushed ref's file. The namespace is directories too: refs/namespaces/t1
# is the directory of GIT_NAMESPACE=T1, so its prefix is looked for as a ref is, and each other spelling of
# it (or of its first components) is sent as nscase=<namespace>; the server then refuses the fenced refs
# (ref-case-alias). Only on such a repository and under GIT_NAMESPACE, and in the one awk packed-refs already
# costs: no process more.
case_facts=() case_found=()
case_walk() {
  # $1: a directory; $2: the spelling so far; $3: the components left. Into case_found.
  local part=${3%%/*} rest="" base i c m glob=()
  [ "$part" = "$3" ] || rest=${3#*/}
  # Windows strips the dot that ends a directory's name (RefFolding): "heads." and "heads" are one name, so
  # the glob takes the component without it and matches entries with or without one (extglob's ?(.)).
  base=$part
  [[ "$base" == *[!.]. ]] && base=${base%.}
  for ((i = 0; i < ${#base}; i++)); do
    c=${base:i:1}
    case "$c" in [A-Za-z]) break ;; esac
  done
  if [ "$i" -lt "${#base}" ]; then
    # One letter in brackets makes the component a glob; nocaseglob matches it, and the rest, to ASCII case.
    glob=("$1/${base:0:i}"[$c]"${base:i+1}"?(.))
  elif [ -n "$base" ]; then
    glob=("$1/$base"?(.))
  fi
  if [ "${#glob[@]}" -eq 0 ]; then
    [ -z "$2" ] || case_found+=("$2")
    return 0
  fi
  for m in "${glob[@]}"; do
    m=${m##*/}
    if [ -n "$rest" ] && [ -d "$1/$m" ]; then
      case_walk "$1/$m" "${2:+$2/}$m" "$rest"
    else
      case_found+=("${2:+$2/}$m")
    fi
  done
}
# A stored spelling of the namespace's prefix ($1, refs/namespaces/t1/refs) as a namespace (t1), as
# GitNamespace.split reads it; a nscase fact when it spells the pushed namespace's components otherwise.
case_namespace() {
  local rest=$1/ other=""
  while [[ "$rest" == refs/namespaces/[!/]*/* ]]; do
    rest=${rest#refs/namespaces/}
    other+="${other:+/}${rest%%/*}"
    rest=${rest#*/}
  done
  [ -n "$other" ] || return 0
  [[ "$ns_name" == "$other" || "$ns_name" == "$other"/* ]] && return 0
  [ -z "${seen[nscase=$other]+x}" ] || return 0
  seen["nscase=$other"]=1
  case_facts+=("nscase=$other")
}
find_case_facts() {
  local all=$input old new ref s refs=""
  local -A seen=()
  case_ignored || return 0
  case_facts=("ignorecase=ascii")
  [ -n "$tmp" ] && all=$(cat "$tmp")
  shopt -s nocaseglob nullglob
  while IFS=' ' read -r old new ref; do
    [ -n "$ref" ] && [ -z "${seen[$ref]+x}" ] || continue
    seen[$ref]=1
    refs+=$ref$'\n'
    case_found=()
    case_walk "${GIT_DIR:-.}${ns:+/${ns%/}}" "" "$ref"
    for s in "${case_found[@]}"; do
      # $s spells as many components as it has; the pushed ref spells them alike exactly when it starts so.
      [[ "$ref" == "$s" || "$ref" == "$s"/* ]] && continue
      [ -z "${seen[refcase=$ref $s]+x}" ] || continue
      seen["refcase=$ref $s"]=1
      case_facts+=("refcase=$ref $s")
    done
  done <<< "$all"
  if [ -n "$ns" ]; then
    case_found=()
    case_walk "${GIT_DIR:-.}" "" "${ns%/}"
    for s in "${case_found[@]}"; do case_namespace "$s"; done
  fi
  shopt -u nocaseglob nullglob
  [ -f "${GIT_DIR:-.}/packed-refs" ] || return 0
  while IFS= read -r s; do
    case "$s" in "ns "*) case_namespace "${s##* }"; continue ;; esac
    [ -n "$s" ] && [ -z "${seen[refcase=$s]+x}" ] || continue
    seen["refcase=$s"]=1
    case_facts+=("refcase=$s")
  done < <(FENCE_CASE_REFS=$refs FENCE_CASE_NS=$ns awk '
    # A component as the loose refs are globbed: ASCII case and the dot that ends it do not count.
    function fold(x) { x = tolower(x); if (x ~ /[^.]\.$/) x = substr(x, 1, length(x) - 1); return x }
    # The pushed names (one a line) in R, and every leading part of them by its fold in S: its spelling, or a
    # newline where they spell it differently. Returns how many there are.
    function pushed(list, R, S,    n, i, m, c, k, key, sp) {
      n = split(list, R, "\n")
      for (i = 1; i <= n; i++) {
        m = split(R[i], c, "/"); key = ""; sp = ""
        for (k = 1; k <= m; k++) {
          key = key (k > 1 ? "/" : "") fold(c[k]); sp = sp (k > 1 ? "/" : "") c[k]
          if (!(key in S)) S[key] = sp; else if (S[key] != sp) S[key] = "\n"
        }
      }
      return n
    }
    # For name, the deepest leading part that folds as one of the names in R does, when spelled otherwise:
    # prints "<tag><pushed name> <its spelling>" for each pushed name it concerns, once (D).
    function aliases(name, R, S, n, tag,    m, c, k, key, sp, dk, ds, depth, i, d, lk, ls) {
      m = split(name, c, "/"); key = ""; sp = ""; dk = ""; ds = ""; depth = 0
      for (k = 1; k <= m; k++) {
        key = key (k > 1 ? "/" : "") fold(c[k]); sp = sp (k > 1 ? "/" : "") c[k]
        if (!(key in S)) break
        dk = key; ds = sp; depth = k
      }
      if (depth == 0 || S[dk] == ds) return
      for (i = 1; i <= n; i++) {
        if (split(R[i], d, "/") < depth) continue
        lk = ""; ls = ""
        for (k = 1; k <= depth; k++) { lk = lk (k > 1 ? "/" : "") fold(d[k]); ls = ls (k > 1 ? "/" : "") d[k] }
        if (lk == dk && ls != ds && !((tag R[i] " " ds) in D)) { D[tag R[i] " " ds] = 1; print tag R[i] " " ds }
      }
    }
    BEGIN {
      n = pushed(ENVIRON["FENCE_CASE_REFS"], R, S)
      # Under GIT_NAMESPACE its prefix is looked for among all names, as a pushed ref is among its own.
      p = ENVIRON["FENCE_CASE_NS"] == "" ? 0 : pushed(substr(ENVIRON["FENCE_CASE_NS"], 1, length(ENVIRON["FENCE_CASE_NS"]) - 1), P, PS)
    }
    /^[#^]/ { next }
    {
      name = $2
      if (p > 0) aliases(name, P, PS, p, "ns ")
      if (ENVIRON["FENCE_CASE_NS"] != "") {
        if (index(name, ENVIRON["FENCE_CASE_NS"]) != 1) next
        name = substr(name, length(ENVIRON["FENCE_CASE_NS"]) + 1)
      }
      aliases(name, R, S, n, "")
    }' "${GIT_DIR:-.}/packed-refs" 2>/dev/null)
}

# No verdict from fence serve (down, or the configuration is broken): nobody decides where a symbolic ref
# leads, so every push to one is refused (SymbolicRefs.unjudgedLines), after the lines of the refs refused
# as fenced ($1: a function that prints them, or nothing).
refuse_unjudged() {
  local ref
  [ "${#sym_refs[@]}" -gt 0 ] || return 0
  for ref in "${sym_refs[@]}"; do say "REJECTED ref=$ref reason=symbolic-ref"; done
  [ -n "${1:-}" ] && "$1"
  say "fence: the fence server did not judge this push, so pushes to symbolic refs are refused (git would update their targets, which may be fenced). Push to the target's name instead."
  exit 1
}

# The server cannot be asked: Admission.storeDown, failing closed, as fence install wrote it down; and
# every push to a symbolic ref refused (refuse_unjudged).
down_problem=""
down_lines() {
  local ref repo=${FENCE_REPO_ID:-}
  [ -z "$repo" ] && [ -n "${FENCE_REPO_ID_FROM:-}" ] && repo=${!FENCE_REPO_ID_FROM:-}
  for ref in "${fenced_refs[@]}"; do
    say "REJECTED resource=git:${repo:--}:$ref ref=$ref token=0 current=0 reason=store-down"
  done
  say "fence: the fence server is unavailable ($down_problem); pushes to fenced refs are refused until it is back. This is an infrastructure problem, not a conflict: report it to the operator."
}
server_down() {
  if [ "$hook" = post-receive ]; then
    say "warning: fence could not record the landed push: $1"
    exit 0
  fi
  down_problem=$1
  find_fenced
  find_symbolic
  if [ "${#fenced_refs[@]}" -gt 0 ]; then refuse_unjudged down_lines; else refuse_unjudged; fi
  [ "${#fenced_refs[@]}" -gt 0 ] || exit 0
  down_lines
  exit 1
}

# A configuration problem, or a credential the server refused: PreReceiveHook.misconfigured.
misconfigured() {
  if [ "$hook" = post-receive ]; then
    say "warning: fence could not record the landed push: $1"
    exit 0
  fi
  down_problem=$1
  find_fenced
  find_symbolic
  if [ "${#fenced_refs[@]}" -gt 0 ]; then refuse_unjudged config_lines; else refuse_unjudged; fi
  if [ "${#fenced_refs[@]}" -eq 0 ]; then
    say "warning: fence configuration is broken ($1); this push touches no fenced ref and was accepted"
    exit 0
  fi
  config_lines
  exit 1
}
config_lines() {
  say "REJECTED resource=- ref=- token=0 current=0 reason=bad-config"
  say "fence: the hook's configuration is broken, so fenced refs are closed: $down_problem"
}

# An answer that is not fence serve's verdict for this request: never a reason to let a push through, and
# no sign that the server is down either (something else answered in its place).
bad_reply() {
  if [ "$hook" = post-receive ]; then
    say "warning: fence could not record the landed push: the reply from $FENCE_SERVER is not a fence verdict ($1)"
    exit 0
  fi
  say "REJECTED resource=- ref=- token=0 current=0 reason=bad-server-reply"
  say "fence: the reply from $FENCE_SERVER is not a fence verdict ($1), so the push is refused. The server setting must point at fence serve itself (not a proxy, a login page or another service), of a version that answers fence-verdict/1. This is an infrastructure problem, not a conflict: report it to the operator."
  exit 1
}

[ -n "${FENCE_SERVER:-}" ] || misconfigured "FENCE_SERVER is not set in $conf"
case "$FENCE_SERVER" in http://* | https://*) ;; *) misconfigured "FENCE_SERVER must be an http:// or https:// URL" ;; esac
[ -n "${FENCE_CREDENTIAL:-}" ] || misconfigured "FENCE_CREDENTIAL is not set in $conf"
[ -n "${FENCE_PUSH_VARIABLES:-}" ] || misconfigured "FENCE_PUSH_VARIABLES is not set in $conf: rerun fence install --shim curl"
# Whether the server knows the credential is the server's to say (401); here only what would break the
# request itself is refused: a header must be one line of printable characters.
[[ "$FENCE_CREDENTIAL" == *:* && "$FENCE_CREDENTIAL" != *[![:graph:]]* && "$FENCE_CREDENTIAL" != *[\"\\]* ]] \
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
# The largest answer taken from a server: fence serve keeps a text verdict's lines under 192 KiB (the
# rest it counts in a last line). A larger answer is not fence's, and bash reads a socket a byte per
# system call: 256 KiB costs it most of a second.
max_answer=262144
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
# The watchdog's clock starts now: it is given the budget (see where it was started).
if [ -n "$watch" ]; then
  trap '' PIPE
  printf '%s\n' "$budget" >&"$watch" 2> /dev/null
  trap - PIPE
fi
# Ends the watchdog: its read sees the end of its input.
watch_done() {
  [ -n "$watch" ] || return 0
  exec {watch}>&-
  watch=""
}

if [ "$hook" = pre-receive ]; then find_symbolic; find_case_facts; fi

# Host identity and push options, as the hook sees them: form fields (name=value, encoded when sent).
# Which variables those are is fence's to say (FENCE_PUSH_VARIABLES, written by fence install).
read -r -a push_variables <<< "$FENCE_PUSH_VARIABLES"
fields=()
for p in "${push_variables[@]}"; do
  # A name, or a prefix and '*': bash lists the variables of a prefix itself (no process for it).
  name=${p%\*}
  [[ "$name" == [A-Za-z_]* && "$name" != *[!A-Za-z0-9_]* ]] \
    || misconfigured "FENCE_PUSH_VARIABLES has '$p', which is neither a variable name nor a prefix and '*'"
  if [ "$name" = "$p" ]; then names=("$p"); else eval "names=(\"\${!$name@}\")"; fi
  for name in "${names[@]}"; do
    [ -n "$name" ] || continue
    # Exported variables only (as the environment hands them to the hook; not fence-shim.conf's).
    [ -n "${!name+x}" ] || continue
    case "${!name@a}" in *x*) fields+=("env=$name=${!name}") ;; esac
  done
done
[ -n "${FENCE_REPO_ID:-}" ] && fields+=("env=FENCE_REPO_ID=$FENCE_REPO_ID")

# Sets ans to "yes" or "no": is $1 an ancestor of (or equal to) $2? As the Java hook asks git.
answer() {
  local out rc base=""
  is_id "$1" && is_id "$2" || return 1
  if [ "$early_for" = "$1 $2" ]; then
    IFS= read -r -u "$early_fd" base
    exec {early_fd}<&-
    early_for=""
    if [ "$base" = "$1" ]; then ans=yes; return 0; fi
    # Anything else (another base, none, an error) is asked exactly, below.
  fi
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

# The fields and the push, encoded for /dev/tcp while git may still be answering; the facts follow per round.
base_body=""
if [ -n "$tcp_host" ] && [ -z "$tmp" ]; then
  for field in "${fields[@]}" "stdin=$input"; do
    form_value "${field#*=}"
    base_body+="${base_body:+&}${field%%=*}=$form"
  done
fi

# The first update's answer goes with the first request; the server asks for anything else it needs.
facts=("${sym_facts[@]}" "${case_facts[@]}")
if [ -n "$early_for" ] && answer $early_for; then facts+=("fact=$first_old $first_new $ans"); fi

# Asks with curl; sets response to the body, a newline and the HTTP status.
ask_curl() {
  local request=(curl -sS -X POST --max-time "$1" --connect-timeout "$2" -H 'Accept: text/plain' -H 'Expect:'
    --max-filesize "$max_answer" -w '\n%{http_code}') field rc problem v
  # The host's variables (push options among them: fence-proof= is a bearer credential) go to curl through
  # its config on standard input with the credential, never on its command line, which every user of this
  # host can read in the process list. Facts, the nonce and the push's ref updates are no secret.
  local config="header = \"Authorization: Bearer $FENCE_CREDENTIAL\""$'\n'
  for field in "${fields[@]}"; do
    v=${field//\\/\\\\}
    v=${v//\"/\\\"}
    v=${v//$'\n'/\\n}
    v=${v//$'\r'/\\r}
    v=${v//$'\t'/\\t}
    config+="data-urlencode = \"$v\""$'\n'
  done
  for field in "${facts[@]}" "nonce=$nonce"; do request+=(--data-urlencode "$field"); done
  if [ -n "$tmp" ]; then
    request+=(--data-urlencode "stdin@$tmp")
  else
    request+=(--data-urlencode "stdin=$input")
  fi
  # head bounds what is kept (curl before 8.4 stops only an answer that declares its length); when it has
  # read enough it exits, and curl fails writing (23).
  response=$("${request[@]}" -K - "$FENCE_SERVER/v1/hook/$hook" 2>&1 \
    <<< "$config" | head -c $((max_answer + 4096))
    exit "${PIPESTATUS[0]}")
  rc=$?
  [ "$rc" -ne 23 ] && [ "${#response}" -le $((max_answer + 4)) ] \
    || bad_reply "an answer of more than $max_answer bytes"
  if [ "$rc" -ne 0 ]; then
    # curl's own message ("curl: (7) Failed to connect ..."), wherever -w's status landed beside it: looked
    # for in the answer's last bytes only, as patterns on a long string cost bash its square.
    problem=""
    local tail=$response
    [ "${#tail}" -le 4096 ] || tail=${tail:${#tail}-4096}
    case "$tail" in
      *"curl: "*)
        problem=${tail##*curl: }
        problem=${problem%%$'\n'*} ;;
    esac
    # 8: not an HTTP answer; 18: the answer ended before its Content-Length; 61: an encoding never asked for;
    # 63: an answer declared larger than max_answer.
    case $rc in 8 | 18 | 61 | 63) bad_reply "curl exit $rc: $problem" ;; esac
    server_down "curl exit $rc: $problem"
  fi
}

# Asks over bash's /dev/tcp (a server on this host, plain HTTP/1.0, so the reply ends when the server
# closes the connection); sets response as ask_curl does. Returns non-zero when it could not connect,
# and the caller then asks with curl, which reports the problem exactly. The watchdog's signal bounds the
# connect (see above); read's own timeout bounds the answer.
ask_tcp() {
  local sock body=$base_body field reply status head rc request length lower
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
  [ -z "$deadline_passed" ] || server_down "could not connect within the ${budget}s budget"
  if ! { exec {sock}<>"/dev/tcp/$tcp_host/$tcp_port"; } 2> /dev/null; then
    [ -z "$deadline_passed" ] || server_down "could not connect within the ${budget}s budget"
    return 1
  fi
  # A server that closes early must not kill the shim with SIGPIPE: the write fails, the read says why.
  trap '' PIPE
  printf '%s' "$request" >&"$sock" 2> /dev/null
  trap - PIPE
  # -N reads in blocks until the server closes (-d '' would read a byte per system call).
  IFS= read -r -N $((max_answer + 1)) -t "$1" -u "$sock" reply
  rc=$?
  exec {sock}<&-
  [ "${#reply}" -le "$max_answer" ] || bad_reply "an answer of more than $max_answer bytes"
  [ "$rc" -le 128 ] || server_down "no answer within the ${budget}s budget"
  [ -n "$reply" ] || server_down "the fence server closed the connection without an answer"
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
  local t=${1:0:120}
  t=${t//[^[:print:]]/?}
  printf '%s' "$t"
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
  [ "$round" -le 4 ] || server_down "the fence server still needed ancestry answers after 4 rounds"
  time_left
  new_nonce
  if [ -n "$tcp_host" ] && [ -z "$tmp" ] && ask_tcp "$max_time"; then
    :
  else
    # (after a connection /dev/tcp could not open, what is left of the budget)
    watch_done
    time_left
    ask_curl "$max_time" "$connect"
  fi
  # Below, only offsets and the first line's pattern: suffix patterns on a long answer cost bash time that
  # grows with the square of its length.
  status=${response:${#response}-3}
  body=${response:0:${#response}-4}
  # A verdict's first line is short; one longer than 256 bytes is no verdict (and stays cut there).
  first=${body:0:256}
  first=${first%%$'\n'*}
  rest=""
  [ "${body:${#first}:1}" = $'\n' ] && rest=${body:${#first}+1}
  [ "${rest:${#rest}-1}" = $'\n' ] && rest=${rest:0:${#rest}-1}
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
        if ! answer "$ancestor" "$descendant"; then
          say "REJECTED ref=- reason=malformed"
          say "fence: git merge-base --is-ancestor $(shown "$ancestor") $(shown "$descendant") failed in this repository"
          exit 1
        fi
        facts+=("fact=$ancestor $descendant $ans")
      done
      ;;
    fence-verdict/1\ nonce=*) bad_reply "a verdict for another request, or of an unknown form: $(shown "$first")" ;;
    *) bad_reply "HTTP 200, and its first line is '$(shown "$first")'" ;;
  esac
done
