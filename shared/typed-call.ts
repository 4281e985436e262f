import type { CallingOptions } from "moleculer";

/**
 * A service's contract (services/<name>/contract.ts): every action it offers
 * over the bus, by full name, with what it takes (`z.input` of its schema) and
 * what it answers (JSON: dates arrive as ISO strings).
 */
export type Contract<C> = { [A in keyof C]: { params: unknown; result: unknown } };

/** Anything that can call an action: a moleculer Context, or the ServiceBroker (background jobs, CLI, REPL). */
export interface BusCaller {
  call(actionName: string, params?: unknown, opts?: CallingOptions): Promise<unknown>;
}

/**
 * A `call` typed by contracts: `typedCall<ProgramsContract & SalesContract>()`
 * can call exactly those services' actions, each with its own params and
 * result. A module that calls other services names the contracts it uses
 * (never their code: docs/architecture.md, "Seams"); services/bus.ts joins
 * them all for the services themselves, the REPL and the CLI.
 */
export function typedCall<C extends Contract<C>>() {
  return function call<A extends keyof C & string>(caller: BusCaller, action: A, params: C[A]["params"], opts?: CallingOptions): Promise<C[A]["result"]> {
    return caller.call(action, params, opts) as Promise<C[A]["result"]>;
  };
}
