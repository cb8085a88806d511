import assert from "node:assert/strict";
import { generateArguments, type GeneratedArguments } from "./generate.ts";
import { validateSchema } from "./schema_validate.ts";

function ok(g: GeneratedArguments): Record<string, unknown> {
  if (!g.ok) {
    throw new Error(`expected arguments, got: ${g.reason} at ${g.path}`);
  }
  return g.arguments;
}

function obj(
  properties: Record<string, unknown>,
  required = Object.keys(properties),
): Record<string, unknown> {
  return { type: "object", properties, required };
}

Deno.test("generate: const, default, examples and enum come first", () => {
  const g = generateArguments(obj({
    c: { type: "string", const: "fixed" },
    d: { type: "integer", default: 7, minimum: 1 },
    e: { type: "string", examples: ["sample-a"] },
    n: { type: "string", enum: ["red", "green", "blue"] },
  }));
  const a = ok(g);
  assert.equal(a.c, "fixed");
  assert.equal(a.d, 7);
  assert.equal(a.e, "sample-a");
  assert.ok(["red", "green", "blue"].includes(a.n as string));
  assert.ok(g.ok);
  assert.deepEqual(g.sources.map((s) => s.source), [
    "const",
    "default",
    "examples",
    "enum",
  ]);
});

Deno.test("generate: a default that breaks its own schema is not used", () => {
  const a = ok(
    generateArguments(
      obj({ n: { type: "integer", default: 500, maximum: 10, minimum: 1 } }),
    ),
  );
  assert.ok((a.n as number) >= 1 && (a.n as number) <= 10);
});

Deno.test("generate: formats give values that validate", () => {
  const formats = [
    "date",
    "date-time",
    "time",
    "email",
    "uri",
    "uuid",
    "ipv4",
    "ipv6",
    "hostname",
    "duration",
  ];
  const props = Object.fromEntries(
    formats.map((
      f,
    ) => [`x_${f.replace("-", "_")}`, { type: "string", format: f }]),
  );
  const schema = obj(props);
  const a = ok(generateArguments(schema));
  assert.equal(validateSchema(schema, a).status, "valid");
  assert.match(
    a.x_uuid as string,
    /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
  );
  assert.equal(
    a.x_email,
    (a.x_email as string).includes("@") ? a.x_email : "not an email",
  );
});

Deno.test("generate: format wins over a name hint", () => {
  const a = ok(
    generateArguments(obj({ city: { type: "string", format: "email" } })),
  );
  assert.match(a.city as string, /@/);
});

