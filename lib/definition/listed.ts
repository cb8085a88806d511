/**
 * A definition against a server's listing: every tool and probe it names
 * must be one the server lists. Pure.
 *
 * @module
 */
import { DefinitionError } from "../errors.ts";
import { closestNames } from "../common/closest_names.ts";
import type { Definition } from "./types.ts";

/**
 * Refuse a definition naming a tool (or a probe) the server does not list
 * (exit 2), naming the file, the key and the closest listed names.
 *
 * @example
 * ```ts ignore
 * checkListed(def, ["read_graph", "search_nodes"]); // throws for tools[0].name = "search_node"
 * ```
 */
export function checkListed(
  def: Pick<Definition, "file" | "tools">,
  listed: readonly string[],
): void {
  const named = def.tools.flatMap((t, i) => [
    { key: `tools[${i}].name`, name: t.name },
    ...(t.probe ? [{ key: `tools[${i}].probe.name`, name: t.probe.name }] : []),
  ]);
  const bad = named.find((n) => !listed.includes(n.name));
  if (bad === undefined) return;
  const near = closestNames(bad.name, listed);
  throw new DefinitionError(
    def.file,
    bad.key,
    `the server does not list a tool named ${JSON.stringify(bad.name)}; ${
      near.length ? `closest listed: ${near.join(", ")}` : "it lists no tools"
    }`,
  );
}
