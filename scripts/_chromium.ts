/**
 * A small headless-Chromium driver over the DevTools protocol (a WebSocket
 * on 127.0.0.1), for the HTML report's browser test and screenshots. The
 * page is never modified: measurements run through `Runtime.evaluate`,
 * which the page's Content-Security-Policy (no scripts) does not govern.
 *
 * @module
 */

/** The Chromium binary on PATH (`chromium`, `chromium-browser`), or null. */
export async function findChromium(): Promise<string | null> {
  for (const name of ["chromium", "chromium-browser", "google-chrome"]) {
    try {
      const out = await new Deno.Command("sh", {
        args: ["-c", `command -v ${name}`],
        stdout: "piped",
        stderr: "null",
      }).output();
      const path = new TextDecoder().decode(out.stdout).trim();
      if (out.success && path) return path;
    } catch {
      return null;
    }
  }
  return null;
}

type Message = {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { message: string };
  sessionId?: string;
};

/** One headless browser with one page. */
export class Browser {
  #proc: Deno.ChildProcess;
  #ws: WebSocket;
  #dir: string;
  #next = 1;
  #pending = new Map<
    number,
    { resolve: (m: Message) => void; reject: (e: Error) => void }
  >();
  #waiters: { method: string; resolve: () => void }[] = [];
  #session = "";

  private constructor(proc: Deno.ChildProcess, ws: WebSocket, dir: string) {
    this.#proc = proc;
    this.#ws = ws;
    this.#dir = dir;
    ws.onmessage = (e) => {
      const m = JSON.parse(String(e.data)) as Message;
      if (m.id !== undefined) {
        const p = this.#pending.get(m.id);
        this.#pending.delete(m.id);
        if (m.error) p?.reject(new Error(m.error.message));
        else p?.resolve(m);
      } else if (m.method) {
        const i = this.#waiters.findIndex((w) => w.method === m.method);
        if (i >= 0) this.#waiters.splice(i, 1)[0]!.resolve();
      }
    };
  }

  /** Start Chromium and open one blank page. */
  static async launch(binary: string): Promise<Browser> {
    const dir = await Deno.makeTempDir({ prefix: "verity-chromium-" });
    const proc = new Deno.Command(binary, {
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-sync",
        "--mute-audio",
        "--remote-debugging-address=127.0.0.1",
        "--remote-debugging-port=0",
        `--user-data-dir=${dir}`,
        "about:blank",
      ],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    let url: string | null = null;
    const reader = proc.stderr.pipeThrough(new TextDecoderStream())
      .getReader();
    let seen = "";
    const deadline = setTimeout(() => {
      try {
        proc.kill("SIGKILL");
      } catch { /* gone */ }
    }, 30_000);
    while (url === null) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += value;
      url = seen.match(/DevTools listening on (ws:\/\/\S+)/)?.[1] ?? null;
    }
    clearTimeout(deadline);
    // Keep draining stderr so Chromium never blocks on a full pipe.
    (async () => {
      try {
        while (!(await reader.read()).done) { /* drain */ }
      } catch { /* closed */ }
    })();
    if (url === null) {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      throw new Error(
        `chromium did not start: ${
          seen.trim().split("\n").slice(-3).join(" ")
        }`,
      );
    }
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.onopen = () => resolve();
      ws.onerror = () => reject(new Error(`cannot connect to ${url}`));
    });
    const b = new Browser(proc, ws, dir);
    const t = await b.#send("Target.createTarget", { url: "about:blank" });
    const a = await b.#send("Target.attachToTarget", {
      targetId: t.targetId,
      flatten: true,
    });
    b.#session = String(a.sessionId);
    await b.send("Page.enable");
    await b.send("Emulation.setScriptExecutionDisabled", { value: true });
    return b;
  }

  #send(
    method: string,
    params: Record<string, unknown> = {},
    sessionId?: string,
  ): Promise<Record<string, unknown>> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`chromium: ${method} timed out`));
      }, 30_000);
      this.#pending.set(id, {
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m.result ?? {});
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.#ws.send(
        JSON.stringify({
          id,
          method,
          params,
          ...(sessionId ? { sessionId } : {}),
        }),
      );
    });
  }

  /** A DevTools command on the page. */
  send(
    method: string,
    params: Record<string, unknown> = {},
  ): Promise<Record<string, unknown>> {
    return this.#send(method, params, this.#session);
  }

  /** Set the viewport (CSS pixels, scale 1). */
  async viewport(width: number, height: number): Promise<void> {
    await this.send("Emulation.setDeviceMetricsOverride", {
      width,
      height,
      deviceScaleFactor: 1,
      mobile: false,
    });
  }

  /** Open a file and wait for its load event. */
  async open(path: string): Promise<void> {
    const loaded = new Promise<void>((resolve) =>
      this.#waiters.push({ method: "Page.loadEventFired", resolve })
    );
    await this.send("Page.navigate", {
      url: new URL(`file://${path}`).href,
    });
    await loaded;
  }

  /** Evaluate an expression in the page; its JSON value. */
  async evaluate<T>(expression: string): Promise<T> {
    const r = await this.send("Runtime.evaluate", {
      expression,
      returnByValue: true,
    });
    const ex = r.exceptionDetails as { text?: string } | undefined;
    if (ex) throw new Error(`evaluate: ${ex.text ?? "exception"}`);
    return (r.result as { value: T }).value;
  }

  /** A PNG of a region of the page (CSS pixels from the page's top left). */
  async screenshot(
    width: number,
    height: number,
    x = 0,
    y = 0,
  ): Promise<Uint8Array> {
    const r = await this.send("Page.captureScreenshot", {
      format: "png",
      clip: { x, y, width, height, scale: 1 },
      captureBeyondViewport: true,
    });
    return Uint8Array.from(atob(String(r.data)), (c) => c.charCodeAt(0));
  }

  /** Close the browser and remove its profile. */
  async close(): Promise<void> {
    try {
      await this.#send("Browser.close").catch(() => {});
      this.#ws.close();
    } finally {
      const timer = setTimeout(() => {
        try {
          this.#proc.kill("SIGKILL");
        } catch { /* gone */ }
      }, 5_000);
      await this.#proc.status;
      clearTimeout(timer);
      await Deno.remove(this.#dir, { recursive: true }).catch(() => {});
    }
  }
}
