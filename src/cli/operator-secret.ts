import type { Finding, Result } from "../errors/finding.ts";

/**
 * An operator's secret for a CLI decision above the four-eyes amount (docs/decisions/0066): from
 * CLEARLINE_OPERATOR_SECRET, else typed at a prompt on the terminal, not echoed. Never from an
 * argument: it would stay in the shell's history and show in the process list.
 */
export const operatorSecretVariable = "CLEARLINE_OPERATOR_SECRET";

export function operatorSecretFromEnvironment(): string | undefined {
  const secret = process.env[operatorSecretVariable];
  return secret === undefined || secret === "" ? undefined : secret;
}

/** Asks for the operator's secret on the terminal, not echoed; undefined when stdin is no terminal. */
export function promptOperatorSecret(operatorName: string): Promise<string | undefined> {
  const input = process.stdin;
  if (!input.isTTY) return Promise.resolve(undefined);
  process.stderr.write(`secret of operator ${operatorName}: `);
  return new Promise((resolve) => {
    let typed = "";
    input.setRawMode(true);
    input.resume();
    input.setEncoding("utf8");
    const onData = (chunk: string) => {
      for (const character of chunk) {
        const ends = character === "\r" || character === "\n" || character === "\u0004";   // Enter, Ctrl-D
        if (ends) return finish(typed);
        if (character === "\u0003") return finish(undefined);   // Ctrl-C: nothing typed counts
        typed = character === "\u007f" ? typed.slice(0, -1) : typed + character;
      }
    };
    const finish = (value: string | undefined) => {
      input.off("data", onData);
      input.setRawMode(false);
      input.pause();
      process.stderr.write("\n");
      resolve(value);
    };
    input.on("data", onData);
  });
}

/**
 * Runs a decision with the secret from the environment; when the decision needs one and none was
 * given (above the four-eyes amount, decided inside its transaction), asks on the terminal and runs
 * it again. The first run stored nothing: it was refused before any write.
 */
export async function withOperatorSecret<T>(
  operatorName: string | undefined, run: (secret: string | undefined) => Promise<Result<T, Finding>>,
): Promise<Result<T, Finding>> {
  const first = await run(operatorSecretFromEnvironment());
  const asked = !first.ok && first.error.code === "OPERATOR_SECRET_REQUIRED";
  if (!asked || operatorName === undefined) return first;
  const typed = await promptOperatorSecret(operatorName);
  return typed === undefined ? first : run(typed);
}
