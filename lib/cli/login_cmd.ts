/**
 * `verity login <url>`: sign in to a remote MCP server behind OAuth (the
 * authorization code flow with PKCE and a loopback redirect; the URL to
 * open is printed, and opened with `$BROWSER` when set) and keep the token
 * in the user's token store for `tools`, `capture`, `reality` and `init`.
 *
 * Requires `--allow-net`, `--allow-env`, `--allow-read`, `--allow-write`
 * (the token store) and `--allow-run` (`$BROWSER`).
 *
 * @module
 */
import { parseCommandLine, parseSeconds } from "./args.ts";
import { ServerError, UsageError } from "../errors.ts";
import { openSession } from "../wire/session.ts";
import { TokenStore } from "../wire/token_store.ts";
import { parseRemote, REMOTE_OPTIONS, remoteClient } from "./remote.ts";

/** Run `verity login`. */
export async function main(argv: string[]): Promise<number> {
  const { url: _url, login: _login, ...options } = REMOTE_OPTIONS;
  const p = parseCommandLine("login", argv, {
    scope: { type: "string" },
    timeout: { type: "string" },
    ...options,
  });
  if (p.positionals.length !== 1 || p.serverCommand !== null) {
    throw new UsageError("verity login: expected one server URL");
  }
  for (const flag of ["client-credentials", "token-env"]) {
    if (p.values[flag] !== undefined) {
      throw new UsageError(
        `verity login: --${flag} needs no sign-in; give it to the command that reaches the server`,
      );
    }
  }
  const store = TokenStore.defaultPath();
  if (store === null) {
    throw new UsageError(
      "verity login: no config directory to keep the token in (set XDG_CONFIG_HOME or HOME)",
    );
  }
  const timeoutMs = parseSeconds("login", "timeout", p.values.timeout, 300);
  const scope = p.values.scope;
  const remote = parseRemote("login", {
    values: { ...p.values, url: p.positionals[0], login: true },
    positionals: [],
    serverCommand: null,
  }, {
    fresh: true,
    signInTimeoutMs: timeoutMs,
    ...(typeof scope === "string" ? { scope } : {}),
  })!;
  const s = await openSession(remoteClient(remote), { timeoutMs });
  await s.client.close(1000);
  if (s.failure) {
    throw new ServerError(
      `verity login: ${remote.shownUrl}: ${s.failure.message}`,
    );
  }
  const t = remote.auth.token;
  console.log(
    t === null
      ? `${remote.shownUrl} did not ask for sign-in; nothing kept`
      : `signed in to ${remote.shownUrl}${
        t.scope ? ` (scope "${t.scope}")` : ""
      }${t.refreshToken ? ", with a refresh token" : ""}; kept in ${store}`,
  );
  return 0;
}
