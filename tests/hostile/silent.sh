#!/bin/sh
# Never answers: reads nothing, writes nothing.
exec sleep 300
