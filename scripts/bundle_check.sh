#!/usr/bin/env bash
# The offline bundle works with no network: unpack it into an empty
# directory with an empty HOME and DENO_DIR and, inside `unshare --net` (a
# network namespace with only a down loopback), run `verity run` on a bundled
# fixture, then `verity report verify`, `verity ledger verify`, `verity keygen`,
# `verity attest` and `verity attest verify`; also check SHA256SUMS and, with
# the bundle's own verity, the bundle's attestation. Needs root (or unprivileged user namespaces) for
# unshare, and bubblewrap (the sandbox).
#
# Usage: scripts/bundle_check.sh [dist]    (after `deno task release`)
set -euo pipefail
dist=$(cd "${1:-dist}" && pwd)
tarball=$(ls "$dist"/verity-*-linux-*.tar.gz | head -n 1)
name=$(basename "$tarball" .tar.gz)

(cd "$dist" && sha256sum -c SHA256SUMS)

work=$(mktemp -d /tmp/verity-bundle-check.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/home" "$work/deno_dir" "$work/out"
tar -xzf "$tarball" -C "$work"
# the download, as a user has it: tarball, envelope, public key
mkdir "$work/download"
cp "$tarball" "$tarball.intoto.json" "$work/download/"
[ -f "$dist/verity-release.pub.pem" ] && cp "$dist/verity-release.pub.pem" "$work/download/"

unshare --net -- env -i PATH=/usr/bin:/bin HOME="$work/home" DENO_DIR="$work/deno_dir" \
  NO_COLOR=1 W="$work" B="$work/$name" bash -euo pipefail -c '
  echo "network interfaces: $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " " | tr "\n" " ")"
  if getent hosts registry.npmjs.org >/dev/null 2>&1; then echo "bundle check: the network is reachable" >&2; exit 1; fi
  cd "$W/out"
  "$B/verity" --version
  # the bundle checks its own download: no checkout, no network
  if [ -f "$W/download/verity-release.pub.pem" ]; then
    "$B/verity" attest verify "$W/download/$(basename "$B").tar.gz.intoto.json" --key "$W/download/verity-release.pub.pem"
  fi
  set +e
  "$B/verity" run "$B/app/fixtures/liar-readonly" --runs-dir "$W/out/runs" | tee "$W/out/run.txt"
  rc=${PIPESTATUS[0]}
  set -e
  [ "$rc" = 0 ] || { echo "bundle check: verity run exited $rc" >&2; exit 1; }
  report=$(ls "$W"/out/runs/*/report.json)
  # the head verity run printed is the record kept apart from the ledger
  head=$(sed -n "s/^ledger: .* head \(sha256:[0-9a-f]*\)$/\1/p" "$W/out/run.txt")
  [ -n "$head" ] || { echo "bundle check: verity run printed no ledger head" >&2; exit 1; }
  [ "$("$B/verity" ledger head --ledger "$W/out/runs/ledger.json")" = "$head" ]
  "$B/verity" report verify "$report" --ledger "$W/out/runs/ledger.json" --expected-head "$head"
  "$B/verity" ledger verify --ledger "$W/out/runs/ledger.json" --expected-head "$head"
  "$B/verity" keygen --out "$W/out/key"
  "$B/verity" attest "$report" --key "$W/out/key.pem" --ledger "$W/out/runs/ledger.json" --expected-head "$head" --out "$W/out/report.intoto.json"
  "$B/verity" attest verify "$W/out/report.intoto.json" --key "$W/out/key.pub.pem" --report "$report" \
    --ledger "$W/out/runs/ledger.json" --expected-head "$head"
  # nothing was written into the empty HOME or DENO_DIR
  leftovers=$(find "$HOME" "$DENO_DIR" -mindepth 1 | head -n 5)
  [ -z "$leftovers" ] || { echo "bundle check: written outside the bundle: $leftovers" >&2; exit 1; }
'
echo "bundle check: $name ran offline (run, report verify, ledger verify, attest verify)"
