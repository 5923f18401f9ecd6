// The PostgreSQL clients side by side on the store's usual batch (postgres/sql.ts `writeAlone`: 100 appends to
// 100 stored sessions, each session updated only at the entry count it was planned on, the entries with their
// search columns, all in one statement), same rows, same server, variants alternated in rounds:
//   pg-text        `pg`, unnamed statement, JS arrays as parameters (what the store did)
//   pg-named       `pg`, the same with a named prepared statement
//   pg-literals    `pg`, named, each column pre-built as one array literal string by a cheap serializer
//   pg-json        `pg`, named, rows as two JSON parameters (`json_to_recordset`)
//   postgres-*     the `postgres` package (porsager), prepared: arrays / JSON
//   postgres-copy  the `postgres` package: BEGIN, the checked update, COPY entries FROM STDIN, COMMIT
//   store          PostgresStore.append from 100 concurrent sessions (the whole store, for reference)
//   raw            the bench's baseline: 100 rows of 7 columns per transaction into an unindexed table
// Prints appends/s and client CPU (µs, this process) per append, medians over the rounds.
// Run from a built checkout: node scripts/profile/pg-clients.mjs [batches=40] [rounds=3] [only=name,name]
// (with --cpu-prof --cpu-prof-dir=DIR and `only=store`, cpu-summary.mjs says where the store's CPU goes)
// The `postgres` package is not a dependency: POSTGRES_JS=<dir>/node_modules/postgres/src/index.js to include it
// (e.g. `npm install --prefix /tmp/pgjs postgres`); without it those rows are left out.
import { performance } from "node:perf_hooks";
import pg from "pg";

const root = new URL("../../dist/", import.meta.url).href;
const { startPostgres } = await import(`${root}bench/postgres-cluster.js`);
const { PostgresStore } = await import(`${root}src/store/postgres/postgres-store.js`);
const { tsvectorOf } = await import(`${root}src/store/postgres/search-words.js`);
const { messageContents, userMessage, BENCH_INIT, benchKey } = await import(`${root}bench/support.js`);

const batches = Number(process.argv[2] ?? 40);
const rounds = Number(process.argv[3] ?? 3);
const SESSIONS = 100;
const CONTENTS = messageContents(1000);
const only = process.argv[4]?.split(",");
const wanted = (name) => !only || only.includes(name);
const postgresJs = process.env.POSTGRES_JS ? (await import(process.env.POSTGRES_JS)).default : undefined;

const SET = `title = u.title, created_at = u.created_at, last_activity_at = u.last_activity_at,
  entry_count = u.entry_count, message_count = u.message_count, approx_tokens = u.approx_tokens,
  context_from_seq = u.context_from_seq, last_compaction_seq = u.last_compaction_seq`;
const SESSION_COLS = `title, created_at, last_activity_at, entry_count, message_count, approx_tokens,
  context_from_seq, last_compaction_seq, id, expected_count, key`;
const ENTRY_COLS = "session_id, seq, id, ts, type, idem_key, data, search_words, search_cjk";
const update = (source) => `UPDATE sessions AS s SET ${SET} FROM ${source}
  WHERE s.id = u.id AND s.key = u.key AND s.state = 'active' AND s.entry_count = u.expected_count RETURNING s.sid`;
const insert = (
  source,
) => `INSERT INTO entries (sid, seq, id, ts, type, idem_key, data, search_words, search_cjk)
  SELECT s.sid, u.seq, u.id, u.ts, u.type, u.idem_key, u.data, u.search_words, u.search_cjk
  FROM ${source} JOIN sessions s ON s.id = u.session_id RETURNING 1`;
const checked = (n, sessions, entries) => `WITH u AS (${update(sessions)}), e AS (${insert(entries)})
  SELECT sessiond_expect((SELECT count(*) FROM u) = ${n} AND (SELECT count(*) FROM e) = ${n})`;
const SESSION_TYPES = "text,bigint,bigint,int,int,bigint,int,int,text,int,text".split(",");
const ENTRY_TYPES = "text,int,text,bigint,text,text,text,tsvector,text".split(",");
const arraysOf = (types, from) => `unnest(${types.map((t, i) => `$${from + i}::${t}[]`).join(", ")})`;
const ARRAYS_SQL = checked(
  SESSIONS,
  `${arraysOf(SESSION_TYPES, 1)} AS u(${SESSION_COLS})`,
  `${arraysOf(ENTRY_TYPES, 12)} AS u(${ENTRY_COLS})`,
);
const recordOf = (cols, types) =>
  cols
    .split(",")
    .map((c, i) => `${c.trim()} ${types[i]}`)
    .join(", ");
