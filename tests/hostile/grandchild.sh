#!/bin/sh
# Leaves a grandchild holding its stdout (its command line names this
# script, so the test can look for it), then exits without answering.
sh -c 'while :; do sleep 1; done' "$0-grandchild" &
exit 0
