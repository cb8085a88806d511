import assert from "node:assert/strict";
import {
  commandForChoice,
  launchRequest,
  type LaunchSetup,
  needsBubblewrapProbe,
  usesPython,
} from "./request.ts";
import { InputError } from "../errors.ts";

const SETUP: LaunchSetup = {
  backend: "deno",
  why: "a deno run command",
  deno: "/opt/deno",
  python: "/usr/bin/python3.11",
  source: "/repo/.verity/sources/memory/package",
  denoDir: "/repo/.verity/deno_dir",
};

const DEF = {
  dir: "/defs/memory",
  command: ["{deno}", "run", "--lock={target}/deno.lock", "{source}/main.js"],
  env: { FILE: "{state}/memory.jsonl", PY: "{python}" },
  read: ["{source}"],
};

Deno.test("a launch request substitutes every placeholder once, adds VERITY_STATE_DIR and the prepared DENO_DIR", () => {
  const req = launchRequest(DEF, SETUP, {
    state: "/w/state",
    evidence: "/w/evidence",
  }, "server");
  assert.deepEqual(req.command, [
    "/opt/deno",
    "run",
    "--lock=/defs/memory/deno.lock",
    "/repo/.verity/sources/memory/package/main.js",
  ]);
  assert.deepEqual(req.env, {
    FILE: "/w/state/memory.jsonl",
    PY: "/usr/bin/python3.11",
    VERITY_STATE_DIR: "/w/state",
  });
  assert.deepEqual(req.readPaths, ["/repo/.verity/sources/memory/package"]);
  assert.equal(req.backend, "deno");
  assert.equal(req.denoDir, "/repo/.verity/deno_dir");
  assert.equal(req.definitionDir, "/defs/memory");
  assert.equal(req.evidenceDir, "/w/evidence");
  assert.equal(req.label, "server");
});

Deno.test("without a prepared cache the request leaves DENO_DIR to the sandbox, and {source} is refused", () => {
  const setup = { ...SETUP, source: null, denoDir: null };
  const req = launchRequest(
    { ...DEF, command: ["{deno}", "run", "s.ts"], read: [] },
    setup,
    { state: "/s", evidence: "/e" },
    "a",
  );
  assert.equal("denoDir" in req, false);
  assert.throws(
    () => launchRequest(DEF, setup, { state: "/s", evidence: "/e" }, "a"),
    (e) => e instanceof InputError && /\{source\}/.test(e.message),
  );
});

Deno.test("the backend choice sees the command with the prepared {source}; bubblewrap is probed only when the choice needs it", () => {
  assert.deepEqual(commandForChoice(DEF, SETUP), [
    "/opt/deno",
    "run",
    "--lock=/defs/memory/deno.lock",
    "/repo/.verity/sources/memory/package/main.js",
  ]);
  const deno = ["/opt/deno", "run", "s.ts"];
  const py = ["/usr/bin/python3", "s.py"];
  assert.equal(
    needsBubblewrapProbe({ sandbox: null }, deno, "/opt/deno", false),
    false,
  );
  assert.equal(
    needsBubblewrapProbe({ sandbox: null }, py, "/opt/deno", false),
    true,
  );
  assert.equal(
    needsBubblewrapProbe({ sandbox: "bubblewrap" }, deno, "/opt/deno", false),
    true,
  );
  assert.equal(
    needsBubblewrapProbe({ sandbox: null }, py, "/opt/deno", true),
    false,
  );
  assert.equal(
    needsBubblewrapProbe({ sandbox: "deno" }, py, "/opt/deno", false),
    false,
  );
});

Deno.test("{python} anywhere a launch substitutes (command, env, read) asks for the interpreter", () => {
  assert.equal(usesPython({ command: ["x"], env: {}, read: [] }), false);
  assert.equal(
    usesPython({ command: ["x"], env: {}, read: ["{python}"] }),
    true,
  );
  assert.equal(
    usesPython({ command: ["x"], env: { P: "{python}" }, read: [] }),
    true,
  );
});

Deno.test("a session database fills {postgres_…} and grants its socket; without one the placeholder is refused, and the backend choice sees a stand-in", () => {
  const def = {
    dir: "/defs/pg",
    command: ["{deno}", "run", "npm:server", "{postgres_url}"],
    env: { PGHOST: "{postgres_host}", PGDATABASE: "{postgres_db}" },
    read: [],
  };
  const database = {
    url:
      "postgresql://verity_s_1@localhost/verity_s_1?host=%2Fw%2Fpg%2Fsocket&port=5432",
    host: "/w/pg/socket",
    port: "5432",
    db: "verity_s_1",
    user: "verity_s_1",
    password: "",
    socket: "/w/pg/socket/.s.PGSQL.5432",
  };
  const req = launchRequest(
    def,
    SETUP,
    { state: "/w/state", evidence: "/w/evidence" },
    "server",
    database,
  );
  assert.equal(req.command.at(-1), database.url);
  assert.equal(req.env.PGHOST, "/w/pg/socket");
  assert.equal(req.env.PGDATABASE, "verity_s_1");
  assert.deepEqual(req.sockets, [database.socket]);
  assert.throws(
    () => launchRequest(def, SETUP, { state: "/s", evidence: "/e" }, "server"),
    (e: unknown) =>
      e instanceof InputError && /no postgres adapter/.test(e.message),
  );
  assert.match(commandForChoice(def, SETUP).at(-1)!, /^postgresql:\/\/probe@/);
  assert.equal(req.connect, undefined);
  // listen = "tcp": host, port and password for TCP, the port granted (with the
  // socket behind it, for a relay), no socket to open.
  const tcp = launchRequest(
    { ...def, env: { PGPASSWORD: "{postgres_password}" } },
    SETUP,
    { state: "/w/state", evidence: "/w/evidence" },
    "server",
    {
      url: "postgresql://verity_s_1:pw@127.0.0.1:40001/verity_s_1",
      host: "127.0.0.1",
      port: "40001",
      db: "verity_s_1",
      user: "verity_s_1",
      password: "pw",
      socket: null,
      tcpPort: 40001,
      tcpSocket: "/w/postgres/socket/.s.PGSQL.40001",
    },
  );
  assert.deepEqual(tcp.connect, [{
    port: 40001,
    socket: "/w/postgres/socket/.s.PGSQL.40001",
  }]);
  assert.equal(tcp.sockets, undefined);
  assert.equal(tcp.env.PGPASSWORD, "pw");
});
