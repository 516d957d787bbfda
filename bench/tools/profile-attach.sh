#!/usr/bin/env bash
# Profiles a running JVM for a while with async-profiler (Java + native frames, one root frame per thread), by
# attaching to it: for one phase of a benchmark, or a JVM the benchmark starts (its broker), which an agent given at
# start-up would profile from its first second. Usage:
#   bench/tools/profile-attach.sh PID SECONDS OUT.collapsed   (or OUT.html for a flame graph)
# e.g. the broker of a running `bin/im bench fanout` during its latency phase:
#   bench/tools/profile-attach.sh "$(pgrep -f BrokerMain)" 25 broker.collapsed
# (event=cpu needs perf events for user space: kernel.perf_event_paranoid <= 2; IM_PROFILE_EVENT=itimer otherwise.)
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 PID SECONDS OUT.collapsed|OUT.html" >&2; exit 2; }
pid=$1; seconds=$2; out=$(realpath -m "$3")
lib="$("$(dirname "${BASH_SOURCE[0]}")/async-profiler.sh")"
event="${IM_PROFILE_EVENT:-cpu}"
# jcmd reads name=value pairs in its arguments as its own options: the agent's options go in quotes. jcmd exits 0
# whatever the agent answers, so its "return code" is checked here.
agent() {
  local reply
  reply=$(jcmd "$pid" JVMTI.agent_load "$lib" "\"$1\"")
  grep -q "return code: 0" <<<"$reply" || { echo "$0: async-profiler '$1' in $pid failed: $reply" >&2; exit 1; }
}
agent "start,event=$event,interval=5ms,threads"
sleep "$seconds"
agent "stop,file=$out"
echo "$out"
