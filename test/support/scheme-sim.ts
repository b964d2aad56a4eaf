import { Command, CommanderError } from "commander";
import { CliError, exitCodes } from "../../src/cli/exit-codes.ts";
import { printLine } from "../../src/cli/output.ts";
import { describeFailure } from "../../src/cli/run.ts";
import { codecOf } from "../../src/gateway/gateway.ts";
import { defaultFraming, maskMessage, type Message } from "../../src/protocols/iso8583/index.ts";
import { cardRequest, networkRequest, reversalOf, SchemeServer, type SchemeAction, type SchemeBehaviour, SchemeClient } from "./scheme-simulator.ts";

/**
 * `npm run scheme-sim -- send|listen ...`: a card scheme for trying the gateway by hand. `send`
 * plays the acquiring side against our endpoint (authorizations, repeats, reversals, unknown
 * reversals); `listen` plays the scheme for our outbound connection (answers, declines, late
 * answers, drops, duplicates, out-of-order answers). Every message is printed as one masked JSON
 * line. A tool beside the tests, not a clearline command: it stands in for the card scheme.
 */
interface CodecOptions {
  dictionary: string;
  framing: string;
}

function printMessage(direction: "sent" | "received", message: Message, codec: ReturnType<typeof codecOf>): void {
  printLine(JSON.stringify({ direction, ...maskMessage(message, codec.dictionary) }));
}

function codecFrom(options: CodecOptions): ReturnType<typeof codecOf> {
  try {
    return codecOf(options.dictionary, options.framing);
  } catch {
    throw new CliError(`unknown dictionary ${options.dictionary} or framing ${options.framing}`, exitCodes.usage);
  }
}

/** approve | decline:CODE | silent | delay:MS | duplicate | drop-every:N | reverse-order:N */
function behaviourOf(spec: string, server: () => SchemeServer | undefined): SchemeBehaviour {
  const [name, argument] = spec.split(":");
  const number = Number(argument ?? "0");
  switch (name) {
    case "approve": return () => ({ kind: "answer", responseCode: "00" });
    case "decline": return () => ({ kind: "answer", responseCode: argument ?? "05" });
    case "silent": return () => ({ kind: "drop" });
    case "delay": return () => ({ kind: "answer", responseCode: "00", delayMs: number });
    case "duplicate": return () => ({ kind: "duplicate", responseCode: "00" });
    case "drop-every": {
      let seen = 0;
      return (): SchemeAction => (++seen % Math.max(1, number) === 0 ? { kind: "drop" } : { kind: "answer", responseCode: "00" });
    }
    case "reverse-order":
      return (): SchemeAction => {
        setImmediate(() => {
          const current = server();
          if (current !== undefined && current.heldCount >= Math.max(1, number)) current.releaseHeldInReverse();
        });
        return { kind: "hold", responseCode: "00" };
      };
    default:
      throw new CliError(`unknown behaviour ${spec}: approve, decline:CODE, silent, delay:MS, duplicate, drop-every:N, reverse-order:N`, exitCodes.usage);
  }
}

function schemeSimProgram(): Command {
  const sim = new Command("scheme-sim").description("a card scheme simulator for trying the ISO 8583 gateway by hand").exitOverride();
  const withCodec = (command: Command) => command
    .option("--dictionary <name>", "iso87-ascii or iso87-binary", "iso87-ascii")
    .option("--framing <framing>", "binary-2, ascii-4, bcd-2 or vml-4", defaultFraming);

  withCodec(sim.command("send"))
    .description("connect to our endpoint as an acquirer and send authorizations (and their repeats and reversals)")
    .requiredOption("--port <port>", "the endpoint's port (clearline serve --iso8583-port)")
    .option("--host <host>", "the endpoint's host", "127.0.0.1")
    .option("--pan <pan>", "card number (printed masked)")
    .option("--amount <minor>", "amount in minor units", "1000")
    .option("--currency <numeric>", "ISO 4217 numeric currency (DE 49); 840 is USD, the examples' currency", "840")
    .option("--mti <mti>", "0100 authorization, 0200 financial, 0120/0220 advices", "0100")
    .option("--count <n>", "how many transactions", "1")
    .option("--stan <n>", "first STAN", String(Math.floor(Date.now() / 1000) % 900_000))
    .option("--repeat", "send each request a second time as a repeat (0101, 0201)")
    .option("--reverse", "reverse each transaction (0400) and repeat the reversal (0401)")
    .option("--unknown-reversal", "send a reversal of a transaction that was never sent, then that transaction")
    .option("--sign-on", "sign on (0800/001) first")
    .action(async (options: CodecOptions & { port: string; host: string; pan?: string; amount: string; currency: string; mti: string; count: string; stan: string; repeat?: boolean; reverse?: boolean; unknownReversal?: boolean; signOn?: boolean }) => {
      const codec = codecFrom(options);
      const client = await SchemeClient.connect(options.host, Number(options.port), codec);
      let stan = Number(options.stan);
      const exchange = async (message: Message) => {
        printMessage("sent", message, codec);
        printMessage("received", await client.request(message), codec);
      };
      try {
        if (options.signOn) await exchange(networkRequest("001", stan++));
        if (options.pan === undefined) return;
        if (!/^\d{1,12}$/.test(options.amount)) throw new CliError("--amount is minor units, up to 12 digits", exitCodes.usage);
        for (let i = 0; i < Number(options.count); i++) {
          const request = cardRequest({ mti: options.mti, pan: options.pan, amountMinor: BigInt(options.amount), currencyNumeric: options.currency, stan: stan++ });
          if (options.unknownReversal) await exchange(reversalOf(request, { stan: stan++ }));
          await exchange(request);
          if (options.repeat) await exchange({ ...request, mti: `${request.mti.slice(0, 3)}1` });
          if (options.reverse) {
            const reversal = reversalOf(request, { stan: stan++ });
            await exchange(reversal);
            await exchange({ ...reversal, mti: "0401" });
          }
        }
      } finally {
        await client.close();
      }
    });

  withCodec(sim.command("listen"))
    .description("listen as the scheme for our outbound connection and answer as told")
    .option("--port <port>", "port to listen on (0 picks one)", "0")
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option("--behaviour <spec>", "approve, decline:CODE, silent, delay:MS, duplicate, drop-every:N, reverse-order:N", "approve")
    .action(async (options: CodecOptions & { port: string; host: string; behaviour: string }) => {
      const codec = codecFrom(options);
      const listening: { server?: SchemeServer } = {};
      const behaviour = behaviourOf(options.behaviour, () => listening.server);
      const server = await SchemeServer.listen(Number(options.port), codec, (message) => {
        printMessage("received", message, codec);
        return behaviour(message);
      }, options.host);
      listening.server = server;
      process.stderr.write(`scheme-sim listening on ${options.host}:${server.port} (${options.behaviour})\n`);
      await new Promise<void>((resolve) => {
        process.once("SIGINT", () => resolve());
        process.once("SIGTERM", () => resolve());
      });
      await server.close();
    });
  return sim;
}

/** Runs the simulator with these arguments (as in process.argv); answers its exit code. */
async function runSchemeSim(argv: string[]): Promise<number> {
  try {
    await schemeSimProgram().parseAsync(argv);
    return exitCodes.ok;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? exitCodes.ok : exitCodes.usage;
    process.stderr.write(`scheme-sim: ${describeFailure(error)}\n`);
    return error instanceof CliError ? error.exitCode : exitCodes.failure;
  }
}

process.exitCode = await runSchemeSim(process.argv);
