#!/bin/sh
# Prints garbage to stdout instead of JSON-RPC, then waits.
printf 'hello, I am not JSON\n\377\376 binary\n{"jsonrpc":"2.0"\n'
while :; do sleep 1; done
