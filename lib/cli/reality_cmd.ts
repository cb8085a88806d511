/**
 * `verity reality`: do successful calls return real answers?
 *
 * Requires `--allow-run` (the server), `--allow-env`, and `--allow-write`
 * for `--out`.
 *
 * @module
 */
import {
  gateMessage,
  parseCommandLine,
  parseEnvPairs,
  parseSeconds,
  parseSeed,
  requireServerCommand,
} from "./args.ts";
import { InputError, UsageError } from "../errors.ts";
import { writeDocument } from "./_ledger.ts";
import { DEFAULT_SEED } from "../reality/prng.ts";
import { renderRealityText } from "../reality/render.ts";
import type { RealityReport } from "../reality/report.ts";
import {
  DEFAULT_SESSION_DEADLINE_MS,
  type LaunchedServer,
  type RealityCallRecord,
  type RealityObserver,
  runReality,
  type ServerLauncher,
} from "../reality/runner.ts";
import { missesThreshold } from "../reality/score.ts";
import { type CallToRecord, recordCalls } from "../report/observed.ts";
import { observedOptions, writeObservedDoc } from "./_observed.ts";
import { isPlainObject } from "../common/is_plain_object.ts";
import { launchCommand, type LaunchedCommand } from "../launcher/command.ts";
import {
  parseRemote,
  refuseWithUrl,
  REMOTE_OPTIONS,
  remoteClient,
} from "./remote.ts";
import { terminalJson, terminalText } from "../common/show_controls.ts";

function parseFailUnder(v: unknown): number | null {
  if (v === undefined) return null;
  const n = Number(v);
  if (
    typeof v !== "string" || v.trim() === "" || !Number.isFinite(n) || n < 0 ||
    n > 100
  ) {
    throw new UsageError(
      `verity reality: --fail-under expects a number from 0 to 100, got ${
        JSON.stringify(v)
      }`,
    );
  }
  return n;
}

/** Collects the listing and every call for `--observed-out`. */
class ObservedCalls implements RealityObserver {
  pages: string[] = [];
  serverInfo: unknown = null;
  calls: CallToRecord[] = [];
  listing(pageTexts: string[], serverInfo: unknown): void {
    this.pages = pageTexts;
    this.serverInfo = serverInfo;
  }
  call(r: RealityCallRecord): void {
    const o = r.observation;
    this.calls.push({
      tool: r.tool,
      args: r.arguments,
      outcome: o.kind === "rpc_error"
        ? "protocol_error"
        : o.kind === "no_answer"
        ? "unknown"
        : isPlainObject(o.result) && o.result.isError === true
        ? "tool_error"
        : "ok",
      session: r.session,
      call: 1,
      variant: r.argumentsFrom.kind === "definition"
        ? r.argumentsFrom.variant
        : null,
      privilege: r.privilege,
    });
  }
}

