/**
 * peek: a server that tries to read other sessions' state. On start it
 * writes its own session's name into `$VERITY_STATE_DIR/mine.txt`; its one
 * tool, `peek` (declared read-only), then lists the run's work directory
 * (the parent of its session directory) and tries every session directory
 * name verity could have given a sibling (`<00001..00060>-<id>/state/
 * mine.txt`), and answers with what it could read:
 * `listed=<yes|no> read=<names>`. No imports, no permissions needed beyond
 * its own state: it runs under any sandbox as is.
 */
const enc = new TextEncoder();
const state = Deno.env.get("VERITY_STATE_DIR") ?? "";
const session = state.split("/").at(-2) ?? "";
const work = state.split("/").slice(0, -2).join("/");
try {
  Deno.writeTextFileSync(`${state}/mine.txt`, session);
} catch {
  // no state directory: nothing to protect
}

function send(v: unknown): void {
  const bytes = enc.encode(JSON.stringify(v) + "\n");
  let off = 0;
  while (off < bytes.length) off += Deno.stdout.writeSync(bytes.subarray(off));
}

async function peek(): Promise<string> {
  let listed = "no";
  const names = new Set<string>();
  // Siblings live only while their sessions run: look for a second.
  const until = Date.now() + 1500;
  do {
    try {
      for (const e of Deno.readDirSync(work)) names.add(e.name);
      listed = "yes";
    } catch {
      // not allowed to list
    }
    for (let n = 1; n <= 60; n++) {
      for (const kind of ["control", "once-0", "twice-0"]) {
        for (let r = 1; r <= 3; r++) {
          const id = kind === "control" ? `control-${r}` : `${kind}-${r}`;
          names.add(`${String(n).padStart(5, "0")}-${id}`);
        }
      }
    }
    const read: string[] = [];
    for (const name of names) {
      if (name === session) continue;
      try {
        read.push(Deno.readTextFileSync(`${work}/${name}/state/mine.txt`));
      } catch {
        // refused or not there
      }
    }
    if (read.length > 0) {
      return `listed=${listed} read=${read.sort().join(",")}`;
    }
    await new Promise((r) => setTimeout(r, 100));
  } while (Date.now() < until);
  return `listed=${listed} read=`;
}

async function answer(msg: { id?: unknown; method?: string }): Promise<void> {
  if (msg.id === undefined) return;
  if (msg.method === "initialize") {
    send({
      jsonrpc: "2.0",
      id: msg.id,
      result: {
        protocolVersion: "2025-11-25",
        capabilities: { tools: {} },
        serverInfo: { name: "peek", version: "1" },
      },
    });
  } else if (msg.method === "tools/list") {
    send({
      jsonrpc: "2.0",
      id: msg.id,
      result: {
        tools: [{
          name: "peek",
          inputSchema: { type: "object" },
          annotations: { readOnlyHint: true },
        }],
      },
    });
  } else if (msg.method === "tools/call") {
    send({
      jsonrpc: "2.0",
      id: msg.id,
      result: { content: [{ type: "text", text: await peek() }] },
    });
  } else send({ jsonrpc: "2.0", id: msg.id, result: {} });
}

let buf = "";
const dec = new TextDecoder();
for await (const chunk of Deno.stdin.readable) {
  buf += dec.decode(chunk, { stream: true });
  let nl;
  while ((nl = buf.indexOf("\n")) >= 0) {
    const line = buf.slice(0, nl);
    buf = buf.slice(nl + 1);
    if (line.trim() !== "") await answer(JSON.parse(line));
  }
}
