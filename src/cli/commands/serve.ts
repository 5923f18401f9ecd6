import type { Command } from "commander";
import type { AttachedChannels } from "../../channels/index.js";
import { DEFAULT_GRACE_MS, DEFAULT_HOST, DEFAULT_PORT } from "../../gateway/defaults.js";
import type { startGateway } from "../../gateway/server.js";
import { startTracing, stopTracing } from "../../tracing/tracer.js";
import type { RecoveryReport } from "../../turns/inbox-recovery.js";
import { type GlobalOptions, loadCliConfig, routingFromConfig } from "../context.js";
import type { CliIo } from "../io.js";
import { intIn } from "../options.js";
import { requireSecrets } from "../preflight.js";
import { lockDataDir } from "../serve-lock.js";

interface ServeOptions extends GlobalOptions {
  port?: number;
  host?: string;
  trustProxy?: string;
  grace?: number;
  bodyLimit?: number;
}

/** Resolves on the first SIGTERM or SIGINT. */
export type StopSignal = () => Promise<string>;

function processSignals(): Promise<string> {
  return new Promise((resolve) => {
    const stop = (signal: string) => {
      process.off("SIGTERM", stop);
      process.off("SIGINT", stop);
      resolve(signal);
    };
    process.on("SIGTERM", stop);
    process.on("SIGINT", stop);
  });
}