Deno.test("generate: name hints match whole words, camelCase and acronyms", () => {
  const a = ok(generateArguments(obj({
    cityName: { type: "string" },
    baseURL: { type: "string" },
    userEmail: { type: "string" },
    IPAddress: { type: "string" },
    country_code: { type: "string" },
    timezone: { type: "string" },
    searchQuery: { type: "string" },
    currency: { type: "string" },
    maxResults: { type: "integer" },
    latitude: { type: "number" },
    capacity: { type: "string" }, // contains "city" but not as a word
  })));
  assert.ok(
    ["Paris", "Tokyo", "London", "Berlin", "Toronto"].includes(
      a.cityName as string,
    ),
  );
  assert.match(a.baseURL as string, /^https:\/\//);
  assert.match(a.userEmail as string, /^[a-z]+@example\.(com|org)$/);
  assert.equal(a.IPAddress, "192.0.2.10");
  assert.match(a.country_code as string, /^[A-Z]{2}$/);
  assert.match(a.timezone as string, /^[A-Z][a-z]+\/[A-Za-z_]+$/);
  assert.equal(typeof a.searchQuery, "string");
  assert.match(a.currency as string, /^[A-Z]{3}$/);
  assert.ok(Number.isInteger(a.maxResults));
  assert.ok(typeof a.latitude === "number" && Math.abs(a.latitude) <= 90);
  assert.ok(
    !["Paris", "Tokyo", "London", "Berlin", "Toronto"].includes(
      a.capacity as string,
    ),
  );
});

Deno.test("generate: numeric bounds, exclusive bounds, integers and multipleOf", () => {
  for (let seed = 1; seed <= 25; seed++) {
    const a = ok(generateArguments(
      obj({
        i: { type: "integer", minimum: 10, maximum: 12 },
        x: { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 1 },
        m: { type: "integer", multipleOf: 7, minimum: 20, maximum: 40 },
        neg: { type: "integer", maximum: -5 },
      }),
      { seed },
    ));
    assert.ok(
      Number.isInteger(a.i) && (a.i as number) >= 10 && (a.i as number) <= 12,
      `i=${a.i}`,
    );
    assert.ok((a.x as number) > 0 && (a.x as number) < 1, `x=${a.x}`);
    assert.ok([21, 28, 35].includes(a.m as number), `m=${a.m}`);
    assert.ok((a.neg as number) <= -5, `neg=${a.neg}`);
  }
});

Deno.test("generate: string lengths and patterns", () => {
  for (let seed = 1; seed <= 25; seed++) {
    const a = ok(generateArguments(
      obj({
        short: { type: "string", maxLength: 3 },
        long: { type: "string", minLength: 40 },
        sku: { type: "string", pattern: "^[A-Z]{2,3}-\\d{3}(-[a-z]+)?$" },
        zip: { type: "string", pattern: "^\\d{5}$" },
        slug: {
          type: "string",
          pattern: "^[a-z0-9]+(?:-[a-z0-9]+)*$",
          minLength: 8,
          maxLength: 12,
        },
      }),
      { seed },
    ));
    assert.ok((a.short as string).length <= 3);
    assert.ok((a.long as string).length >= 40);
    assert.match(a.sku as string, /^[A-Z]{2,3}-\d{3}(-[a-z]+)?$/);
    assert.match(a.zip as string, /^\d{5}$/);
    const slug = a.slug as string;
    assert.ok(
      /^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(slug) && slug.length >= 8 &&
        slug.length <= 12,
      slug,
    );
  }
});

Deno.test("generate: nested objects, arrays with minItems and uniqueItems, singular item hints", () => {
  const schema = obj({
    cities: {
      type: "array",
      items: { type: "string" },
      minItems: 3,
      uniqueItems: true,
    },
    owner: obj({
      email: { type: "string" },
      age: { type: "integer", minimum: 18 },
    }),
    points: {
      type: "array",
      items: obj({ x: { type: "number" }, y: { type: "number" } }),
      minItems: 2,
    },
  });
  const a = ok(generateArguments(schema));
  const cities = a.cities as string[];
  assert.equal(cities.length, 3);
  assert.equal(new Set(cities).size, 3);
  assert.ok(
    cities.every((c) =>
      ["Paris", "Tokyo", "London", "Berlin", "Toronto"].includes(c)
    ),
  );
  assert.match((a.owner as { email: string }).email, /@/);
  assert.equal((a.points as unknown[]).length, 2);
  assert.equal(validateSchema(schema, a).status, "valid");
});

Deno.test("generate: local $ref, $defs and definitions, recursion stops at optional", () => {
  const schema = {
    type: "object",
    $defs: {
      address: obj({
        city: { type: "string" },
        postalCode: { type: "string", pattern: "^\\d{5}$" },
      }),
    },
    definitions: {
      node: {
        type: "object",
        properties: {
          name: { type: "string" },
          child: { $ref: "#/definitions/node" },
        },
        required: ["name"],
      },
    },
    properties: {
      home: { $ref: "#/$defs/address" },
      tree: { $ref: "#/definitions/node" },
    },
    required: ["home", "tree"],
  };
  const a = ok(generateArguments(schema));
  assert.match((a.home as { postalCode: string }).postalCode, /^\d{5}$/);
  assert.equal(typeof (a.tree as { name: string }).name, "string");
});

Deno.test("generate: anyOf/oneOf take the first satisfiable branch, null last", () => {
  const a = ok(generateArguments(obj({
    when: { anyOf: [{ type: "null" }, { type: "string", format: "date" }] },
    id: {
      oneOf: [{ type: "string", minLength: 9, maxLength: 2 }, {
        type: "integer",
        minimum: 1,
      }],
    },
  })));
  assert.match(a.when as string, /^\d{4}-\d{2}-\d{2}$/);
  assert.ok(Number.isInteger(a.id));
});

Deno.test("generate: optional properties only when a realistic value exists", () => {
  const g = generateArguments({
    type: "object",
    properties: {
      query: { type: "string" },
      limit: { type: "integer", default: 10 },
      zzz: { type: "string" },
      flag: { type: "boolean" },
    },
    required: ["query"],
  });
  const a = ok(g);
  assert.deepEqual(Object.keys(a).sort(), ["limit", "query"]);
});

Deno.test("generate: same seed, same arguments; the tool name separates streams", () => {
  const schema = obj({
    a: { type: "number" },
    b: { type: "number" },
    id: { type: "string", format: "uuid" },
  });
  assert.deepEqual(
    generateArguments(schema, { seed: 9, label: "t" }),
    generateArguments(schema, { seed: 9, label: "t" }),
  );
  assert.notDeepEqual(
    ok(generateArguments(schema, { seed: 9, label: "t" })),
    ok(generateArguments(schema, { seed: 10, label: "t" })),
  );
  assert.notDeepEqual(
    ok(generateArguments(schema, { seed: 9, label: "t" })),
    ok(generateArguments(schema, { seed: 9, label: "u" })),
  );
});

Deno.test("generate: unsatisfiable schemas are reported with the place and the reason, never called with junk", () => {
  const cases: [unknown, RegExp, string][] = [
    [
      obj({ code: { type: "string", minLength: 5, maxLength: 2 } }),
      /minLength 5 exceeds maxLength 2/,
      "/code",
    ],
    [
      obj({ n: { type: "integer", minimum: 1.2, maximum: 1.8 } }),
      /no integer in \[1\.2, 1\.8\]/,
      "/n",
    ],
    [
      obj({ n: { type: "number", minimum: 3, maximum: 2 } }),
      /empty range/,
      "/n",
    ],
    [obj({ x: false }), /schema is false/, "/x"],
    [
      obj({ x: { $ref: "https://example.com/s.json" } }),
      /can't resolve reference https:\/\/example.com\/s.json/,
      "",
    ],
    [
      obj({ x: { $ref: "#/$defs/missing" } }),
      /can't resolve reference #\/\$defs\/missing/,
      "",
    ],
    [
      obj({ x: { type: "string", const: "fixed", format: "email" } }),
      /const "fixed" contradicts the schema/,
      "/x",
    ],
    [
      obj({ x: { type: "string", pattern: "^(?=a)b$" } }),
      /lookarounds are not supported/,
      "/x",
    ],
    [
      obj({ x: { type: "string", pattern: "^(a)\\1$" } }),
      /backreferences are not supported/,
      "/x",
    ],
    [
      obj({ x: { type: "string", enum: ["a", "b"], minLength: 3 } }),
      /no enum value satisfies/,
      "/x",
    ],
    [
      obj({ x: { type: "array", minItems: 3, maxItems: 1 } }),
      /minItems 3 exceeds maxItems 1/,
      "/x",
    ],
    [
      {
        type: "object",
        properties: {},
        required: ["ghost"],
        additionalProperties: false,
      },
      /not declared and additionalProperties is false/,
      "/ghost",
    ],
    [{ type: "string" }, /not "object"/, ""],
    [
      { $schema: "http://json-schema.org/draft-04/schema#", type: "object" },
      /unsupported JSON Schema dialect/,
      "",
    ],
  ];
  for (const [schema, re, path] of cases) {
    const g = generateArguments(schema);
    assert.equal(g.ok, false, JSON.stringify(schema));
    if (!g.ok) {
      assert.match(g.reason, re, JSON.stringify(schema));
      assert.equal(g.path, path, JSON.stringify(schema));
    }
  }
});

Deno.test("generate: the final check catches what the generator missed (not, if/then)", () => {
  const g = generateArguments(
    obj({ x: { type: "string", not: { type: "string" } } }),
  );
  assert.equal(g.ok, false);
  if (!g.ok) {
    assert.match(
      g.reason,
      /generated arguments fail the inputSchema: \/x must NOT be valid/,
    );
  }
});

Deno.test("generate: optional properties that break the schema are dropped (minimal shape)", () => {
  const g = generateArguments({
    type: "object",
    properties: { city: { type: "string" }, country: { type: "string" } },
    required: ["city"],
    not: { required: ["country"] },
  });
  assert.ok(g.ok);
  if (g.ok) {
    assert.equal(g.shape, "minimal");
    assert.deepEqual(Object.keys(g.arguments), ["city"]);
  }
});

Deno.test("generate: a missing inputSchema means no arguments; draft-07 schemas work", () => {
  assert.deepEqual(ok(generateArguments(undefined)), {});
  const a = ok(generateArguments({
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: {
      pt: {
        type: "array",
        items: [{ type: "number", minimum: -90, maximum: 90 }, {
          type: "string",
        }],
        additionalItems: false,
      },
    },
    required: ["pt"],
  }));
  const pt = a.pt as unknown[];
  assert.equal(pt.length, 2);
  assert.equal(typeof pt[0], "number");
  assert.equal(typeof pt[1], "string");
});
