#!/bin/sh
# Starts a grandchild in a new session (setsid: out of verity's process
# group), then never answers. Both command lines carry "verity-orphan-" so
# the no-survivor checks can find them.
setsid sh -c 'while :; do sleep 1; done' verity-orphan-grandchild &
exec sh -c 'while :; do sleep 1; done' verity-orphan-server
