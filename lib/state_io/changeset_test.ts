import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { readChangeset } from "./changeset.ts";
import { changesetDelta } from "../state/changeset.ts";
import type { OverlayLayout } from "../sandbox/types.ts";
import { OVERLAY_OPTIONS } from "../sandbox/build_launch.ts";

const asRoot = Deno.build.os === "linux" && Deno.uid() === 0;

/** Run `script` (sh) with the overlay of `lower` mounted at `$M`, in a namespace of its own. */
async function inOverlay(
  lower: string,
  l: OverlayLayout,
  script: string,
): Promise<void> {
  const upper = l.layers[0]!.upper;
  const out = await new Deno.Command("unshare", {
    args: [
      "--mount",
      "--propagation",
      "private",
      "--",
      "/bin/sh",
      "-ec",
      `mount -t overlay -o "lowerdir=$1,upperdir=$2,workdir=$3,${OVERLAY_OPTIONS}" x "$4"; M="$4"; H="$5"; ${script}`,
      "sh",
      lower,
      upper,
      l.work,
      l.merged,
      l.layers[1]!.upper,
    ],
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
}

/** A WAL database pair (the log not checkpointed) with rows 1 and 3. */
function walPair(dir: string): void {
  const db = new DatabaseSync(`${dir}/live.sqlite`);
  db.exec(
    "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0; CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT);",
  );
  db.exec("INSERT INTO t VALUES (1, 'one'), (3, 'three')");
  Deno.copyFileSync(`${dir}/live.sqlite`, `${dir}/db.sqlite`);
  Deno.copyFileSync(`${dir}/live.sqlite-wal`, `${dir}/db.sqlite-wal`);
  db.close();
}

Deno.test({
  name:
    "changeset: created, changed, deleted (whiteouts, opaque directories), modes, links, SQLite with its -wal, JSON by value",
  ignore: !asRoot,
  fn: async () => {
    const root = await Deno.makeTempDir({ prefix: "verity-changeset-" });
    try {
      const lower = `${root}/lower`;
      const src = `${root}/src`;
      for (const d of [lower, `${lower}/olddir`, `${lower}/gone`, src]) {
        Deno.mkdirSync(d, { recursive: true });
      }
      const write = (p: string, t: string) => Deno.writeTextFileSync(p, t);
      write(`${lower}/keep.txt`, "same\n");
      write(`${lower}/mode.txt`, "m\n");
      write(`${lower}/notes.json`, '{"a": 1, "b": 2}');
      write(`${lower}/items.json`, '[{"id": 1}, {"id": 2}]');
      write(`${lower}/doomed.txt`, "bye\n");
      write(`${lower}/olddir/x`, "x");
      write(`${lower}/olddir/y`, "y");
      write(`${lower}/gone/f`, "f");
      const db = new DatabaseSync(`${lower}/db.sqlite`);
      db.exec(
        "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'one'), (2, 'two')",
      );
      db.close();
      walPair(src);
      const l: OverlayLayout = {
        layers: [
          { at: "/srv", upper: `${root}/upper`, lower },
          { at: "/tmp", upper: `${root}/hidden`, lower: null },
        ],
        work: `${root}/work`,
        merged: `${root}/merged`,
        scaffold: ["/srv/mnt", "/tmp/verity"],
        owned: [],
      };
      for (const d of [l.work, l.merged, ...l.layers.map((x) => x.upper)]) {
        Deno.mkdirSync(d);
      }
      await inOverlay(
        lower,
        l,
        `cat "$M/keep.txt" >/dev/null; printf '{"b":2,\\n "a":1}\\n' >"$M/notes.json"
         printf '[{"id": 1}]' >"$M/items.json"; chmod 600 "$M/mode.txt"; rm "$M/doomed.txt"
         rm -r "$M/olddir"; mkdir "$M/olddir"; echo z >"$M/olddir/z"; rm -r "$M/gone"
         cp ${src}/db.sqlite ${src}/db.sqlite-wal "$M/"; ln -s /etc/passwd "$M/link"
         mkfifo "$M/fifo"; head -c 20000 /dev/zero >"$M/big.bin"; mkdir "$M/mnt"
         mkdir -p "$H/verity"; echo '{"k":1}' >"$H/verity/cache.json"`,
      );
      const c = readChangeset(l, { fileBytes: 16384 });
      const got = Object.fromEntries(
        c.changes.map((p) => [
          p.path,
          [p.before?.type ?? null, p.after?.type ?? null],
        ]),
      );
      assert.deepEqual(
        got,
        {
          "/srv/big.bin": [null, "file"],
          "/srv/db.sqlite": ["file", "file"],
          "/srv/doomed.txt": ["file", null],
          "/srv/fifo": [null, "other"],
          "/srv/gone": ["dir", null],
          "/srv/gone/f": ["file", null],
          "/srv/items.json": ["file", "file"],
          "/srv/link": [null, "symlink"],
          "/srv/mode.txt": ["file", "file"],
          "/srv/notes.json": ["file", "file"],
          "/srv/olddir/x": ["file", null],
          "/srv/olddir/y": ["file", null],
          "/srv/olddir/z": [null, "file"],
          "/tmp/verity/cache.json": [null, "file"],
        },
        "keep.txt (read only), the scaffold and the -wal are no changes of their own",
      );
      assert.equal(c.lossy, true, "big.bin is over the read budget");
      assert.match(
        c.problems.join("\n"),
        /big\.bin: 20000 bytes, over the read budget/,
      );
      const d = changesetDelta(null, c, new Set());
      const removed = d.business.removed.map((r) => `${r.region} ${r.key}`);
      assert.ok(
        removed.includes('/srv/items.json:$ [{"id":2}]'),
        removed.join("\n"),
      );
      assert.ok(
        removed.includes("/srv/db.sqlite:t [2]"),
        "row 2 is gone (WAL read)",
      );
      assert.ok(
        d.business.added.some((a) =>
          a.region === "/srv/db.sqlite:t" && a.key === "[3]"
        ),
      );
      assert.ok(
        !d.business.changed.some((x) => x.region.startsWith("/srv/notes.json")),
        "the same values, reordered and reformatted, are no change",
      );
      assert.deepEqual(
        d.business.changed.find((x) => x.region === "/srv/mode.txt:.")?.fields
          .map((f) => [f.field, f.before, f.after]),
        [["mode", 0o644, 0o600]],
      );
      const link = c.changes.find((p) => p.path === "/srv/link")!.after!;
      assert.equal(link.target, "/etc/passwd");
      const cache = c.changes.find((p) => p.path === "/tmp/verity/cache.json")!;
      assert.equal(cache.after?.format, "json");
      assert.equal(
        changesetDelta(c, c, new Set()).empty,
        true,
        "a session equals itself",
      );
      assert.equal(
        changesetDelta(null, c, new Set(c.changes.map((p) => p.path))).empty,
        true,
        "paths the control sessions change do not count",
      );
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "changeset: a tree wider or deeper than the budget is cut short and lossy",
  ignore: !asRoot,
  fn: async () => {
    const root = await Deno.makeTempDir({ prefix: "verity-changeset-" });
    try {
      const l: OverlayLayout = {
        layers: [{ at: "/", upper: `${root}/upper`, lower: null }],
        work: `${root}/work`,
        merged: `${root}/merged`,
        scaffold: [],
        owned: [],
      };
      let p = `${root}/upper`;
      for (let i = 0; i < 80; i++) {
        p += "/d";
      }
      Deno.mkdirSync(p, { recursive: true });
      for (let i = 0; i < 50; i++) {
        Deno.writeTextFileSync(`${root}/upper/f${i}`, "x");
      }
      const deep = readChangeset(l, { depth: 10 });
      assert.equal(deep.lossy, true);
      assert.match(deep.problems.join(), /deeper than 10 levels/);
      assert.equal(
        deep.changes.filter((c) => c.path.startsWith("/d")).length,
        11,
      );
      const wide = readChangeset(l, { entries: 20 });
      assert.equal(wide.lossy, true);
      assert.match(wide.problems.join(), /more than 20 entries/);
      assert.ok(wide.changes.length <= 20);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});
