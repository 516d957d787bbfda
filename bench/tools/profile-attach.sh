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
# jcmd reads name=value pairs in its arguments as its own options: the agent's options go in quotes.
jcmd "$pid" JVMTI.agent_load "$lib" "\"start,event=$event,interval=5ms,threads\"" >/dev/null
sleep "$seconds"
jcmd "$pid" JVMTI.agent_load "$lib" "\"stop,file=$out\"" >/dev/null
echo "$out"
