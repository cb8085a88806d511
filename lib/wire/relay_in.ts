/**
 * The inner half of the bubblewrap relays (`deno run` inside the sandboxed
 * server's own network namespace, entered with nsenter; see `_netns.ts`).
 * The server itself stays in a namespace with nothing but loopback. Two
 * directions:
 *
 * - `relay_in.ts <socket path> <port>`: an HTTP server listens inside.
 *   Waits until it listens on 127.0.0.1:<port> there, then serves a Unix
 *   socket in a directory verity owns and pipes every connection to that
 *   port.
 * - `relay_in.ts --out <gate> <port>=<socket path>…`: the server connects
 *   out, to the run's database. Listens on 127.0.0.1:<port> there (the
 *   port the database has on the host, so the server's connection settings
 *   stay the same) and pipes every connection to the database's Unix
 *   socket; once every port listens it writes one byte to `<gate>`, the
 *   FIFO bubblewrap waits on (`--block-fd`) before it starts the server,
 *   and removes it.
 *
 * Requires `--allow-net` (those loopback ports and `unix:` sockets only)
 * and read/write on the sockets (and the gate).
 *
 * @module
 */

async function pipe(a: Deno.Conn, b: Deno.Conn): Promise<void> {
  const one = a.readable.pipeTo(b.writable).catch(() => {});
  const two = b.readable.pipeTo(a.writable).catch(() => {});
  await Promise.race([one, two]);
  for (const c of [a, b]) {
    try {
      c.close();
    } catch {
      // closed
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Serve `path`, piping each connection to 127.0.0.1:`port` once that listens. */
async function serveSocket(path: string, port: number): Promise<void> {
  while (true) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      break;
    } catch {
      await sleep(20);
    }
  }
  await forward(
    Deno.listen({ transport: "unix", path }),
    () => Deno.connect({ hostname: "127.0.0.1", port }),
  );
}

/**
 * Listen on 127.0.0.1:`port`. Right after bubblewrap made the namespace its
 * loopback may not be up yet (no 127.0.0.1 to bind): retry for a while.
 */
async function listenLoopback(port: number): Promise<Deno.Listener> {
  const t0 = Date.now();
  while (true) {
    try {
      return Deno.listen({ hostname: "127.0.0.1", port });
    } catch (e) {
      if (!(e instanceof Deno.errors.AddrNotAvailable)) throw e;
      if (Date.now() - t0 > 10_000) throw e;
      await sleep(5);
    }
  }
}

/** Pipe every connection to `listener` to a connection `connect` opens. */
async function forward(
  listener: Deno.Listener,
  connect: () => Promise<Deno.Conn>,
): Promise<void> {
  for await (const conn of listener) {
    connect().then((to) => pipe(conn, to), () => conn.close());
  }
}

/** Listen on each port, then open the gate. */
async function serveOut(
  gate: string,
  pairs: { port: number; path: string }[],
): Promise<void> {
  const listeners = [];
  for (const p of pairs) listeners.push(await listenLoopback(p.port));
  const f = await Deno.open(gate, { write: true });
  await f.write(new Uint8Array([1]));
  f.close();
  await Deno.remove(gate).catch(() => {});
  await Promise.all(
    listeners.map((l, i) =>
      forward(
        l,
        () => Deno.connect({ transport: "unix", path: pairs[i]!.path }),
      )
    ),
  );
}

if (import.meta.main) {
  const args = Deno.args;
  if (args[0] === "--out") {
    const gate = args[1];
    const pairs = args.slice(2).map((a) => {
      const i = a.indexOf("=");
      return { port: Number(a.slice(0, i)), path: a.slice(i + 1) };
    });
    if (
      !gate || pairs.length === 0 ||
      pairs.some((p) => !Number.isInteger(p.port) || p.path === "")
    ) {
      console.error("usage: relay_in.ts --out <gate> <port>=<socket path>…");
      Deno.exit(2);
    }
    try {
      await serveOut(gate, pairs);
    } catch (e) {
      console.error(
        `relay: ${e instanceof Error ? e.message : String(e)}`,
      );
      Deno.exit(1);
    }
  } else {
    const [path, portText] = args;
    const port = Number(portText);
    if (!path || !Number.isInteger(port)) {
      console.error("usage: relay_in.ts <socket path> <port>");
      Deno.exit(2);
    }
    await serveSocket(path, port);
  }
}
