/**
 * The sign-in options of the remote commands (`--token-env`, `--login`,
 * `--client-*`) and `verity login`: they build the {@linkcode OAuth} client
 * of one remote server. Secrets come from the environment or a file, never
 * from the command line.
 *
 * Requires `--allow-env`, `--allow-read` (a `--client-key` file, the token
 * store) and `--allow-run` for `$BROWSER`.
 *
 * @module
 */
import type { OptionSpec, ParsedCommandLine } from "./args.ts";
import { UsageError } from "../errors.ts";
import { OAuth, type OAuthClient, type OAuthOptions } from "../wire/oauth.ts";
import { TokenStore } from "../wire/token_store.ts";

/** The sign-in options every remote-capable command accepts. */
export const SIGN_IN_OPTIONS: OptionSpec = {
  "token-env": { type: "string" },
  login: { type: "boolean" },
  "client-id": { type: "string" },
  "client-secret-env": { type: "string" },
  "client-key": { type: "string" },
  "client-metadata-url": { type: "string" },
  "client-credentials": { type: "boolean" },
};

function envValue(command: string, flag: string, name: unknown): string {
  const n = String(name);
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(n)) {
    throw new UsageError(
      `verity ${command}: --${flag}: ${
        JSON.stringify(n)
      } is not an environment variable name`,
    );
  }
  const v = Deno.env.get(n);
  if (v === undefined || v === "" || /[\r\n\0]/.test(v)) {
    throw new UsageError(
      `verity ${command}: --${flag}: environment variable ${n} is ${
        v === undefined ? "not set" : "empty or holds a line break or NUL"
      }`,
    );
  }
  return v;
}

/** A PKCS #8 PEM private key file, imported when first used (ES256 or RS256). */
function clientKey(command: string, file: string): () => Promise<CryptoKey> {
  let pem: string;
  try {
    pem = Deno.readTextFileSync(file);
  } catch (e) {
    throw new UsageError(
      `verity ${command}: --client-key ${file}: ${(e as Error).message}`,
    );
  }
  const m =
    /-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\s]+)-----END PRIVATE KEY-----/
      .exec(pem);
  if (m === null) {
    throw new UsageError(
      `verity ${command}: --client-key ${file}: not a PKCS #8 PEM private key (BEGIN PRIVATE KEY)`,
    );
  }
  const der = Uint8Array.from(
    atob(m[1]!.replace(/\s+/g, "")),
    (c) => c.charCodeAt(0),
  );
  return async () => {
    for (
      const alg of [
        { name: "ECDSA", namedCurve: "P-256" },
        { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
      ]
    ) {
      try {
        return await crypto.subtle.importKey("pkcs8", der, alg, false, [
          "sign",
        ]);
      } catch {
        // the other kind
      }
    }
    throw new Error(`--client-key ${file} is neither a P-256 nor an RSA key`);
  };
}

/** Print the authorization URL; open it with `$BROWSER` when set. */
function openInBrowser(url: string): void {
  console.error(`verity: to sign in, open ${url}`);
  const [cmd, ...args] = (Deno.env.get("BROWSER") ?? "").trim().split(/\s+/);
  if (!cmd) return;
  try {
    new Deno.Command(cmd, {
      args: [...args, url],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn().unref();
  } catch (e) {
    console.error(
      `verity: could not start $BROWSER (${
        (e as Error).message
      }); open the URL yourself`,
    );
  }
}

/** The flags of {@linkcode SIGN_IN_OPTIONS} that were given. */
export function signInFlags(p: ParsedCommandLine): string[] {
  return Object.keys(SIGN_IN_OPTIONS).filter((f) => p.values[f] !== undefined);
}

/**
 * The OAuth client for `url`, from the sign-in flags; adds the
 * `Authorization` header of `--token-env` to `headers`.
 */
export function parseSignIn(
  command: string,
  p: ParsedCommandLine,
  url: string,
  headers: Record<string, string>,
  extra: OAuthOptions = {},
): OAuth {
  const v = p.values;
  const given = signInFlags(p);
  const has = (f: string) => v[f] !== undefined;
  const refuse = (why: string) => {
    throw new UsageError(`verity ${command}: ${why}`);
  };
  const user = Object.keys(headers).some((h) =>
    h.toLowerCase() === "authorization"
  );
  if (has("token-env")) {
    if (user) refuse("--token-env and an Authorization --header: give one");
    if (given.length > 1) {
      refuse(
        `--token-env gives the token: it cannot go with --${
          given.find((f) => f !== "token-env")
        }`,
      );
    }
    headers.authorization = `Bearer ${
      envValue(command, "token-env", v["token-env"])
    }`;
    return new OAuth(url, { userHeader: `the token in ${v["token-env"]}` });
  }
  if (user) {
    if (given.length > 0) {
      refuse(`--${given[0]} and an Authorization --header: give one`);
    }
    return new OAuth(url, { userHeader: "the Authorization header given" });
  }
  if ((has("client-secret-env") || has("client-key")) && !has("client-id")) {
    refuse("--client-secret-env and --client-key need --client-id");
  }
  if (has("client-secret-env") && has("client-key")) {
    refuse("--client-secret-env and --client-key: give one");
  }
  const credentials = v["client-credentials"] === true;
  if (credentials && !(has("client-secret-env") || has("client-key"))) {
    refuse(
      "--client-credentials needs --client-id with --client-secret-env or --client-key",
    );
  }
  if (credentials && (v.login === true || extra.signIn)) {
    refuse("--client-credentials signs in as the client itself: no --login");
  }
  const cimd = v["client-metadata-url"];
  if (cimd !== undefined) {
    let ok = false;
    try {
      const u = new URL(String(cimd));
      ok = u.protocol === "https:" && u.pathname.length > 1 && !u.hash;
    } catch {
      // not a URL
    }
    if (!ok) {
      refuse(
        `--client-metadata-url ${
          JSON.stringify(String(cimd))
        } must be an https URL with a path`,
      );
    }
  }
  let client: OAuthClient | undefined;
  if (has("client-id")) {
    client = {
      id: String(v["client-id"]),
      ...(has("client-secret-env")
        ? {
          secret: envValue(
            command,
            "client-secret-env",
            v["client-secret-env"],
          ),
        }
        : {}),
      ...(has("client-key")
        ? { key: clientKey(command, String(v["client-key"])) }
        : {}),
    };
  }
  const path = TokenStore.defaultPath();
  return new OAuth(url, {
    ...(v.login === true ? { signIn: openInBrowser } : {}),
    ...(client ? { client } : {}),
    ...(credentials ? { clientCredentials: true } : {}),
    ...(cimd !== undefined ? { clientMetadataUrl: String(cimd) } : {}),
    ...(path !== null && !credentials ? { store: new TokenStore(path) } : {}),
    ...extra,
  });
}
