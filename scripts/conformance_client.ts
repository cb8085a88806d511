/**
 * The client command of the conformance suite's `auth/*` scenarios:
 * `verity reality --login --url <URL>` with the scenario's context turned
 * into verity's own flags, as a person or a CI job would pass them
 * (`--client-id`, the secret in an environment variable, the key in a file,
 * `--client-credentials` for the machine-to-machine scenarios). The
 * "browser" that opens the authorization URL is `curl -L`: the suite's
 * authorization server answers at once with a redirect to verity's loopback
 * listener. Tokens go to a scratch config directory.
 *
 * Usage (by scripts/conformance.sh): conformance_client.ts <server-url>
 *
 * @module
 */
const url = Deno.args.at(-1);
if (url === undefined) {
  console.error("usage: conformance_client.ts <server-url>");
  Deno.exit(2);
}
const scenario = Deno.env.get("MCP_CONFORMANCE_SCENARIO") ?? "";
const context = JSON.parse(Deno.env.get("MCP_CONFORMANCE_CONTEXT") ?? "{}");
const config = await Deno.makeTempDir({ prefix: "verity-conformance-" });
const env: Record<string, string> = {
  XDG_CONFIG_HOME: config,
  BROWSER: "curl -fsSL -o /dev/null",
  NO_COLOR: "1",
};
const args = ["reality", "--include-destructive", "--timeout", "10"];
if (typeof context.client_id === "string") {
  args.push("--client-id", context.client_id);
}
if (typeof context.client_secret === "string") {
  env.CONFORMANCE_CLIENT_SECRET = context.client_secret;
  args.push("--client-secret-env", "CONFORMANCE_CLIENT_SECRET");
}
if (typeof context.private_key_pem === "string") {
  const key = `${config}/client-key.pem`;
  await Deno.writeTextFile(key, context.private_key_pem, { mode: 0o600 });
  args.push("--client-key", key);
}
args.push(
  ...(scenario.startsWith("auth/client-credentials")
    ? ["--client-credentials"]
    : [
      "--login",
      "--client-metadata-url",
      "https://conformance-test.local/client-metadata.json",
    ]),
  "--url",
  url,
);
const main = new URL("../main.ts", import.meta.url).pathname;
const { code } = await new Deno.Command(Deno.execPath(), {
  args: ["run", "--allow-all", main, ...args],
  env,
  stdout: "inherit",
  stderr: "inherit",
}).output();
await Deno.remove(config, { recursive: true });
Deno.exit(code);
