/**
 * `verity tools`: list a server's tools with their four hints, parsed from
 * the raw `tools/list` bytes.
 *
 * Requires `--allow-run` (the server) and `--allow-env`.
 *
 * @module
 */
import { parseCommandLine, parseSeconds } from "./args.ts";
import { HINT_NAMES } from "../contracts/contracts.ts";
import { openSession } from "../wire/session.ts";
import { listTools } from "../wire/list_tools.ts";
import { ServerError } from "../errors.ts";
import { listedServer, LISTING_OPTIONS, remoteClient } from "./remote.ts";
import { showControls, terminalJson } from "../common/show_controls.ts";

/** Run `verity tools`. */
export async function main(argv: string[]): Promise<number> {
  const p = parseCommandLine("tools", argv, {
    json: { type: "boolean" },
    ...LISTING_OPTIONS,
  }, false);
  const timeoutMs = parseSeconds("tools", "timeout", p.values.timeout, 30);
  const { remote, launched, command } = await listedServer("tools", p);
  const s = await openSession(
    launched === null ? remoteClient(remote) : launched.spec,
    { timeoutMs },
  );
  await s.client.close(1000);
  await launched?.dispose();
  if (s.failure) {
    throw new ServerError(
      `verity tools: ${
        remote?.shownUrl ?? command.join(" ")
      }: ${s.failure.message}`,
    );
  }
  const listing = listTools(s);
  if (p.values.json) {
    console.log(terminalJson(JSON.stringify(
      {
        tools: listing.contracts.map((c) => ({
          name: c.name,
          page: c.page,
          hints: Object.fromEntries(
            HINT_NAMES.map((h) => [h, c.hints[h].toJSON()]),
          ),
          hasOutputSchema: c.hasOutputSchema,
          problems: c.problems,
        })),
        pages: s.pages.length,
        problems: listing.problems,
      },
      null,
      2,
    )));
    return 0;
  }
  const rows = [[
    "tool",
    "readOnly",
    "destructive",
    "idempotent",
    "openWorld",
    "outputSchema",
  ]];
  for (const c of listing.contracts) {
    rows.push([
      showControls(c.name),
      ...HINT_NAMES.map((h) => {
        const x = c.hints[h];
        return x.state === "MALFORMED"
          ? `MALFORMED(${showControls(String(x.detail))})`
          : x.state;
      }),
      c.hasOutputSchema ? "yes" : "no",
    ]);
  }
  const widths = rows[0]!.map((_, i) =>
    Math.max(...rows.map((r) => (r[i] ?? "").length))
  );
  for (const r of rows) {
    console.log(r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd());
  }
  console.log(
    `\n${listing.contracts.length} tools on ${s.pages.length} page(s)`,
  );
  for (
    const pr of [
      ...listing.problems,
      ...listing.contracts.flatMap((c) =>
        c.problems.map((x) => `${c.name}: ${x}`)
      ),
    ]
  ) {
    console.log(`problem: ${showControls(pr)}`);
  }
  return 0;
}