const JSON_SQL = checked(
  SESSIONS,
  `json_to_recordset($1::text::json) AS u(${recordOf(SESSION_COLS, SESSION_TYPES)})`,
  `json_to_recordset($2::text::json) AS u(${recordOf(ENTRY_COLS, ENTRY_TYPES)})`,
);

/** The batch's rows, as the store builds them (entry data as JSON text, the words as a tsvector literal). */
function batchRows(sessions, tag, b) {
  const now = Date.now();
  const sessionRows = [];
  const entryRows = [];
  for (const [i, s] of sessions.entries()) {
    const content = CONTENTS[(i * 31 + b + 1) % CONTENTS.length];
    const seq = s.count + 1;
    sessionRows.push(["", s.createdAt, now, seq, seq, seq * 50, 1, null, s.id, s.count, s.key]);
    const data = JSON.stringify({ ts: now, message: userMessage(content) });
    entryRows.push([s.id, seq, `${tag}-${b}-${i}`, now, "message", null, data, tsvectorOf(content), null]);
    s.count = seq;
  }
  return { sessionRows, entryRows };
}

const columns = (rows) => rows[0].map((_, c) => rows.map((r) => r[c]));

/** An array literal for a text-typed array parameter: what pg's arrayString does, in one pass. */
function literal(values) {
  let out = "{";
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (i > 0) out += ",";
    if (v === null || v === undefined) out += "NULL";
    else if (typeof v === "number") out += String(v);
    else out += `"${String(v).replace(/[\\"]/g, "\\$&")}"`;
  }
  return `${out}}`;
}

const objects = (cols, rows) => {
  const names = cols.split(",").map((c) => c.trim());
  return JSON.stringify(rows.map((r) => Object.fromEntries(names.map((n, i) => [n, r[i]]))));
};

function pgVariant(kind) {
  return {
    name: `pg-${kind}`,
    async open(url) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      return {
        async write({ sessionRows, entryRows }) {
          const cols = [...columns(sessionRows), ...columns(entryRows)];
          if (kind === "text") await client.query(ARRAYS_SQL, cols);
          else if (kind === "named") await client.query({ name: "a", text: ARRAYS_SQL, values: cols });
          else if (kind === "literals")
            await client.query({ name: "l", text: ARRAYS_SQL, values: cols.map(literal) });
          else
            await client.query({
              name: "j",
              text: JSON_SQL,
              values: [objects(SESSION_COLS, sessionRows), objects(ENTRY_COLS, entryRows)],
            });
        },
        close: () => client.end(),
      };
    },
  };
}

function postgresVariant(kind) {
  return {
    name: `postgres-${kind}`,
    async open(url) {
      const sql = postgresJs(url, { max: 1, onnotice: () => {} });
      return {
        async write({ sessionRows, entryRows }) {
          if (kind === "arrays") {
            const cols = [...columns(sessionRows), ...columns(entryRows)];
            await sql.unsafe(ARRAYS_SQL, cols, { prepare: true });
          } else if (kind === "json") {
            await sql.unsafe(JSON_SQL, [objects(SESSION_COLS, sessionRows), objects(ENTRY_COLS, entryRows)], {
              prepare: true,
            });
          } else {
            await sql.begin(async (tx) => {
              const [row] = await tx.unsafe(
                `WITH u AS (${update(`json_to_recordset($1::text::json) AS u(${recordOf(SESSION_COLS, SESSION_TYPES)})`)})
                 SELECT sessiond_expect(count(*) = ${SESSIONS}) FROM u`,
                [objects(SESSION_COLS, sessionRows)],
                { prepare: true },
              );
              if (!row) throw new Error("no row");
              const sids = sessionSids;
              const stream = await tx
                .unsafe(
                  "COPY entries (sid, seq, id, ts, type, idem_key, data, search_words, search_cjk) FROM STDIN",
                )
                .writable();
              const text = entryRows
                .map((r) => [sids.get(r[0]), ...r.slice(1)].map(copyField).join("\t"))
                .join("\n");
              await new Promise((resolve, reject) => {
                stream.on("error", reject);
                stream.on("finish", resolve);
                stream.end(`${text}\n`);
              });
            });
          }
        },
        close: () => sql.end(),
      };
    },
  };
}

const copyField = (v) =>
  v === null || v === undefined
    ? "\\N"
    : String(v).replace(/[\\\t\n\r]/g, (c) => ({ "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r" })[c]);

let sessionSids = new Map();

const variants = [pgVariant("text"), pgVariant("named"), pgVariant("literals"), pgVariant("json")];
if (postgresJs) variants.push(postgresVariant("arrays"), postgresVariant("json"), postgresVariant("copy"));

