#!/bin/sh
# Exits before answering.
echo "crashing on purpose" >&2
exit 3