export function registerServe(program: Command, io: CliIo, stopSignal: StopSignal = processSignals): void {
  program
    .command("serve")
    .description("run the HTTP gateway (binds 127.0.0.1 unless --host says otherwise)")
    .option(
      "--port <port>",
      `port to listen on (default: $SESSIOND_PORT, else ${DEFAULT_PORT})`,
      intIn(0, 65535),
    )
    .option("--host <host>", `address to bind (default: $SESSIOND_HOST, else ${DEFAULT_HOST})`)
    .option(
      "--trust-proxy <header>",
      "take the client IP from this header (e.g. x-forwarded-for); only behind a proxy that sets it",
    )
    .option(
      "--grace <ms>",
      `shutdown grace period for running turns (default ${DEFAULT_GRACE_MS})`,
      intIn(0, 3_600_000),
    )
    .option("--body-limit <bytes>", "largest request body (default 1 MiB)", intIn(1, 1024 * 1024 * 1024))
    .action(async (_options: unknown, command: Command) => {
      const options = command.optsWithGlobals<ServeOptions>();
      // The gateway and the engine are loaded by this command alone, while the config is read.
      const modules = Promise.all([
        import("../../engine.js"),
        import("../../runtimes/resolve.js"),
        import("../../gateway/server.js"),
        import("../../gateway/token.js"),
        import("../../gateway/web/dir.js"),
        import("../../runtimes/index.js"),
        import("../../gateway/heap.js"),
        import("../../gateway/store-fallback.js"),
      ]);
      const loaded = loadCliConfig(options, io);
      const routing = routingFromConfig(loaded);
      const { config } = loaded;
      const [
        { createEngine },
        { agentRuntimes },
        { startGateway },
        { resolveToken },
        { dashboardLine },
        { describeRuntime },
        { limitHeapGrowth },
        { createEngineOrFallback, fallbackWarning },
      ] = await modules;
      // Every missing key and secret at once, then the runtimes: all before the engine opens the store.
      await requireSecrets(config, io.env, loaded.file);
      agentRuntimes(config, routing.agents);
      // Secrets are read before the engine opens too: a missing bot token fails without touching the store.
      // The channel adapters (and their packages, e.g. jose for Teams) load only when a channel is configured.
      const configured = config.channels ?? {};
      const channelsModule = Object.values(configured).some(
        (settings) => settings && settings.enabled !== false,
      )
        ? await import("../../channels/index.js")
        : undefined;
      const channels = channelsModule?.createChannels(configured, { env: io.env });
      let attached: AttachedChannels | undefined;
      const token = resolveToken(config.dataDir, io.env);
      const tracing = await startTracing(io.env, config.dataDir);
      limitHeapGrowth();
      // One gateway per data dir, before the engine opens: a second `serve` here touches nothing. Gateways
      // that share a PostgreSQL store coordinate through its leases and heartbeats instead.
      const lock = sharedStore(config) ? undefined : lockDataDir(config.dataDir);
      if (lock?.unlocked) io.stderr(`warning: the data dir cannot be locked (${lock.unlocked})\n`);
      // GoClaw's fallback, loudly: on the memory store when the configured embedded store cannot be opened.
      // PostgreSQL is shared: never replaced by memory; waited for (not listening meanwhile) instead.
      const opened = await createEngineOrFallback(config, createEngine, loaded.storeFallback, {
        onRetry: (line) => io.stderr(`warning: ${line}\n`),
      }).catch((error: unknown) => {
        lock?.release();
        throw error;
      });
      const { engine, fallback } = opened;
      if (fallback) io.stderr(`warning: ${fallbackWarning(fallback)}\n`);
      let gateway: Awaited<ReturnType<typeof startGateway>>;
      let recovered!: () => void;
      const recovering = new Promise<void>((r) => {
        recovered = r;
      });
      try {
        const envPort = io.env.SESSIOND_PORT ? intIn(0, 65535)(io.env.SESSIOND_PORT) : undefined;
        const trustProxyHeader = options.trustProxy ?? io.env.SESSIOND_TRUST_PROXY;
        gateway = await startGateway({
          engine,
          token: token.token,
          host: options.host ?? io.env.SESSIOND_HOST ?? DEFAULT_HOST,
          port: options.port ?? envPort ?? DEFAULT_PORT,
          ...(trustProxyHeader ? { trustProxyHeader } : {}),
          ...(options.grace !== undefined ? { graceMs: options.grace } : {}),
          ...(options.bodyLimit !== undefined ? { bodyLimit: options.bodyLimit } : {}),
          ...(fallback ? { storeFallback: fallback } : {}),
          // The port is bound first (a taken one fails before recovery writes anything); requests wait for
          // recovery, so a key's recovered inputs run ahead of its new ones.
          opening: recovering,
          // The channels stop within the grace period: a turn stuck at its model is cancelled after it.
          closing: async () => {
            await attached?.close();
          },
          ...(channels && channels.adapters.length > 0 ? { channelStates: channels.status } : {}),
          ...(channelsModule && channels && channels.adapters.length > 0
            ? {
                publicRoutes: (deps) => {
                  attached = channels.attach(channelsModule.channelHost(deps));
                  return attached.app;
                },
              }
            : {}),
        });
      } catch (error) {
        await engine.close().catch(() => {});
        lock?.release();
        throw error;
      }
      let report: RecoveryReport;
      try {
        report = await engine.recover((taken) =>
          io.stdout(`took over inputs of a stopped gateway: ${counts(taken)}\n`),
        );
      } catch (error) {
        recovered();
        await gateway.close();
        lock?.release();
        throw error;
      }
      recovered();
      if (report.requeued + report.answered + report.interrupted > 0) {
        io.stdout(`recovered inputs: ${counts(report)}\n`);
      }
      lock?.listening(gateway.url);
      // A platform that cannot be reached is retried in the background: one line each, never an exit.
      const channelsDown = (await attached?.start()) ?? [];
      io.stdout(`sessiond gateway listening on ${gateway.url}\n`);
      io.stdout(
        token.source === "env"
          ? "access token: from $SESSIOND_TOKEN\n"
          : `access token: ${token.generated ? "generated and " : ""}stored in ${token.path} (mode 0600)\n`,
      );
      io.stdout(`store: ${engine.store.backend} in ${engine.dataDir}\n`);
      if (tracing.enabled) io.stdout(`tracing: OTLP/HTTP (${tracing.reason})\n`);
      io.stdout(`${dashboardLine(gateway.url)}\n`);
      for (const agent of engine.routing.agents) {
        io.stdout(`agent ${agent}: ${describeRuntime(engine.runtimeFor(agent))}\n`);
      }
      for (const line of channels?.describe(gateway.url) ?? []) io.stdout(`channel ${line}\n`);
      for (const line of channelsDown) io.stderr(`warning: ${line}\n`);
      for (const warning of await engine.startupWarnings()) io.stderr(`warning: ${warning}\n`);
      const signal = await stopSignal();
      io.stdout(`${signal}: shutting down\n`);
      await gateway.close();
      await stopTracing();
      lock?.release();
    });
}

function sharedStore(config: { store?: unknown }): boolean {
  const store = config.store as { backend?: unknown } | undefined;
  return store?.backend === "postgres";
}

function counts(report: RecoveryReport): string {
  return `${report.requeued} queued again, ${report.answered} already answered, ${report.interrupted} interrupted`;
}
