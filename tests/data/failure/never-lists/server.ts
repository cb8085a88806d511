/**
 * Answers `initialize`, then never answers `tools/list` (a server stuck
 * loading its tools): the run must end as SETUP_FAILED naming the listing,
 * after the start timeout, not hang.
 */
const dec = new TextDecoder();
const enc = new TextEncoder();
let buf = "";
for await (const chunk of Deno.stdin.readable) {
  buf += dec.decode(chunk, { stream: true });
  let nl: number;
  while ((nl = buf.indexOf("\n")) >= 0) {
    const line = buf.slice(0, nl);
    buf = buf.slice(nl + 1);
    if (!line.trim()) continue;
    const m = JSON.parse(line);
    if (m.method === "initialize") {
      const result = {
        protocolVersion: m.params?.protocolVersion ?? "2025-11-25",
        capabilities: { tools: {} },
        serverInfo: { name: "never-lists", version: "1.0.0" },
      };
      await Deno.stdout.write(
        enc.encode(JSON.stringify({ jsonrpc: "2.0", id: m.id, result }) + "\n"),
      );
    }
    // tools/list: never answered.
  }
}
