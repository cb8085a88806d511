/**
 * The tools an opened session listed: the verbatim text of every
 * `tools/list` page and the contracts parsed from those bytes. The one place
 * commands turn a session's listing into contracts.
 *
 * @module
 */
import { type ParsedListing, parseToolPages } from "../contracts/contracts.ts";
import type { OpenedSession } from "./session.ts";

/** A session's listing: the pages as received and what they declare. */
export interface ListedTools extends ParsedListing {
  /** The text of each `tools/list` response frame, in order ("" when a frame was not text). */
  pageTexts: string[];
}

/**
 * The text of every `tools/list` page of a session and the contracts they
 * declare (hints read from the raw bytes). Pure over the session's frames.
 *
 * @example
 * ```ts ignore
 * const s = await openSession(spec);
 * const { contracts, problems } = listTools(s);
 * ```
 */
export function listTools(
  session: Pick<OpenedSession, "pages" | "client">,
): ListedTools {
  const pageTexts = listedPageTexts(session);
  return { ...parseToolPages(pageTexts), pageTexts };
}

/**
 * The text of every `tools/list` page of a session, unparsed: for callers
 * that parse the pages themselves (a manifest), so no page is read twice.
 *
 * @example
 * ```ts ignore
 * const s = await openSession(spec);
 * const texts = listedPageTexts(s);
 * ```
 */
export function listedPageTexts(
  session: Pick<OpenedSession, "pages" | "client">,
): string[] {
  return session.pages.map((pg) =>
    session.client.frames[pg.frameIndex]?.text ?? ""
  );
}
