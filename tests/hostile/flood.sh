#!/bin/sh
# Sends one 100 MB line (no newline until the end).
head -c 104857600 /dev/zero | tr '\0' 'a'
printf '\n'
while :; do sleep 1; done
