/**
 * A fixture turned into an audit target for end-to-end tests (audits
 * refuse fixtures): a copy inside the checkout (the servers import through
 * deno.json and `fixtures/_shared/`) with `[fixture]` renamed `[target]`
 * and every expected verdict dropped. Test-only.
 *
 * @module
 */
const ROOT = new URL("..", import.meta.url).pathname;

/** The target's directory and a way to remove it. */
export interface FixtureTarget {
  dir: string;
  cleanup(): Promise<void>;
}

/** Copy `fixtures/<name>` (its server, seed and shared helpers) as a target. */
export async function fixtureAsTarget(
  name: string,
  files: readonly string[] = ["server.ts", "seed.sql"],
): Promise<FixtureTarget> {
  await Deno.mkdir(`${ROOT}.verity`, { recursive: true });
  const scratch = await Deno.makeTempDir({
    dir: `${ROOT}.verity`,
    prefix: "fixture-target-",
  });
  await Deno.chmod(scratch, 0o755); // as root the server runs as uid 65534
  const dir = `${scratch}/${name}-target`;
  await Deno.mkdir(dir);
  await Deno.mkdir(`${scratch}/_shared`);
  for await (const e of Deno.readDir(`${ROOT}fixtures/_shared`)) {
    if (e.isFile) {
      await Deno.copyFile(
        `${ROOT}fixtures/_shared/${e.name}`,
        `${scratch}/_shared/${e.name}`,
      );
    }
  }
  for (const f of files) {
    await Deno.copyFile(`${ROOT}fixtures/${name}/${f}`, `${dir}/${f}`);
  }
  let skip = false;
  const toml = (await Deno.readTextFile(
    `${ROOT}fixtures/${name}/fixture.toml`,
  )).split("\n").filter((l) => {
    if (l.startsWith("[")) skip = l.startsWith("[tools.expected");
    return !skip;
  }).join("\n").replace("[fixture]", "[target]");
  await Deno.writeTextFile(`${dir}/target.toml`, toml);
  return {
    dir,
    cleanup: () => Deno.remove(scratch, { recursive: true }),
  };
}
