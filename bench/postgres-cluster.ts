/**
 * A throwaway PostgreSQL cluster for the tests of one file (and for the postgres bench): initdb into a temp dir with the machine's
 * server binaries (`/usr/lib/postgresql/<n>/bin`), a unix socket in that dir and no TCP port (so parallel
 * test files never collide), `fsync=on`. PostgreSQL refuses to run as root, so under root (CI) the
 * server runs as the unprivileged `postgres` user the Debian package creates. With
 * `SESSIOND_TEST_DATABASE_URL` the tests use that server instead (then `stop`/`start` are not possible).
 */
import { execFile, execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";

const run = promisify(execFile);

export interface PostgresCluster {
  /** The admin database's URL (`postgres`); `createDatabase` gives each test its own. */
  readonly url: string;
  /** Whether this is a throwaway cluster that `stop`/`start` can restart. */
  readonly restartable: boolean;
  /** A new empty database; its URL. */
  createDatabase(name?: string): Promise<string>;
  /** Stops the server: `immediate` is a crash (no checkpoint), `fast` a clean shutdown. */
  stop(mode?: "immediate" | "fast"): Promise<void>;
  start(): Promise<void>;
  /** Stops it and deletes its files. */
  remove(): Promise<void>;
}

const BIN_ROOT = "/usr/lib/postgresql";

export function binDir(): string {
  const versions = existsSync(BIN_ROOT)
    ? readdirSync(BIN_ROOT)
        .filter((v) => existsSync(join(BIN_ROOT, v, "bin", "postgres")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const version = versions[0];
  if (version === undefined) {
    throw new Error(
      `no PostgreSQL server under ${BIN_ROOT}/*/bin: install it (apt-get install postgresql; npm test does) ` +
        "or set SESSIOND_TEST_DATABASE_URL",
    );
  }
  return join(BIN_ROOT, version, "bin");
}

const asRoot = process.getuid?.() === 0;

/** Runs a server binary, as `postgres` when this process is root. */
function command(bin: string, args: string[]): [string, string[]] {
  return asRoot ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
}

let counter = 0;

export async function startPostgres(): Promise<PostgresCluster> {
  const external = process.env.SESSIOND_TEST_DATABASE_URL;
  if (external) return externalCluster(external);
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), "sessiond-pg-"));
  if (asRoot) chownSync(dir, uid("postgres"), gid("postgres"));
  const data = join(dir, "data");
  const pgCtl = (args: string[]) => {
    const [file, argv] = command(join(bin, "pg_ctl"), ["-D", data, ...args]);
    return run(file, argv);
  };
  const [initFile, initArgs] = command(join(bin, "initdb"), [
    "-D",
    data,
    "-A",
    "trust",
    "-U",
    "postgres",
    "-E",
    "UTF8",
    "--no-instructions",
  ]);
  await run(initFile, initArgs);
  const options = `-c listen_addresses='' -k ${dir} -c fsync=on -c synchronous_commit=on -c max_connections=200`;
  let running = false;
  const start = async () => {
    await pgCtl(["-o", options, "-l", join(dir, "server.log"), "-w", "start"]);
    running = true;
  };
  const stopSync = () => {
    if (!running) return;
    const [file, argv] = command(join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "-w", "stop"]);
    try {
      execFileSync(file, argv, { stdio: "ignore" });
    } catch {}
    running = false;
  };
  // A worker that dies without its afterAll still takes its server with it.
  process.once("exit", () => {
    stopSync();
    rmSync(dir, { recursive: true, force: true });
  });
  await start();
  const url = `postgresql://postgres@/postgres?host=${encodeURIComponent(dir)}`;
  return {
    url,
    restartable: true,
    createDatabase: (name) =>
      createDatabase(url, name, (db) => `postgresql://postgres@/${db}?host=${encodeURIComponent(dir)}`),
    async stop(mode = "immediate") {
      await pgCtl(["-m", mode, "-w", "stop"]);
      running = false;
    },
    start,
    async remove() {
      stopSync();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function externalCluster(url: string): PostgresCluster {
  const unsupported = async () => {
    throw new Error("SESSIOND_TEST_DATABASE_URL is someone else's server: it cannot be stopped or started");
  };
  return {
    url,
    restartable: false,
    createDatabase: (name) =>
      createDatabase(url, name, (db) => {
        const u = new URL(url);
        u.pathname = `/${db}`;
        return u.toString();
      }),
    stop: unsupported,
    start: unsupported,
    remove: async () => {},
  };
}

async function createDatabase(
  adminUrl: string,
  name: string | undefined,
  urlOf: (db: string) => string,
): Promise<string> {
  const db = name ?? `t_${process.pid}_${++counter}_${Date.now().toString(36)}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${pg.escapeIdentifier(db)}`);
  } finally {
    await client.end();
  }
  return urlOf(db);
}

function uid(user: string): number {
  return Number(execFileSync("id", ["-u", user], { encoding: "utf8" }).trim());
}

function gid(user: string): number {
  return Number(execFileSync("id", ["-g", user], { encoding: "utf8" }).trim());
}
