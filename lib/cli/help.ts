/**
 * Every command's `--help` text, in a module that imports nothing (the
 * defaults it quotes are written out; tests/help_test.ts checks them against
 * the constants the commands use):
 * `main.ts` prints `verity <command> --help` from here without loading the
 * command's own modules.
 *
 * @module
 */

/** Help text for the remote options (`--url`, `--header`, `--header-env`). */
export const REMOTE_HELP =
  `  --url URL              audit a remote server over Streamable HTTP (falls
                         back to the legacy HTTP+SSE transport) instead of
                         starting one
  --header NAME=VALUE    send this header with every request (repeatable;
                         the value is never shown in output or evidence)
  --header-env NAME=VAR  send header NAME with the value of environment
                         variable VAR (repeatable; never shown either)
  --token-env VAR        send "Authorization: Bearer <value of VAR>"
  --login                sign in (OAuth) when the server asks, as verity login
                         does; without it, a server asking for sign-in is one
                         line naming the verity login command to run
  --client-id ID         a client registered with the authorization server
                         (else a client ID metadata document or dynamic
                         registration); its secret in --client-secret-env VAR,
                         or a PKCS #8 key file in --client-key FILE
  --client-credentials   machine to machine: the client credentials grant
                         with --client-id (no person, no stored token)
  --client-metadata-url URL  the https URL of your client ID metadata
                         document, used where the authorization server takes
                         them
A token kept by verity login (under $XDG_CONFIG_HOME/verity or
~/.config/verity, mode 0600) is sent only to the server it was issued for,
and refreshed when it expires.`;

/** The options of `tools` and `capture` for the server they list. */
const LISTING_HELP =
  `  --timeout S     seconds to wait for each answer (default 30)
  --env K=V       add an environment variable for the server (repeatable)
  --no-sandbox    run the command as given, with your PATH and HOME (a
                  started server is otherwise sandboxed as in an audit, on a
                  scratch state directory)
  --offline       a package runner (npx, npm exec, pnpm dlx, bunx) must find
                  its package in verity's cache (.verity/): nothing is pinned
                  or fetched (otherwise its exact version is pinned and
                  fetched once, printed, then run by Deno offline)
${REMOTE_HELP}
  -h, --help      show this help`;

/**
 * The `--help` text of each command, by command name.
 *
 * @example
 * ```ts
 * COMMAND_HELP.run.startsWith("verity run"); // true
 * ```
 */
