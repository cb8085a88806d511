/**
 * verity: checks whether an MCP server does what it declares.
 *
 * A thin command table; each command is loaded lazily, and
 * `verity <command> --help` prints the command's text from lib/cli/help.ts
 * without loading the command at all. One top-level catch
 * maps errors to exit codes: 2 for bad input, never a stack trace unless
 * `--debug`.
 *
 * @module
 */
import { InputError, UsageError } from "./lib/errors.ts";
import { VERSION } from "./lib/version.ts";
import { didYouMean, HelpRequested } from "./lib/cli/args.ts";
import { COMMAND_HELP } from "./lib/cli/help.ts";
import { terminalText } from "./lib/common/show_controls.ts";

interface Command {
  summary: string;
  load: () => Promise<{ main: (argv: string[]) => Promise<number> }>;
  /** Internal commands are not listed in help. */
  internal?: boolean;
  /** The command handles SIGINT and SIGTERM itself (it must finish its ledger). */
  ownsSignals?: boolean;
}

const COMMANDS: Record<string, Command> = {
  tools: {
    summary: "list a server's tools and their hints, read from the raw bytes",
    load: () => import("./lib/cli/tools_cmd.ts"),
  },
  capture: {
    summary:
      "record a live server's declarations and contract hashes as a manifest",
    load: () => import("./lib/cli/capture_cmd.ts"),
  },
  diff: {
    summary: "compare two manifests: tools added, removed, contracts moved",
    load: () => import("./lib/cli/diff_cmd.ts"),
  },
  ledger: {
    summary:
      "declared-vs-observed checks into a hash-chained ledger; verify a ledger",
    load: () => import("./lib/cli/ledger_cmd.ts"),
  },
  run: {
    summary: "run the conformance battery on a fixture or audit target",
    load: () => import("./lib/cli/run_cmd.ts"),
  },
  report: {
    summary: "show a saved report, or re-derive and verify one",
    load: () => import("./lib/cli/report_cmd.ts"),
  },
  attest: {
    summary:
      "sign an in-toto statement about a verified report; verify one offline",
    load: () => import("./lib/cli/attest_cmd.ts"),
  },
  keygen: {
    summary: "write a new Ed25519 key pair for verity attest",
    load: () => import("./lib/cli/keygen_cmd.ts"),
  },
  reality: {
    summary:
      "check that successful calls return real answers (refusal, empty, outputSchema)",
    load: () => import("./lib/cli/reality_cmd.ts"),
  },
  "verify-reset": {
    summary: "reset a definition's state twice and require identical snapshots",
    load: () => import("./lib/cli/verify_reset_cmd.ts"),
  },
  prepare: {
    summary:
      "fetch an audit target's pinned package, verify it, cache it offline",
    load: () => import("./lib/cli/prepare_cmd.ts"),
  },
  census: {
    summary:
      "audit many published servers from a list, in shards; merge the shards",
    load: () => import("./lib/cli/census_cmd.ts"),
  },
  login: {
    summary: "sign in to a remote server behind OAuth; keep the token (0600)",
    load: () => import("./lib/cli/login_cmd.ts"),
  },
  init: {
    summary:
      "start a server, list its tools, write a starting target.toml with TODOs",
    load: () => import("./lib/cli/init_cmd.ts"),
  },
  guard: {
    summary:
      "a stdio proxy that holds a live server to its audit, and records every call",
    load: () => import("./lib/cli/guard_cmd.ts"),
    ownsSignals: true,
  },
  __overlap: {
    summary: "internal: the out-of-process overlap timer",
    load: () => import("./lib/runner/overlap_timer.ts"),
    internal: true,
  },
};

const USAGE = `verity ${VERSION}: check that an MCP server does what it declares

Usage: verity <command> [options]

Commands:
${
  Object.entries(COMMANDS).filter(([, c]) => !c.internal).map(([n, c]) =>
    `  ${n.padEnd(14)} ${c.summary}`
  ).join("\n")
}

Run verity <command> --help for a command's options.
Global: --version, --help, --debug (show stack traces).`;

async function run(argv: string[]): Promise<number> {
  const debug = argv.includes("--debug");
  const args = argv.filter((a, i) =>
    a !== "--debug" || argv.indexOf("--") !== -1 && i > argv.indexOf("--")
  );
  const [name, ...rest] = args;
  if (
    name === undefined || name === "--help" || name === "-h" || name === "help"
  ) {
    console.log(USAGE);
    return name === undefined ? 2 : 0;
  }
  if (name === "--version" || name === "-V") {
    console.log(`verity ${VERSION}`);
    return 0;
  }
  const cmd = COMMANDS[name];
  // `verity <command> --help` alone: the text, without loading the command.
  if (
    rest.length === 1 && (rest[0] === "--help" || rest[0] === "-h") &&
    Object.hasOwn(COMMAND_HELP, name)
  ) {
    console.log(COMMAND_HELP[name as keyof typeof COMMAND_HELP]);
    return 0;
  }
  try {
    if (!cmd) {
      throw new UsageError(
        `verity: unknown command ${JSON.stringify(name)}${
          didYouMean(
            name,
            Object.keys(COMMANDS).filter((c) => !c.startsWith("_")),
          )
        } (see verity --help)`,
      );
    }
    const mod = await cmd.load();
    return await mod.main(rest);
  } catch (e) {
    if (e instanceof HelpRequested && Object.hasOwn(COMMAND_HELP, name)) {
      console.log(COMMAND_HELP[name as keyof typeof COMMAND_HELP]);
      return 0;
    }
    if (debug) console.error(e);
    if (e instanceof InputError) {
      // Messages quote what servers and definitions said: no raw controls.
      console.error(terminalText(e.message));
      return 2;
    }
    console.error(
      `verity: internal error: ${
        terminalText(e instanceof Error ? e.message : String(e))
      }${debug ? "" : " (rerun with --debug for details)"}`,
    );
    return 3;
  }
}

/**
 * On SIGINT or SIGTERM, kill every server process group still running and
 * exit: an interrupted audit leaves no untrusted server behind, and reports
 * are only ever renamed into place whole, so none is half-written.
 */
async function onInterrupt(signal: Deno.Signal, code: number): Promise<void> {
  const { killAllGroups } = await import("./lib/wire/process_group.ts");
  const n = killAllGroups();
  const { stopAllClusters } = await import("./lib/state_io/postgres_live.ts");
  stopAllClusters();
  console.error(
    `verity: interrupted by ${signal}${
      n ? `; stopped ${n} server process group(s)` : ""
    }`,
  );
  Deno.exit(code);
}

if (import.meta.main) {
  const name = Deno.args.find((a) => a !== "--debug") ?? "";
  const own = COMMANDS[name]?.ownsSignals === true;
  for (
    const [signal, code] of own
      ? []
      : [["SIGINT", 130], ["SIGTERM", 143]] as const
  ) {
    Deno.addSignalListener(signal, () => void onInterrupt(signal, code));
  }
  const code = await run(Deno.args);
  Deno.exit(code);
}

export { COMMANDS, run };
