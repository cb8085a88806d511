#!/usr/bin/env bash
# The official MCP conformance suite's client scenarios against verity's
# HTTP client. Each client scenario starts a test server and runs the given
# command with the server's URL appended: here `verity reality --url <URL>`
# (initialize, list, then call every listed tool with generated arguments).
# Usage: scripts/conformance.sh [scenario...]   (default: initialize tools_call sse-retry)
set -uo pipefail
cd "$(dirname "$0")/.."
export NO_COLOR=1
scenarios=("$@")
[ ${#scenarios[@]} -eq 0 ] && scenarios=(initialize tools_call sse-retry)
verity="deno run --allow-all $PWD/main.ts reality --include-destructive --timeout 10 --url"
failed=0
for s in "${scenarios[@]}"; do
  log=$(mktemp)
  timeout 180 deno run -A npm:@modelcontextprotocol/conformance@0.1.16 client \
    --command "$verity" --scenario "$s" >"$log" 2>&1
  rc=$?
  if [ $rc -eq 0 ] && grep -q "OVERALL: PASSED" "$log"; then
    echo "conformance $s: $(grep -E '^Passed:' "$log")"
  else
    echo "conformance $s: FAILED (exit $rc)"
    grep -E 'FAILURE|WARNING|Passed:|Error' "$log" | head -20
    failed=$((failed + 1))
  fi
  rm -f "$log"
done
exit $((failed > 0))
