import type { Command } from "commander";
import { createLogger } from "../../observability/logger.ts";
import { startService, type RunningService } from "../../service.ts";
import { configOrExit } from "../context.ts";
import { exitCodes } from "../exit-codes.ts";
import type { ConfigOverrides } from "../../config/config.ts";

export function registerServeCommand(program: Command): void {
  program
    .command("serve")
    .description("run the service: HTTP API, /healthz and /metrics, background ledger jobs"
      + " (exit 1 naming a listener that cannot open)")
    .option("--http-port <port>", "HTTP port (CLEARLINE_HTTP_PORT, default 8080)")
    .option("--iso8583-port <port>", "ISO 8583 scheme endpoint port (CLEARLINE_ISO8583_PORT)")
    .action(async (options: { httpPort?: string; iso8583Port?: string }) => {
      const overrides: ConfigOverrides = {};
      if (options.httpPort !== undefined) overrides.httpPort = options.httpPort;
      if (options.iso8583Port !== undefined) overrides.iso8583Port = options.iso8583Port;
      const config = configOrExit(overrides);
      const logger = createLogger({ level: config.logLevel });
      // The embedded server died and would not start again (decision 0081): stop, exit 1, say why.
      const running: { service?: RunningService } = {};
      const onDatabaseLost = (error: Error) => {
        process.stderr.write(`clearline: ${error.message}\n`);
        setTimeout(() => process.exit(exitCodes.failure), config.shutdownTimeoutMs).unref();
        const stopped = running.service?.stop() ?? Promise.resolve();
        void stopped.finally(() => process.exit(exitCodes.failure));
      };
      const starting = startService(config, logger, { onDatabaseLost });
      const service = await starting.catch((error: unknown) => {
        // startService closed what it had opened; should anything still hold the process, it
        // ends all the same: a serve that failed to start never runs half-alive.
        setTimeout(() => process.exit(exitCodes.failure), config.shutdownTimeoutMs).unref();
        throw error;
      });
      running.service = service;
      logger.info({ http: service.httpUrl, embeddedDatabase: service.database.embedded, home: config.home }, "clearline is serving");
      process.stderr.write(`clearline serving on ${service.httpUrl} (health: ${service.httpUrl}/healthz, metrics: ${service.httpUrl}/metrics)\n`);
      if (service.iso8583Port !== undefined) process.stderr.write(`ISO 8583 scheme endpoint on port ${service.iso8583Port} (2-byte length header, ISO 8583:1987 ASCII)\n`);

      const shutdown = (signal: string) => {
        logger.info({ signal }, "stopping");
        const forced = setTimeout(() => process.exit(1), config.shutdownTimeoutMs);
        forced.unref();
        service.stop().then(() => process.exit(0), (error: unknown) => {
          logger.error({ err: error }, "stop failed");
          process.exit(1);
        });
      };
      process.once("SIGINT", () => shutdown("SIGINT"));
      process.once("SIGTERM", () => shutdown("SIGTERM"));
    });
}
