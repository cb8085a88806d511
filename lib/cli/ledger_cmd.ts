/**
 * `verity ledger`: validate declared against observed records into a
 * hash-chained ledger, verify a ledger against a head kept elsewhere, print
 * a ledger's head.
 *
 * Requires `--allow-read`, and `--allow-write` for `validate`.
 *
 * @module
 */
import { COMMAND_HELP } from "./help.ts";
import { basename } from "node:path";
import { didYouMean, parseCommandLine } from "./args.ts";
import { EvidenceError, UsageError } from "../errors.ts";
import { isPlainObject } from "../common/is_plain_object.ts";
import { LEDGER_NAME } from "../evidence/chain.ts";
import { prettyJson } from "../evidence/canonical.ts";
import { resolveHead } from "./_verify_document.ts";
import { readObservations, validateObservations } from "../evidence/checks.ts";
import { readJsonDocument } from "../evidence/files.ts";
import {
  appendBlocks,
  verifyLedger,
  verifyLedgerFile,
} from "../evidence/ledger.ts";
import { writeTextFileAtomic } from "../evidence/atomic_write.ts";
import { cleanScratch, recoverRuns } from "./_recover.ts";
import { readDeclaration } from "../evidence/manifest.ts";

function str(
  p: ReturnType<typeof parseCommandLine>,
  k: string,
  cmd: string,
  required: boolean,
): string | undefined {
  const v = p.values[k];
  if (v === undefined) {
    if (required) {
      throw new UsageError(
        `verity ledger ${cmd}: --${k} is required (see verity ledger --help)`,
      );
    }
    return undefined;
  }
  if (typeof v !== "string" || v === "") {
    throw new UsageError(`verity ledger ${cmd}: --${k} expects a value`);
  }
  return v;
}

function noExtra(p: ReturnType<typeof parseCommandLine>, cmd: string): void {
  if (p.positionals.length > 0) {
    throw new UsageError(
      `verity ledger ${cmd}: unexpected argument ${
        JSON.stringify(p.positionals[0])
      }`,
    );
  }
  if (p.serverCommand !== null) {
    throw new UsageError(
      `verity ledger ${cmd}: does not take a server command`,
    );
  }
}

/**
 * The observed records of a ledger `verity guard` wrote (its `observation`
 * blocks, the chain checked first); any other document as it is.
 */
function guardObservations(doc: unknown, path: string): unknown {
  if (!isPlainObject(doc) || doc.ledger !== LEDGER_NAME) return doc;
  const v = verifyLedger(doc, "");
  const problems = v.problems.filter((x) => x.kind !== "head");
  if (problems.length > 0 || v.head === null) {
    throw new EvidenceError(
      `${path}: the ledger's own chain does not verify (${problems.length} problem(s); first: ${
        problems[0]?.message ?? "no head"
      })`,
    );
  }
  const blocks = doc.blocks as { type: string; record: unknown }[];
  return {
    head: v.head,
    observations: blocks.filter((b) => b.type === "observation").map((b) =>
      b.record
    ),
  };
}

async function validate(argv: string[]): Promise<number> {
  const p = parseCommandLine("ledger validate", argv, {
    declared: { type: "string" },
    observed: { type: "string" },
    out: { type: "string" },
    "head-out": { type: "string" },
    json: { type: "boolean" },
    "fail-on-findings": { type: "boolean" },
  });
  noExtra(p, "validate");
  const declaredPath = str(p, "declared", "validate", true)!;
  const observedPath = str(p, "observed", "validate", true)!;
  const out = str(p, "out", "validate", true)!;
  const headOut = str(p, "head-out", "validate", false);
  const dDoc = await readJsonDocument(declaredPath, { digest: true });
  const oDoc = await readJsonDocument(observedPath, { digest: true });
  const declared = readDeclaration(dDoc.value, declaredPath);
  const oValue = guardObservations(oDoc.value, observedPath);
  const observed = readObservations(oValue, observedPath);
  if (!declared.recipeStated) {
    console.error(
      `note: ${declaredPath} states no contract_recipe: its contracts are hashed under recipe 1 (the legacy default)`,
    );
  }
  const report = validateObservations(declared, observed);
  const appended = await appendBlocks(out, [
    {
      type: "declaration",
      record: {
        file: basename(declaredPath),
        sha256: dDoc.sha256,
        document: dDoc.value,
      },
    },
    {
      type: "observation_batch",
      record: {
        file: basename(observedPath),
        sha256: oDoc.sha256,
        document: oValue,
      },
    },
    { type: "report", record: report },
  ]);
  if (headOut !== undefined) {
    try {
      await writeTextFileAtomic(headOut, appended.head + "\n");
    } catch (e) {
      throw new UsageError(
        `verity ledger validate: --head-out ${headOut}: cannot write: ${
          (e as Error).message
        }`,
      );
    }
  }
  if (p.values.json) {
    console.log(
      prettyJson({
        ...report,
        ledger: {
          path: out,
          blocks: appended.first + appended.count,
          head: appended.head,
        },
      }),
    );
  } else {
    const s = report.summary;
    console.log(
      `declared: ${declaredPath} (${s.declared_tools} tools)   observed: ${observedPath} (${s.observations} observations)`,
    );
    console.log(
      `findings: ${s.findings} (high ${s.by_severity.high}, medium ${s.by_severity.medium}, low ${s.by_severity.low})`,
    );
    for (const f of report.findings) {
      console.log(
        `  #${f.observation_index} ${f.tool}: ${f.check} (${f.severity}): ${f.detail}`,
      );
      if (f.declared_contract && f.observed_contract) {
        console.log(
          `      declared ${f.declared_contract}\n      observed ${f.observed_contract}`,
        );
      }
    }
    console.log(
      `bound, unmutated: ${s.bound_unmutated} observation(s) (an annotation binds the contract observed; no finding)`,
    );
    console.log(`contract recipes: ${s.contract_recipes.join(", ")}`);
    console.log(
      `ledger: ${out} (+${appended.count} blocks, ${
        appended.first + appended.count
      } in all)`,
    );
    console.log(`head: ${appended.head}`);
  }
  return p.values["fail-on-findings"] && report.findings.length > 0 ? 1 : 0;
}

