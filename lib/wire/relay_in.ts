/**
 * The inner half of the bubblewrap relay (`deno run` inside the sandboxed
 * server's own network namespace, entered with nsenter): waits until the
 * server listens on 127.0.0.1:<port> there, then serves a Unix socket in a
 * directory verity owns and pipes every connection to that port. The
 * server itself stays in a namespace with nothing but loopback.
 *
 * Usage: relay_in.ts <socket path> <port>. Requires `--allow-net` (that
 * loopback port only) and read/write on the socket's directory.
 *
 * @module
 */

async function pipe(a: Deno.Conn, b: Deno.Conn): Promise<void> {
  const one = a.readable.pipeTo(b.writable).catch(() => {});
  const two = b.readable.pipeTo(a.writable).catch(() => {});
  await Promise.race([one, two]);
  try {
    a.close();
  } catch {
    // closed
  }
  try {
    b.close();
  } catch {
    // closed
  }
}

if (import.meta.main) {
  const [path, portText] = Deno.args;
  const port = Number(portText);
  if (!path || !Number.isInteger(port)) {
    console.error("usage: relay_in.ts <socket path> <port>");
    Deno.exit(2);
  }
  while (true) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  const listener = Deno.listen({ transport: "unix", path });
  for await (const conn of listener) {
    Deno.connect({ hostname: "127.0.0.1", port }).then(
      (tcp) => pipe(conn, tcp),
      () => conn.close(),
    );
  }
}
