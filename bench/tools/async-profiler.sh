#!/usr/bin/env bash
# Prints the path of async-profiler's agent library (tools.profiler:async-profiler, Maven Central), fetching it on
# first use into bench/target/async-profiler. Mixed Java + native (RocksDB, JNI) flame graphs, which JFR's Java
# samples cannot give. Usage, e.g. for the ACK wheel at full speed:
#   IM_JAVA_OPTS="-Xms256m -Xmx2g -agentpath:$(bench/tools/async-profiler.sh)=start,event=cpu,interval=10ms,file=flame.html" \
#     bin/im bench ackwheel --rate max
# (event=cpu needs perf events for user space: kernel.perf_event_paranoid <= 2; otherwise use event=itimer.)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VERSION=4.2
DIR="$ROOT/bench/target/async-profiler/$VERSION"
LIB="$DIR/linux-x64/libasyncProfiler.so"
if [ ! -f "$LIB" ]; then
  (cd "$ROOT" && ./mvnw -B -q dependency:get -Dartifact="tools.profiler:async-profiler:$VERSION:jar:linux-x64" >&2)
  JAR="$HOME/.m2/repository/tools/profiler/async-profiler/$VERSION/async-profiler-$VERSION-linux-x64.jar"
  mkdir -p "$DIR"
  (cd "$DIR" && unzip -q -o "$JAR" 'linux-x64/*')
fi
echo "$LIB"
