#!/bin/sh
# Never answers: reads nothing, writes nothing.
while :; do sleep 1; done
