#!/usr/bin/env bash
# Shows that each rule of the gate fails the build: writes one deliberate violation at a time into the schemas module
# (the one module with no reactor dependency), runs the goal that checks it, and expects a failure naming the rule.
# Prints one line per rule and exits non-zero if a violation got through. Run from anywhere: build-tools/gate-selftest.sh
set -uo pipefail
cd "$(dirname "$0")/.."
probe=schemas/src/main/java/dev/impipe/schemas/GateProbe.java
trap 'rm -f "$probe"' EXIT
failed=0
expect_failure() { # rule, expected text in the output, source, maven args...
  local rule=$1 text=$2 source=$3; shift 3
  printf '%b' "$source" > "$probe"
  local out; out=$(./mvnw -B -q -pl schemas "$@" 2>&1); local status=$?
  rm -f "$probe"
  if [ "$status" -ne 0 ] && grep -q -- "$text" <<<"$out"; then echo "ok: $rule fails the build";
  else echo "NOT CAUGHT: $rule (exit $status)"; failed=1; fi
}
pkg='package dev.impipe.schemas;\n'
expect_failure "locale-less case conversion (Checkstyle)" localeLessCaseConversion \
  "${pkg}class GateProbe { String f(String s) { return s.toLowerCase(); } }\n" validate
expect_failure "another module's internal package (Checkstyle import-control)" ImportControl \
  "${pkg}import dev.impipe.fanout.internal.MemberKeys;\nclass GateProbe { Object k = MemberKeys.class; }\n" validate
expect_failure "unused import (Checkstyle)" UnusedImports \
  "${pkg}import java.util.List;\nclass GateProbe {}\n" validate
expect_failure "Error Prone ERROR check (DeadException)" DeadException \
  "${pkg}class GateProbe { void f() { new IllegalStateException(\"lost\"); } }\n" compile
expect_failure "javac lint warning with -Werror (rawtypes)" "warnings found and -Werror specified" \
  "${pkg}class GateProbe { java.util.List<?> l = new java.util.ArrayList(); }\n" compile
expect_failure "formatting (Spotless, Eclipse profile)" "format violations" \
  "${pkg}class GateProbe {\n      int x;\n}\n" spotless:check -Dspotless.check.skip=false "-DspotlessFiles=.*GateProbe.java"
exit "$failed"