async function storeAppends(url) {
  const store = await PostgresStore.open({ url });
  try {
    const keys = Array.from({ length: SESSIONS }, (_, s) => benchKey(s));
    await Promise.all(
      keys.map((key, s) => store.append(key, [userMessage(CONTENTS[s])], { init: BENCH_INIT })),
    );
    const cpu = process.cpuUsage();
    const start = performance.now();
    await Promise.all(
      keys.map(async (key, s) => {
        for (let i = 1; i <= batches; i++)
          await store.append(key, [userMessage(CONTENTS[(s * 31 + i) % CONTENTS.length])], {
            init: BENCH_INIT,
          });
      }),
    );
    return measured(start, cpu, SESSIONS * batches);
  } finally {
    await store.close();
  }
}

async function raw(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE TABLE IF NOT EXISTS raw_entries (sid bigint, seq integer, id text COLLATE "C",
      ts bigint, type text, idem_key text, data text, PRIMARY KEY (sid, seq))`);
    await client.query("TRUNCATE raw_entries");
    const cpu = process.cpuUsage();
    const start = performance.now();
    for (let t = 0; t < batches; t++) {
      const sids = Array.from({ length: SESSIONS }, (_, s) => s);
      await client.query("BEGIN");
      await client.query(
        `INSERT INTO raw_entries SELECT * FROM unnest($1::bigint[], $2::int[], $3::text[], $4::bigint[],
          $5::text[], $6::text[], $7::text[])`,
        [
          sids,
          sids.map(() => t + 1),
          sids.map((s) => `${t}-${s}`),
          sids.map(() => Date.now()),
          sids.map(() => "message"),
          sids.map(() => null),
          sids.map((s) =>
            JSON.stringify({ role: "user", content: CONTENTS[(s * 31 + t) % CONTENTS.length] }),
          ),
        ],
      );
      await client.query("COMMIT");
    }
    return measured(start, cpu, SESSIONS * batches);
  } finally {
    await client.end();
  }
}

function measured(start, cpu, appends) {
  const used = process.cpuUsage(cpu);
  return {
    perSec: (appends * 1000) / (performance.now() - start),
    cpuUs: (used.user + used.system) / appends,
  };
}

async function runVariant(variant, url, sessions) {
  const conn = await variant.open(url);
  try {
    await conn.write(batchRows(sessions, `${variant.name}-warm`, -1));
    const prepared = Array.from({ length: batches }, (_, b) => batchRows(sessions, variant.name, b));
    const cpu = process.cpuUsage();
    const start = performance.now();
    for (const rows of prepared) await conn.write(rows);
    return measured(start, cpu, SESSIONS * batches);
  } finally {
    await conn.close();
  }
}

const cluster = await startPostgres();
try {
  const url = await cluster.createDatabase();
  const setup = await PostgresStore.open({ url });
  const keys = Array.from({ length: SESSIONS }, (_, s) => `clients-${s}`);
  await Promise.all(keys.map((key) => setup.append(key, [userMessage("first")], { init: BENCH_INIT })));
  await setup.close();
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const { rows } = await admin.query(
    "SELECT sid, id, key, created_at, entry_count FROM sessions WHERE key LIKE 'clients-%' ORDER BY key",
  );
  await admin.end();
  const sessions = rows.map((r) => ({
    id: r.id,
    key: r.key,
    createdAt: Number(r.created_at),
    count: r.entry_count,
  }));
  sessionSids = new Map(rows.map((r) => [r.id, r.sid]));
  const results = new Map();
  const note = (name, r) => results.set(name, [...(results.get(name) ?? []), r]);
  for (let round = 0; round < rounds; round++) {
    if (wanted("raw")) note("raw", await raw(url));
    for (const variant of variants.filter((v) => wanted(v.name)))
      note(variant.name, await runVariant(variant, url, sessions));
    if (wanted("store")) note("store", await storeAppends(await cluster.createDatabase()));
    process.stderr.write(`round ${round + 1}/${rounds} done\n`);
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`${batches} batches of ${SESSIONS} appends, ${rounds} rounds (medians; appends/s range)`);
  console.log("variant            appends/s        (range)   client CPU µs/append");
  for (const [name, rs] of results) {
    const per = rs.map((r) => r.perSec);
    console.log(
      `${name.padEnd(16)} ${median(per).toFixed(0).padStart(9)} ${`(${Math.min(...per).toFixed(0)}-${Math.max(...per).toFixed(0)})`.padStart(15)} ${median(
        rs.map((r) => r.cpuUs),
      )
        .toFixed(1)
        .padStart(10)}`,
    );
  }
} finally {
  await cluster.remove();
}
