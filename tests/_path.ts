/**
 * A PATH with no `deno` on it, for tests of what a machine without Deno
 * sees. A system directory that holds a `deno` beside the tools a test
 * needs (`npm install -g deno` puts one in /usr/bin) is replaced by a
 * directory of links to everything else in it. Test-only.
 *
 * @module
 */

const SYSTEM = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** The system PATH without `deno`; `scratch` holds the link directories. */
export async function pathWithoutDeno(scratch: string): Promise<string> {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const [i, d] of SYSTEM.split(":").entries()) {
    let real: string;
    try {
      real = await Deno.realPath(d);
    } catch {
      continue;
    }
    if (seen.has(real)) continue; // /bin is /usr/bin on merged-usr systems
    seen.add(real);
    let hasDeno = false;
    try {
      hasDeno = (await Deno.stat(`${real}/deno`)).isFile;
    } catch {
      hasDeno = false;
    }
    if (!hasDeno) {
      out.push(d);
      continue;
    }
    const links = `${scratch}/path-${i}`;
    await Deno.mkdir(links, { recursive: true });
    for await (const e of Deno.readDir(real)) {
      if (e.name === "deno") continue;
      await Deno.symlink(`${real}/${e.name}`, `${links}/${e.name}`);
    }
    out.push(links);
  }
  return out.join(":");
}