export const COMMAND_HELP = {
  "tools":
    `verity tools [--json] [--timeout S] [--env K=V]... [--no-sandbox] [--offline] -- <command...>
verity tools [--json] [--timeout S] --url URL [--header NAME=VALUE]...

Start an MCP server over stdio (or reach one over HTTP with --url), list every tool (following nextCursor to the
end) and print each tool's four hints as read from the raw bytes:
TRUE, FALSE, ABSENT or MALFORMED (with what was wrong).

Options:
  --json          print {"tools":[...],"pages":N} instead of a table
${LISTING_HELP}

Exit codes: 0 listed; 2 bad arguments, or the server could not be listed.`,
  "capture":
    `verity capture [--recipe N] [--out FILE [--ledger LEDGER]] [--timeout S] [--env K=V]... [--no-sandbox] [--offline] -- <command...>
verity capture [--recipe N] [--out FILE [--ledger LEDGER]] [--timeout S] --url URL [--header NAME=VALUE]...

Start an MCP server over stdio (or reach one over HTTP with --url), list every tool (following nextCursor to the
end) and write a manifest: each tool exactly as served, its contract hash
and recipe, the server's name and version, the command and the capture time.

Recipes (fields a contract hash covers; a missing field hashes as its default):
  1  name, description (""), inputSchema ({}), permissions ([])
  2  recipe 1 + outputSchema ({}), annotations ({})
  3  recipe 2 + title (""), execution ({})          (default)

Options:
  --recipe N      contract recipe: 1, 2 or 3 (default 3)
  --out FILE      write the manifest to FILE (atomically) instead of stdout
  --ledger FILE   append a "manifest" block (file name, SHA-256) to this
                  ledger and print the head (needs --out); check it later with
                  verity report verify FILE --ledger LEDGER --expected-head H
${LISTING_HELP}

Compare two manifests with verity diff.
Exit codes: 0 captured; 2 bad arguments, or the server could not be listed.`,
  "diff": `verity diff <a.json> <b.json> [--json] [--recipe N]

Compare two manifests (written by verity capture, or mcp-evidence-validator
declared manifests) tool by tool: every tool added, removed, or whose
contract hash moved, naming the fields that moved (description text,
schema paths, which annotation hints). Stored contract hashes are checked
against the declarations they claim to hash.

Manifests hashed under different recipes are not compared: that is reported
as recipe_mismatch (exit 2), never as drift.

Options:
  --json          print the comparison as JSON
  --recipe N      re-derive every contract hash on both sides under recipe N
                  from the declarations themselves (e.g. to compare a recipe-2
                  capture with a recipe-3 one)
  -h, --help      show this help

Exit codes: 0 identical; 1 drift found; 2 bad input or recipe_mismatch.`,
  "ledger": `verity ledger <validate|verify|head|recover> [options]

  verity ledger validate --declared F --observed F --out F [--head-out F] [--json] [--fail-on-findings]
      Judge observed tool-call records against a declaration (a verity
      manifest or an mcp-evidence-validator declared manifest):
        unknown_tool (high)       a tool the declaration does not carry
        scope_violation (high)    argument names outside the declared input schema
        recipe_mismatch (high)    the observed hash was made under another recipe
                                  (no recipe stated = recipe 1): comparison refused
        contract_mutated (medium) the contract moved since declaration
        unbound_annotation (low)  unchanged contract, but no annotation binds it
      Appends three blocks (declaration, observation_batch, report) to the
      ledger F (created if missing) and prints its head. Keep the head where
      the ledger's holder cannot edit it. Exit 0 when the report is produced
      (1 with --fail-on-findings and any finding); 2 on bad input.

  verity ledger verify --ledger F (--expected-head H | --expected-head-file F) [--json]
      Walk every block and report every problem (index, prev_hash, hash,
      head). Reads verity ledgers and mcp-evidence-validator 0.2/0.3 ledgers.
      Exit 0 intact and reaching the expected head; 1 refused; 2 without a
      head or on bad input.

  verity ledger head --ledger F
      Print the head the ledger's chain replays to (exit 1 when its own
      chain is broken). This vouches for nothing by itself: publish the head
      when you write the ledger, and verify against that.

  verity ledger recover [--runs-dir DIR]
      Finish what killed verity runs left in DIR (default runs): a report
      whose writer died before appending it gets its ledger block now
      (record.recovered = true); a report in no block and without the
      writer's marker is listed (exit 1); temporary files and verity-run-*
      scratch directories of dead processes are removed. verity run does
      the same before its battery.`,
  "run": `verity run <definition> [options]
verity run --audit [options] [--env K=V]... [--offline] -- <command...>

Run the conformance battery: control, once and twice sessions from a fresh
reset, concurrent attempts for tools that claim idempotence, and a verdict
for every (tool, test) pair with its evidence. <definition> is a fixture or
target name (looked up under fixtures/ then targets/) or a path to its
directory or .toml file.

With a command after -- and no definition, the server is audited as it is:
an empty scratch HOME, working directory and XDG directories, its tools
listed, arguments generated from each inputSchema; every tool is called once
(seeding by use: what a tool not declared read-only adds becomes the seed; a
call that removed or overwrote records is left out and noted), then the
battery runs from that seed with arguments derived from the values seen in
it and in earlier answers. The learned target (target.toml, its seed files,
learned.json with every argument's origin) is kept in the run's directory.
--env K=V gives the server a variable ({state} allowed); --offline refuses a
package runner's package that is not in verity's cache.

Options:
  --tool NAME|NAME[variant]   only this tool (repeatable)
  --runs N                    independent runs per session kind (default 3, at least 3)
  --jobs N                    sessions in parallel (default: number of cores)
  --concurrent-attempts N     concurrent attempts per mode (default 20)
  --observe-concurrent        also record concurrent attempts for tools without an idempotence claim
  --runs-dir DIR              where reports go (default runs/)
  --audit                     audit mode: no expectations, sandbox required, exit 0 whatever the verdicts
  --fail-on-violation         with --audit: exit 1 when any verdict is VIOLATION
  --fail-on-untested          with --audit: exit 1 when any falsifiable claim is untested (the
                              headline's "untested": errored calls, state not observed, tools
                              the definition does not exercise, ...)
  --no-sandbox                run the server without a sandbox (refused for audits unless given)
  --json                      print the report JSON instead of the text summary (no progress on stderr)
  --quiet                     no progress on stderr (warnings and errors still print)
  --html FILE                 also write the report as one self-contained HTML page
  --sarif FILE                also write it as SARIF 2.1.0 (GitHub code scanning)
  --junit FILE                also write it as JUnit XML (CI test reporters)
  --observed-out FILE         also write the observed records of every call (mcp-evidence-validator's
                              format: tool, arguments, contract hash, outcome, privilege use) for
                              verity ledger validate --observed FILE
  --recipe N                  contract recipe of those records: 1, 2 or 3 (default 3)
  -h, --help                  show this help

Exit codes: 0 every expectation matched (or an audit ran); 1 an expectation
not met, a violation with --fail-on-violation, an untested claim with
--fail-on-untested, or a server that never started
or died in every session (always, whatever the flags); 2 invalid definition
or arguments, or a tool the server does not list (before any tool is called).`,
  "report":
    `verity report <run-id|path> [--format text|json|html|sarif|junit|markdown] [--runs-dir DIR]
verity report verify <file> [--definition DIR] [--ledger LEDGER (--expected-head H | --expected-head-file F)]

Show a saved report, or verify one. <file> is an audit report
(report.json or report.json.gz), a reality report (verity reality --out) or
a capture manifest (verity capture --out).

verify re-derives the document from the raw evidence inside it (an audit
report: every declaration from the raw tools/list frames, every call
outcome from the raw response frames, every snapshot digest, every verdict
and the expectation check; a reality report: every verdict and the score; a
manifest: every contract hash) and names each field that differs. With
--ledger it also checks the ledger's chain against the head kept elsewhere
and that a block of it records this file's SHA-256: fields nothing can
re-derive (provenance, commands, timings, the raw evidence itself) are
covered only by that binding. See docs/evidence.md.

A report that keeps its seed state by reference (verity.report/3: a seed
every reset rebuilds exactly) is verified against the definition: its seed
is rebuilt from --definition DIR (default: the definition file the report
names, when it exists here), whose digest must be the report's, and must
hash to the seed digest the report names. Without the definition verify
checks nothing and exits 2 saying what it needs.

Exit: 0 verified; 1 a difference, a broken chain or no block for the file;
2 unreadable input or bad arguments (or a seed by reference and no
definition).

Options:
  --format FORMAT          text (default), json, html (one self-contained page),
                           sarif (SARIF 2.1.0, for code scanning), junit (JUnit XML) or
                           markdown (the headline and findings, for a CI job summary)
  --runs-dir DIR           where run ids are looked up (default runs/)
  --ledger FILE            the ledger the file was appended to
  --expected-head H        the ledger head published elsewhere (sha256:...)
  --expected-head-file F   read the head from a file
  --definition DIR         (verify) the definition a verity.report/3 seed is
                           rebuilt from
  -h, --help               show this help`,
  "attest":
    `verity attest <report|reality report|manifest> --key PRIVATE.pem [--ledger L (--expected-head H | --expected-head-file F)] [--definition F] [--out F]
verity attest verify <envelope> --key PUBLIC.pem [--report F [--definition DIR]] [--ledger L (--expected-head H | --expected-head-file F)]

attest re-derives the document first (as verity report verify does; with
--ledger, also binds it to the ledger head) and refuses to sign one that
does not verify. It writes a DSSE envelope (Ed25519) holding an in-toto
Statement v1: subject the file's name and SHA-256 (of the uncompressed
bytes); predicate urn:verity:evidence:v1: verity and verdict-rules versions,
definition digest, target pin and integrity (from --definition, whose
digest must match the report's), ledger block and head, summary counts.

attest verify checks the signature with the public key, offline. With
--report it also checks that the report is the statement's subject and
re-derives it; with --ledger and --expected-head, that the ledger verifies
against that head, records the report at the attested block and that the
attested head is that head: report, ledger, head and attestation in one
command.

Exit (verify): 0 verified; 1 bad signature, wrong key, wrong subject,
a report or ledger that does not verify; 2 unreadable input or bad arguments.

Options:
  --key FILE               PKCS#8 PEM private key (attest) or SPKI PEM public key (verify)
  --ledger FILE            the ledger the document was appended to
  --expected-head H        the ledger head published elsewhere
  --expected-head-file F   read the head from a file
  --definition FILE        (attest) the definition the report was run from, for the target pin;
                           (verify) the definition a verity.report/3 seed is rebuilt from
  --report FILE            (verify) the attested document
  --out FILE               (attest) write the envelope here (atomically) instead of stdout
  -h, --help               show this help`,
  "keygen": `verity keygen --out PREFIX [--inside-work-tree]

Write a new Ed25519 key pair: PREFIX.pem (the private key, PKCS#8 PEM, mode
0600) and PREFIX.pub.pem (the public key, SPKI PEM). Existing files are
never overwritten, and nothing is written inside a git work tree (a private
key there is one git add from being published) unless --inside-work-tree.
Keep the private key off the machines that hold the evidence; publish the
public key.

Exit: 0 written; 2 bad arguments, a file already exists, or a git work tree.

Options:
  --out PREFIX          where to write the two files
  --inside-work-tree    write them even inside a git work tree
  -h, --help            show this help`,
  "reality": `verity reality [options] -- <command...>
verity reality [options] <target>
verity reality [options] --url URL [--header NAME=VALUE]...

Call each tool with realistic arguments and check that a successful answer
is real: no disguised refusal (English, Chinese, Spanish, German or French
phrases), no error report returned as a success, no empty content,
structuredContent present and valid when an outputSchema is declared. With a
<target>, a tool its [[tools]] give arguments is called with every argument
set (each variant), and only the others with arguments generated from their
inputSchema; each call in the report says where its arguments came from. Echo mismatches are reported, never scored. An honest
isError: true, a JSON-RPC error or no answer is a failed call, reported
apart and never scored.

Only tools whose readOnlyHint is exactly true are called unless
--include-destructive is given. With a <target> (a name under fixtures/ or
targets/, a directory holding target.toml or fixture.toml, or the file) the
server runs sandboxed on a scratch reset of the definition's state, and
every write call gets a fresh server on a fresh reset of its own. The
-- <command...> form is sandboxed the same way (deno run commands under the
deno backend, others under bubblewrap) on scratch state directories, unless
--no-sandbox.

A remote server (--url) cannot be reset: only read-only tools are called
unless --include-destructive is given, which calls write tools against the
server's live state (with a warning).

Score = share of checkable tools not flagged, always shown with checked/total;
grade A >= 97, B >= 90, C >= 75, D >= 50, else F, and no grade at all when
fewer than half the tools were checked. Tools whose execution.taskSupport is
"required" are skipped (task protocol), never counted as failures.

Options:
  --include-destructive  also call tools not declared read-only
  --fail-under N         exit 1 when the score is below N (0-100), when
                         no tool was checkable, or when the score is
                         ungraded (under half the tools checked)
  --allow-low-coverage   with --fail-under: judge an ungraded score by its
                         percentage alone
  --seed N               seed for argument generation (default 1)
  --json                 print the full report as JSON
  --out FILE             also write the JSON report to FILE (atomically)
  --observed-out FILE    also write each call's observed record (tool,
                         arguments, contract hash, outcome, privilege use
                         the sandbox saw) for verity ledger validate
  --recipe N             contract recipe of those records (default 3)
  --ledger FILE          append a "reality" block (file name, SHA-256 of --out)
                         to this ledger and print the head (needs --out)
  --timeout S            seconds to wait for each answer (default 30; a
                         target's timeouts.call)
  --session-deadline S   seconds the shared session (listing and every
                         read-only call, restarts included) may take in all
                         (default 600); past it the remaining tools are not
                         called, the report says why (ended), exit 1
  --env K=V              environment variable for the server (repeatable;
                         command form only)
  --no-sandbox           run unsandboxed: a <target> still on scratch state,
                         a -- <command...> as given, against its live state
  --offline              -- npx ... (npm exec, pnpm dlx, bunx): the package
                         must be in verity's cache already (.verity/)
${REMOTE_HELP}
  -h, --help             show this help

Exit codes: 0 done; 1 score under --fail-under, or the run ended early
(the shared session's deadline passed); 2 bad arguments or definition, or
the server could not be listed.`,
  "verify-reset": `verity verify-reset <definition> [--json] [--keep]

Reset the definition's state twice into fresh directories, snapshot both
with its adapters, apply its masks, and require identical state. A reset
that is not reproducible makes every verdict RESET_UNVERIFIED.

<definition> is a directory holding fixture.toml or target.toml, a path to
a .toml file, or a name looked up under fixtures/ then targets/.

Options:
  --json          print the evidence as JSON
  --keep          keep the two state directories and print where they are
  -h, --help      show this help

Exit codes: 0 verified; 1 not verified (the differing records are named);
2 invalid definition or arguments.`,
  "census":
    `verity census <list.toml> [--out DIR] [--shard k/N] [--jobs J] [--prepare]
verity census prepare <list.toml> [--shard k/N] [--jobs J]
verity census merge <shard-dir>... --out DIR

Audit many published MCP servers from one list (a TOML file: name, then one
[[servers]] table each with package, exact version and optional bin, args,
env, backend, allow, timeout; see docs/census.md). For each server, sandboxed
and offline: the four hints of every tool read from the raw bytes (present,
absent or malformed, with the malformed kind), a recipe-3 capture manifest,
and a reality check on scratch state (score, checked/total). A server that
needs credentials, crashes, times out or cannot be listed is a result, never
an abort.

  census prepare   the only networked step: pin each package's registry
                   integrity, fetch and verify it as verity prepare does,
                   into the census cache (.verity/census/<list name>/)
  census           run the census (of one shard with --shard) into --out:
                   census.json, census.html, ledger.json, servers/<id>/
  census merge     combine every shard's directory into the directory the
                   unsharded census would have written (equal apart from
                   timing fields), carrying each shard's ledger head

Options:
  --out DIR            output directory, new or empty (default
                       runs/census-<list name>, or ...-shard-<k>-of-<N>)
  --shard k/N          only the servers of shard k of N (1 <= k <= N): a
                       partition by SHA-256 of each server's id, so it does
                       not depend on the list's order
  --jobs J             servers audited (or prepared) at once (default 1)
  --prepare            run census prepare first (needs the network)
  --cache DIR          the census cache (default .verity/census/<list name>)
  --seed N             reality argument seed (default 1)
  --read-only          reality-check only tools declared readOnlyHint: true
                       (default: every tool; each one not declared read-only
                       on a fresh server and fresh scratch state, sandboxed
                       and offline)
  --behavior           also give every listed server the battery of
                       verity run --audit (learned by use, no definition):
                       per tool verdicts with evidence digests, per server
                       the claims headline, servers/<id>/report.json and
                       target.toml; 1-5 minutes a server instead of seconds
  -h, --help           show this help

Exit codes: 0 the census was written (whatever the servers did); 2 invalid
list, shard spec or arguments, a non-empty --out, or shards that cannot be
merged (different lists or verity versions, missing or repeated shards) --
one line naming the file, key or value.`,
  "prepare": `verity prepare <target> [--update-lock]

<target> is a name under targets/ or a path to a directory holding
target.toml, anywhere (the "not prepared" message of verity run and verity
reality names the one to give). Fetch an audit target's pinned npm package (the only step that needs the
network) and make it runnable offline. A Deno target (command "{deno} run
... npm:<package>@<version>"):

  1. npm pack <package>@<version>: the tarball's sha512 must equal
     [source].integrity (skipped, with a note, when npm is not installed);
  2. deno cache into .verity/deno_dir with the target's lockfile
     (<target>/deno.lock, frozen; written on the first prepare): the
     integrity the lock records for the package must equal it too;
  3. the tarball is extracted to .verity/sources/<target>/package ({source});
  4. .verity/prepared.json records versions, hashes and every locked package.

A Node target (command "{node} {node_modules}/<package>/<script>"): npm pack
checks the tarball as in 1; npm ci installs exactly <target>/package-lock.json
(written on the first prepare) into .verity/node/<target> with install scripts
off; the lock must record the pinned integrity; install scripts (native
addons) then run under bubblewrap with no network (npm rebuild).

Any mismatch refuses and records nothing. <target> is a target name (looked
up under targets/) or a path. .verity/ is in the working directory.

Options:
  --update-lock   re-resolve dependencies and rewrite <target>/deno.lock
  -h, --help      show this help

Exit codes: 0 prepared; 2 invalid target, integrity mismatch, or a fetch
that failed (the message says which).`,
  "guard":
    `verity guard (--manifest M | --attestation E --key K [--report R]) --ledger L
             [--policy P] [--definition D] [--state DIR] [--env K=V]... [--pass-env NAME]...
             [--no-sandbox]
             -- <command...>

A stdio MCP proxy for a client to start in place of the server (verity init
--from-config F --server NAME --wrap rewrites a client's entry to do so). It
starts the server in the sandbox and passes every message through, except:
each tools/list answer is hashed tool by tool under the audit's recipe and
compared with the audited contract; a tool that drifted or was not audited is
left out and refused on tools/call (JSON-RPC error -32050 naming the drift),
or, under the policy drift = "warn", passed with a warning; each passed tool
carries the audit's verdicts and the evidence digest under
_meta["io.verity/verdicts"], and a hint the audit refuted is corrected (policy
correct_hints). notifications/tools/list_changed makes the guard list the
tools again itself. Every call is appended to the ledger as an observed record;
the head is printed on stderr at exit (verity ledger verify checks it,
verity ledger validate --observed L judges it).

Options:
  --manifest M         the audited contracts: a verity capture manifest
  --attestation E      a signed attestation (verity attest) of an audit report
                       or a manifest; the signature and subject are checked
  --key K              the attester's public key (SPKI PEM)
  --report R           the attested file (default: the subject's name beside E,
                       or that name with .gz)
  --ledger L           the ledger every call is appended to (required)
  --policy P           a policy file ([guard] drift = "refuse" | "warn",
                       correct_hints = true | false; default refuse and true)
  --definition D       the sandbox allowances of this target or fixture
                       (allow.sys, allow.run, read; default: none beyond the
                       zero-config sandbox)
  --state DIR          the directory the server may write, kept (default: a
                       scratch directory removed at exit)
  --env K=V            environment for the server (repeatable)
  --pass-env NAME      pass this variable of the guard's environment on (repeatable)
  --no-sandbox         run the command as given
  -h, --help           show this help

Exit codes: the server's exit status when it ends by itself; 0 when the client
closes the session; 1 when a frame passes 16 MiB; 130/143 on SIGINT/SIGTERM;
2 bad arguments, evidence, policy or ledger (one line naming the file and key).`,
  "login":
    `verity login <url> [--scope S] [--timeout S] [--client-id ID [--client-secret-env VAR | --client-key FILE]] [--client-metadata-url URL]

Sign in to a remote MCP server behind OAuth (the MCP authorization spec,
2025-11-25): discover its authorization server from the server's 401 and
its metadata, register (a pre-registered --client-id, else a client ID
metadata document where the server takes them, else dynamic registration),
then the authorization code flow with PKCE (S256) and a loopback redirect
on 127.0.0.1. verity prints the URL to open (and opens it with $BROWSER when
set) and waits for the browser to come back. The token (and its refresh
token) is kept in $XDG_CONFIG_HOME/verity/tokens.json (else
~/.config/verity/tokens.json), mode 0600, for tools, capture, reality and
init --url; it is never written to reports or the ledger.

Options:
  --scope S        the scopes to ask for (default: the server's challenge,
                   else its metadata's scopes_supported)
  --timeout S      seconds to wait for the sign-in and each answer (default 300)
  --client-id ID, --client-secret-env VAR, --client-key FILE,
  --client-metadata-url URL   as for the remote commands (verity tools --help)
  --header NAME=VALUE, --header-env NAME=VAR   extra headers, as there
  -h, --help       show this help

Exit codes: 0 signed in (or the server asked for no sign-in); 2 bad
arguments, or the sign-in failed (one line saying why).`,
  "init":
    `verity init <dir> [--name N] [--env K=V]... [--force] [--no-sandbox] -- <command...>
verity init <dir> --from-config <file> --server <name> [--name N] [--force] [--no-sandbox] [--header NAME=VALUE]...
verity init <dir> --url URL [--header NAME=VALUE]... [--name N] [--force]
verity init --from-config <file> --server <name> --wrap (--manifest M | --attestation E --key K)
            --ledger L [--policy P] [--report R] [--definition D] [--state DIR] [--no-sandbox]

Start an MCP server in the sandbox, list its tools, and write
<dir>/target.toml: its command, its [source] pin (npm servers), and one
[[tools]] entry per listed tool with its declared hints and input schema as
comments. Everything only a person can decide is a TODO(verity) value:
tool arguments, where state lives ([state], [[adapters]], seeds,
classification), paths outside the state directory, secrets. verity refuses
to load the file until no TODO(verity) value is left.

--from-config reads the server from an MCP client's configuration file:
"mcpServers" (Claude Desktop claude_desktop_config.json, Cursor mcp.json,
Claude Code .mcp.json) or "servers" / "mcp.servers" (VS Code, comments
allowed). An entry with a "url" is listed as --url would (its "headers" sent,
plus --header / --header-env).

An npm server (npx <pkg>, npm exec, pnpm dlx, bunx, deno run npm:<pkg>) is rewritten to run
under Deno from a pinned, prepared cache: init asks the registry for the
exact version and integrity (network) and prepares it as verity prepare does.

--wrap rewrites that server's entry in the file to start through verity guard
with the given options (paths made absolute; the entry's env names passed on
with --pass-env), its own command kept after --; the file as it was is kept
beside it as <file>.before-guard (the rewritten file is plain JSON, without
comments). An entry that already starts through the guard is refused.

--url lists a remote server's tools over Streamable HTTP. A remote server
cannot be reset, so it cannot be audited where it runs: the target.toml
written is for starting the same server locally (transport = "http", url on
a loopback {port}); its command is a TODO(verity) to fill in.

Options:
  --name N             the target's name (default: the config's server name, or <dir>'s name)
  --env K=V            environment for the server (repeatable; overrides the config's)
  --from-config FILE   read the server from an MCP client configuration file
  --server NAME        which server of that file
  --wrap               rewrite that entry to start through verity guard (see above)
  --force              overwrite an existing <dir>/target.toml
  --learn              with a command (or --from-config): write what an audit with no definition
                       learns instead of a template: state files found and their kinds, the seed
                       seeding by use made (seed/), the argument sets derived from it
                       (learned.json names each value's origin); no TODO(verity) left
  --no-sandbox         list the tools without a sandbox
  --timeout S          seconds to wait for each answer (default 30)
${REMOTE_HELP}
  -h, --help           show this help

Exit codes: 0 written; 2 bad arguments or configuration, or the server could
not be started or listed (the message says why).`,
} as const satisfies Record<string, string>;