async function verify(argv: string[]): Promise<number> {
  const p = parseCommandLine("ledger verify", argv, {
    ledger: { type: "string" },
    "expected-head": { type: "string" },
    "expected-head-file": { type: "string" },
    json: { type: "boolean" },
  });
  noExtra(p, "verify");
  const path = str(p, "ledger", "verify", true)!;
  const head = await resolveHead(
    "verity ledger verify",
    str(p, "expected-head", "verify", false) ?? null,
    str(p, "expected-head-file", "verify", false) ?? null,
  );
  // verity's own layout is walked as a stream (any size); another layout
  // is parsed strictly, every problem reported.
  const { recipes, ...v } = await verifyLedgerFile(path, head);
  if (p.values.json) {
    console.log(
      prettyJson({ ...v, expected_head: head, contract_recipes: recipes }),
    );
    return v.ok ? 0 : 1;
  }
  if (v.ok) {
    console.log(
      `ledger intact: ${v.blocks} blocks, chain verified against the expected head`,
    );
  } else {
    console.log(
      `ledger REFUSED: ${v.blocks} blocks, ${v.problems.length} problem(s)`,
    );
    const shown = 50;
    for (const pr of v.problems.slice(0, shown)) {
      console.log(`  ${pr.kind}: ${pr.message}`);
    }
    if (v.problems.length > shown) {
      console.log(
        `  ... and ${v.problems.length - shown} more (--json lists every one)`,
      );
    }
  }
  console.log(
    `format: ${v.format.ledger} ${v.format.version}\nblock types: ${
      JSON.stringify(v.types)
    }\ncontract recipes: ${
      recipes.length > 0 ? recipes.join(", ") : "(none stated)"
    }`,
  );
  return v.ok ? 0 : 1;
}

async function head(argv: string[]): Promise<number> {
  const p = parseCommandLine("ledger head", argv, {
    ledger: { type: "string" },
  });
  noExtra(p, "head");
  const path = str(p, "ledger", "head", true)!;
  const v = await verifyLedgerFile(path, null);
  if (!v.ok || v.head === null) {
    console.error(
      `${path}: the ledger's own chain is broken (${v.problems.length} problem(s)):`,
    );
    for (const pr of v.problems) console.error(`  ${pr.kind}: ${pr.message}`);
    return 1;
  }
  console.log(v.head);
  return 0;
}

async function recover(argv: string[]): Promise<number> {
  const p = parseCommandLine("ledger recover", argv, {
    "runs-dir": { type: "string" },
  });
  noExtra(p, "recover");
  const runsDir = str(p, "runs-dir", "recover", false) ?? "runs";
  const cleaned = await cleanScratch();
  const r = await recoverRuns(runsDir);
  for (const id of r.recovered) console.log(`recovered: ${id}`);
  for (const id of r.unrecorded) {
    console.log(`unrecorded (no marker; not appended): ${id}`);
  }
  console.log(
    `${r.recovered.length} recovered, ${r.unrecorded.length} unrecorded, ${r.removedTemp} temporary file(s) and ${cleaned} scratch director(ies) of dead runs removed`,
  );
  return r.unrecorded.length > 0 ? 1 : 0;
}

const SUBCOMMANDS: Record<string, (argv: string[]) => Promise<number>> = {
  validate,
  verify,
  head,
  recover,
};

/** Run `verity ledger`. */
export async function main(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== undefined && Object.hasOwn(SUBCOMMANDS, sub)) {
    return await SUBCOMMANDS[sub]!(rest);
  }
  if (sub === undefined || ["-h", "--help", "help"].includes(sub)) {
    console.log(COMMAND_HELP.ledger);
    return sub === undefined ? 2 : 0;
  }
  throw new UsageError(
    `verity ledger: unknown subcommand ${JSON.stringify(sub)}${
      didYouMean(sub, Object.keys(SUBCOMMANDS))
    } (validate, verify, head or recover)`,
  );
}
