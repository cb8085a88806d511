/**
 * Capture a live server's declarations as a manifest: open a session,
 * list every tool page, hash each tool under a recipe.
 *
 * Requires `--allow-run` (the server).
 *
 * @module
 */
import { ServerError } from "../errors.ts";
import { type OpenedSession, openSession } from "../wire/session.ts";
import { listedPageTexts } from "../wire/list_tools.ts";
import type { SpawnSpec } from "../wire/stdio_client.ts";
import type { McpClient } from "../wire/client.ts";

/** A started client (e.g. over HTTP) and what the manifest records as its command. */
export interface ClientSource {
  client: McpClient;
  /** Shown in the manifest's `command` and in errors (secrets already redacted). */
  shownAs: string[];
}
import { buildManifest, type Manifest } from "./manifest.ts";
import type { Recipe } from "./recipes.ts";

/** Options for {@linkcode captureManifest}. */
export interface CaptureOptions {
  /** The recipe to hash under. */
  recipe: Recipe;
  /**
   * The command recorded in the manifest and in messages (the user's, not
   * the sandbox's wrapping of it).
   * @default {spec.command, or the client's shownAs}
   */
  command?: string[];
  /**
   * Timeout for each request, in milliseconds.
   * @default {30000}
   */
  timeoutMs?: number;
}

/**
 * Start the server, list its tools and return the manifest. Throws
 * {@linkcode ServerError} (exit 2) when the server cannot be listed.
 *
 * @example
 * ```ts ignore
 * const m = await captureManifest({ command: ["deno", "run", "server.ts"], env }, { recipe: "3" });
 * ```
 */
export async function captureManifest(
  spec: SpawnSpec | ClientSource,
  options: CaptureOptions,
): Promise<Manifest> {
  const shown = options.command ??
    ("client" in spec ? spec.shownAs : spec.command);
  const s = await openSession("client" in spec ? spec.client : spec, {
    timeoutMs: options.timeoutMs ?? 30_000,
  });
  const capturedAt = new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
  await s.client.close(1000);
  if (s.failure) {
    throw new ServerError(
      `verity capture: ${shown.join(" ")}: ${s.failure.message}`,
    );
  }
  return manifestOfSession(s, {
    command: shown,
    capturedAt,
    recipe: options.recipe,
  });
}

/**
 * The manifest of a session already opened (and listed) without failure:
 * its `tools/list` pages, `serverInfo` and protocol version.
 *
 * @example
 * ```ts ignore
 * const s = await openSession(spec);
 * const m = manifestOfSession(s, { command: ["x"], capturedAt: "2026-01-01T00:00:00Z", recipe: "3" });
 * ```
 */
export function manifestOfSession(
  s: Pick<OpenedSession, "client" | "initializeFrame" | "serverInfo" | "pages">,
  options: { command: readonly string[]; capturedAt: string; recipe: Recipe },
): Manifest {
  let protocolVersion: string | null = null;
  const initText = s.initializeFrame === null
    ? undefined
    : s.client.frames[s.initializeFrame]?.text;
  if (initText !== undefined) {
    try {
      const v = JSON.parse(initText)?.result?.protocolVersion;
      if (typeof v === "string") protocolVersion = v;
    } catch {
      // the session opened, so the frame parsed once already
    }
  }
  return buildManifest({
    pageTexts: listedPageTexts(s),
    serverInfo: s.serverInfo,
    protocolVersion,
    command: options.command,
    capturedAt: options.capturedAt,
    recipe: options.recipe,
  });
}
