/**
 * Hostile MCP servers for the bounds tests and scripts/hostile_servers.ts.
 * No imports, no permissions needed: runs under the deno sandbox as is.
 *
 *   deno run tests/hostile/server.ts <mode> [arg]
 *
 * - `flood`: 1 MB notifications forever; never answers `initialize`.
 * - `pages`: answers, then valid `tools/list` pages of [arg] MB (default
 *   15), each pointing at another, forever.
 * - `drip`: answers, then one small `tools/list` page every [arg] ms
 *   (default 800), each pointing at another, forever.
 * - `deep`: a `serverInfo` nested [arg] levels deep (default 100000) and
 *   a tool whose annotations nest as deep.
 * - `chatty`: 10,000 small notifications before every answer, then a
 *   normal listing of one tool.
 * - `slowcalls`: lists 20 read-only tools and answers every `tools/call`
 *   after [arg] ms (default 800): each answer inside a 1 s timeout, the
 *   session as a whole held for 16 s.
 * - `badutf8`: answers `initialize` with a serverInfo name holding the
 *   byte 0xff (not UTF-8); [arg] 1 answers `initialize` properly and
 *   sends the bad bytes as the `tools/list` answer instead.
 * - `permflood`: lists one read-only tool whose call makes [arg] million
 *   environment permission checks (default 3): each is a line in the
 *   Deno permission audit log.
 */
const mode = Deno.args[0] ?? "";
const arg = Number(Deno.args[1] ?? "NaN");
const enc = new TextEncoder();

function send(v: unknown): void {
  writeRaw(JSON.stringify(v) + "\n");
}

function writeRaw(text: string): void {
  const bytes = enc.encode(text);
  let off = 0;
  while (off < bytes.length) off += Deno.stdout.writeSync(bytes.subarray(off));
}

/** Write `before`, the byte 0xff, then `after` (a frame that is not UTF-8). */
function writeInvalid(before: string, after: string): void {
  const a = enc.encode(before);
  const b = enc.encode(after);
  const bytes = new Uint8Array(a.length + 1 + b.length);
  bytes.set(a);
  bytes[a.length] = 0xff;
  bytes.set(b, a.length + 1);
  let off = 0;
  while (off < bytes.length) off += Deno.stdout.writeSync(bytes.subarray(off));
}

function deepValue(levels: number): string {
  return '{"a":'.repeat(levels) + "1" + "}".repeat(levels);
}

if (mode === "flood") {
  const note = JSON.stringify({
    jsonrpc: "2.0",
    method: "notifications/message",
    params: { level: "info", data: "x".repeat(1024 * 1024) },
  }) + "\n";
  while (true) writeRaw(note);
}

const page = (cursor: number, tools: string): string =>
  `{"jsonrpc":"2.0","id":ID,"result":{"tools":[${tools}],"nextCursor":"c${
    cursor + 1
  }"}}`;

let served = 0;
let bigPage: string | null = null;

async function answer(msg: { id?: unknown; method?: string }): Promise<void> {
  if (msg.id === undefined) return;
  const id = JSON.stringify(msg.id);
  if (mode === "chatty") {
    for (let i = 0; i < 10_000; i++) {
      writeRaw(
        `{"jsonrpc":"2.0","method":"notifications/progress","params":{"n":${i}}}\n`,
      );
    }
  }
  if (mode === "badutf8" && (msg.method === "initialize") !== (arg === 1)) {
    writeInvalid(
      `{"jsonrpc":"2.0","id":${id},"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bad`,
      `","version":"1"},"tools":[]}}\n`,
    );
    return;
  }
  if (mode === "permflood" && msg.method === "tools/call") {
    const n = (Number.isFinite(arg) ? arg : 3) * 1_000_000;
    for (let i = 0; i < n; i++) {
      try {
        Deno.env.get("VERITY_PERMFLOOD");
      } catch {
        // denied: still checked, still logged
      }
    }
    send({
      jsonrpc: "2.0",
      id: msg.id,
      result: { content: [{ type: "text", text: `${n} checks` }] },
    });
    return;
  }
  if (msg.method === "initialize") {
    const info = mode === "deep"
      ? deepValue(Number.isFinite(arg) ? arg : 100_000)
      : '{"name":"hostile","version":"1"}';
    writeRaw(
      `{"jsonrpc":"2.0","id":${id},"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":${info}}}\n`,
    );
    return;
  }
  if (msg.method === "tools/list") {
    served++;
    if (mode === "pages") {
      if (bigPage === null) {
        const mb = Number.isFinite(arg) ? arg : 15;
        const desc = "d".repeat(mb * 1024 * 1024);
        bigPage = page(
          0,
          `{"name":"big","description":"${desc}","inputSchema":{"type":"object"}}`,
        );
      }
      writeRaw(
        bigPage.replace("ID", id).replace('"c1"', `"c${served}"`) + "\n",
      );
      return;
    }
    if (mode === "drip") {
      await new Promise((r) => setTimeout(r, Number.isFinite(arg) ? arg : 800));
      writeRaw(
        page(
          served,
          `{"name":"t${served}","inputSchema":{"type":"object"}}`,
        ).replace("ID", id) + "\n",
      );
      return;
    }
    if (mode === "slowcalls") {
      const tools = Array.from(
        { length: 20 },
        (_, i) =>
          `{"name":"slow${i}","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`,
      );
      writeRaw(
        `{"jsonrpc":"2.0","id":${id},"result":{"tools":[${
          tools.join(",")
        }]}}\n`,
      );
      return;
    }
    const ann = mode === "deep"
      ? `,"annotations":{"readOnlyHint":${
        deepValue(Number.isFinite(arg) ? arg : 100_000)
      }}`
      : ',"annotations":{"readOnlyHint":true}';
    writeRaw(
      `{"jsonrpc":"2.0","id":${id},"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}${ann}}]}}\n`,
    );
    return;
  }
  if (mode === "slowcalls" && msg.method === "tools/call") {
    await new Promise((r) => setTimeout(r, Number.isFinite(arg) ? arg : 800));
    send({
      jsonrpc: "2.0",
      id: msg.id,
      result: { content: [{ type: "text", text: "slow" }] },
    });
    return;
  }
  send({ jsonrpc: "2.0", id: msg.id, result: {} });
}

let buf = "";
const dec = new TextDecoder();
for await (const chunk of Deno.stdin.readable) {
  buf += dec.decode(chunk, { stream: true });
  let nl;
  while ((nl = buf.indexOf("\n")) >= 0) {
    const line = buf.slice(0, nl);
    buf = buf.slice(nl + 1);
    if (line.trim() === "") continue;
    await answer(JSON.parse(line));
  }
}
