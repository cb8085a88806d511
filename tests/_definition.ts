/**
 * Definitions built in code, for tests and benchmarks that observe state
 * without loading a `fixture.toml`. Pure.
 *
 * @module
 */
import type { AdapterDef, Definition } from "../lib/definition/types.ts";

/**
 * A fixture definition in `dir` with these adapters and nothing else (no
 * tools, no sandbox, no source, command `true`); `extra` overrides any
 * field.
 */
export function bareDefinition(
  dir: string,
  adapters: AdapterDef[],
  extra: Partial<Definition> = {},
): Definition {
  return {
    kind: "fixture",
    file: `${dir}/fixture.toml`,
    dir,
    digest: "",
    name: "test",
    command: ["true"],
    env: {},
    timeouts: { start_s: 30, call_s: 30 },
    sandbox: null,
    read: [],
    cwd: null,
    allow: { sys: [], run: [] },
    locations: [],
    adapters,
    tools: [],
    source: null,
    ...extra,
  };
}

/** An adapter with no seed, no classification and no masks; `extra` overrides any field. */
export function adapterDef(
  kind: AdapterDef["kind"],
  label: string,
  extra: Partial<AdapterDef> = {},
): AdapterDef {
  return {
    kind,
    label,
    seed: null,
    business: [],
    append_only: [],
    mask: [],
    key: {},
    ...extra,
  };
}
