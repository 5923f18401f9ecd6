import type { Command } from "commander";
import type { LoadedConfig } from "../../config/load.js";
import type { ConfigProblem } from "../../config/references.js";
import { isSessiondError } from "../../model/errors.js";
import { type GlobalOptions, loadCliConfig } from "../context.js";
import {
  type Finding,
  reachFindings,
  secretFindings,
  storeFindings,
  tokenFindings,
} from "../doctor/checks.js";
import { CliError } from "../errors.js";
import type { CliIo } from "../io.js";

export function registerDoctor(program: Command, io: CliIo): void {
  program
    .command("doctor")
    .description(
      "check the config (every problem, with file and line), the store, each channel and model endpoint (reachable, secret present) and the token file; one line each, exit 1 when anything is wrong",
    )
    .option("--offline", "skip the reachability checks (no network calls)")
    .action(async (_options: unknown, command: Command) => {
      const options = command.optsWithGlobals<GlobalOptions & { offline?: boolean }>();
      const findings = await diagnose(options, io, options.offline === true);
      for (const f of findings) io.stdout(`${f.ok ? "ok  " : "FAIL"}  ${f.what}: ${f.detail}\n`);
      const failed = findings.filter((f) => !f.ok).length;
      if (failed > 0) throw new CliError(`${failed} problem${failed === 1 ? "" : "s"} found`);
    });
}

async function diagnose(options: GlobalOptions, io: CliIo, offline: boolean): Promise<Finding[]> {
  let loaded: LoadedConfig;
  try {
    loaded = loadCliConfig(options, io);
  } catch (error) {
    if (!isSessiondError(error, "CONFIG_INVALID")) throw error;
    const problems = error.details?.problems as ConfigProblem[] | undefined;
    if (!problems) return [{ ok: false, what: "config", detail: error.message }];
    const file = error.message.replace(/ is not valid:[\s\S]*$/, "");
    return problems.map((p) => ({
      ok: false,
      what: "config",
      detail: `${file}${p.line === undefined ? "" : `:${p.line}`}: ${p.path}: ${p.message}`,
    }));
  }
  const { config } = loaded;
  const findings: Finding[] = [
    { ok: true, what: "config", detail: loaded.file ?? "no file (defaults and SESSIOND_* variables)" },
  ];
  findings.push(...(await secretFindings(config, io.env)));
  findings.push(...(await storeFindings(config)));
  findings.push(...tokenFindings(config.dataDir, io.env));
  if (!offline) findings.push(...(await reachFindings(config)));
  return findings;
}