/** Run `verity reality`. */
export async function main(argv: string[]): Promise<number> {
  const p = parseCommandLine("reality", argv, {
    "include-destructive": { type: "boolean" },
    "fail-under": { type: "string" },
    "allow-low-coverage": { type: "boolean" },
    seed: { type: "string" },
    json: { type: "boolean" },
    out: { type: "string" },
    "observed-out": { type: "string" },
    recipe: { type: "string" },
    ledger: { type: "string" },
    timeout: { type: "string" },
    "session-deadline": { type: "string" },
    env: { type: "string", multiple: true },
    "no-sandbox": { type: "boolean" },
    offline: { type: "boolean" },
    ...REMOTE_OPTIONS,
  });
  const failUnder = parseFailUnder(p.values["fail-under"]);
  const seed = parseSeed("reality", p.values.seed, DEFAULT_SEED);
  const timeoutMs = parseSeconds("reality", "timeout", p.values.timeout, 30);
  const sessionDeadlineMs = parseSeconds(
    "reality",
    "session-deadline",
    p.values["session-deadline"],
    DEFAULT_SESSION_DEADLINE_MS / 1000,
  );
  const includeDestructive = p.values["include-destructive"] === true;
  const out = typeof p.values.out === "string" ? p.values.out : null;
  const ledger = typeof p.values.ledger === "string" ? p.values.ledger : null;
  if (ledger !== null && out === null) {
    throw new UsageError(
      "verity reality: --ledger needs --out (the ledger records the written file)",
    );
  }

  const observedOut = observedOptions("reality", p.values);
  const seen = observedOut === null ? null : new ObservedCalls();
  const common = {
    seed,
    includeDestructive,
    timeoutMs,
    sessionDeadlineMs,
    ...(seen === null ? {} : { observer: seen }),
  };
  // An input error about the server, named by how it was given.
  const about = (shown: string) => (e: unknown): never => {
    throw e instanceof InputError
      ? new UsageError(`verity reality: ${shown}: ${e.message}`)
      : e;
  };
  let report: RealityReport;
  const remote = parseRemote("reality", p);
  if (remote !== null) {
    refuseWithUrl("reality", p, ["env", "no-sandbox", "offline"]);
    if (includeDestructive) {
      console.error(
        `verity reality: warning: --include-destructive on a remote server calls its write tools for real, against its live state (${remote.shownUrl}); it cannot be reset`,
      );
    }
    const launcher: ServerLauncher = {
      launch: () =>
        Promise.resolve({
          spec: remoteClient(remote),
          dispose: () => Promise.resolve(),
        }),
    };
    report = await runReality(launcher, {
      ...common,
      server: {
        command: [remote.shownUrl],
        target: null,
        sandbox: "none",
        scratchState: false,
      },
    }).catch(about(remote.shownUrl));
  } else if (p.serverCommand !== null) {
    if (p.positionals.length > 0) {
      throw new UsageError(
        `verity reality: give either a <target> or -- <command...>, not both (got ${
          JSON.stringify(p.positionals[0])
        })`,
      );
    }
    const command = requireServerCommand("reality", p);
    const env = parseEnvPairs("reality", p.values.env);
    const noSandbox = p.values["no-sandbox"] === true;
    if (includeDestructive && noSandbox) {
      console.error(
        "verity reality: warning: --include-destructive with --no-sandbox calls write tools for real, unsandboxed, against the server's live state",
      );
    }
    const options = {
      noSandbox,
      commandName: "verity reality",
      offline: p.values.offline === true,
    };
    // Refuse early (one line, exit 2) when the sandbox cannot run it.
    const first = await launchCommand(command, env, options);
    let spare: LaunchedCommand | null = first;
    const launcher: ServerLauncher = {
      async launch(): Promise<LaunchedServer> {
        const l = spare ?? await launchCommand(command, env, options);
        spare = null;
        return {
          spec: l.spec,
          ...(l.launch ? { launch: l.launch } : {}),
          dispose: l.dispose,
        };
      },
    };
    report = await runReality(launcher, {
      ...common,
      isolateWrites: !noSandbox,
      server: {
        command,
        target: null,
        sandbox: first.backend,
        scratchState: !noSandbox,
      },
    }).finally(() => spare?.dispose()).catch(about(command.join(" ")));
  } else {
    if (p.positionals.length !== 1) {
      throw new UsageError(
        p.positionals.length === 0
          ? "verity reality: missing server: give a <target> or -- <command...> (see verity reality --help)"
          : `verity reality: expected one <target>, got ${p.positionals.length}: ${
            p.positionals.join(" ")
          }`,
      );
    }
    if (p.values.env !== undefined) {
      throw new UsageError(
        "verity reality: --env applies to the -- <command...> form; a target declares its environment",
      );
    }
    const { runTargetReality } = await import("../reality/target.ts");
    report = await runTargetReality(p.positionals[0]!, {
      ...common,
      timeoutMs: p.values.timeout === undefined ? null : timeoutMs,
      noSandbox: p.values["no-sandbox"] === true,
    }).catch((e) => {
      throw e instanceof InputError && !e.message.startsWith("verity reality:")
        ? new UsageError(`verity reality: ${e.message}`)
        : e;
    });
  }

  const json = JSON.stringify(report, null, 2);
  if (out !== null) {
    await writeDocument("reality", "reality", out, json + "\n", ledger);
  }
  if (observedOut !== null && seen !== null) {
    await writeObservedDoc(
      observedOut,
      recordCalls(seen.pages, seen.serverInfo, seen.calls, observedOut.recipe, {
        runId: `reality-seed-${seed}`,
        definition: report.server.definition?.name ??
          (report.server.command ?? []).join(" "),
        backend: report.server.sandbox,
      }),
    );
  }
  console.log(
    p.values.json
      ? terminalJson(json)
      : terminalText(renderRealityText(report)),
  );
  if (report.ended) {
    // Some planned calls were never made: never a clean exit.
    console.error(terminalText(`verity reality: ended early: ${report.ended}`));
    return 1;
  }
  const allowLow = p.values["allow-low-coverage"] === true;
  if (
    failUnder !== null && missesThreshold(report.summary, failUnder, allowLow)
  ) {
    const s = report.summary;
    const why = s.score === null
      ? "no score: no tool was checkable"
      : s.lowCoverage && !allowLow
      ? `score ${s.score}% is ungraded: ${s.checkable}/${s.tools} tools checked, under half (--allow-low-coverage accepts it)`
      : `score ${s.score}% is under ${failUnder}`;
    console.error(
      terminalText(gateMessage("reality", `--fail-under ${failUnder}`, why)),
    );
    return 1;
  }
  return 0;
}
