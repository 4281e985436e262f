/**
 * Operator commands for the Moleculer REPL (moleculer-repl), used by both
 * `npm start -- --repl` (the embedded system) and `npm run repl` (an extra
 * node joining a running NATS mesh). Each command is a thin printer over a
 * lookup function below, which is what the tests exercise.
 *
 *   affiliate $ sale 1 order-1001          # a sale by program and transaction id
 *   affiliate $ commission 7               # a commission with its refunds and outbox events
 *   affiliate $ balance 1 3 [--currency usd]   # a partner's balance and withdrawals
 *   affiliate $ outbox                     # events not yet delivered to notifications
 *   affiliate $ reconcile                  # ledger invariants (when commissions has the action)
 *   affiliate $ list-commissions 1 --partner 3 --status refunded --limit 10   # one page; --cursor <nextCursor> for the next
 *   (also list-programs [--workspace N], list-sales, list-withdrawals, list-customers, list-partners <programId>)
 *   affiliate $ rates --from 2026-11-01            # reference exchange-rate tables, newest first
 *   affiliate $ rates-load ./eurofxref-hist.xml    # tables from the operator's disk: the ECB's XML, or JSON as PUT /api/admin/exchange-rates takes
 *   affiliate $ rates-fetch                        # the reference-rate job's fetch, now
 *   affiliate $ currency-mismatches --apply        # sales recorded before conversions, converted (a dry run without --apply)
 *
 * The built-in commands stay available: `call`, `dcall`, `nodes`, `services`,
 * `actions`, `metrics`, `info`, ...
 */
import fs from "node:fs";
import path from "node:path";
import type { ReplOptions, ServiceBroker } from "moleculer";
import { call, type ActionName, type ParamsOf, type ResultOf } from "../services/bus";
import { parseEcbReferenceRates } from "../services/sales/reference-rates";

/** How long a command waits for the service it needs to be discovered (a REPL that just joined the mesh). */
const DISCOVERY_TIMEOUT_MS = Number(process.env.REPL_DISCOVERY_TIMEOUT_MS ?? 5000);

export class ReplCommandError extends Error {}

async function need(broker: ServiceBroker, service: string): Promise<void> {
  try {
    await broker.waitForServices([service], DISCOVERY_TIMEOUT_MS, 100);
  } catch {
    throw new ReplCommandError(
      `The '${service}' service is not reachable from this node (${broker.nodeID}) after ${DISCOVERY_TIMEOUT_MS} ms. ` +
        "Check TRANSPORTER and NAMESPACE, and `nodes` / `services` for what this node sees.",
    );
  }
}

function positiveInt(value: unknown, name: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0) throw new ReplCommandError(`<${name}> must be a positive integer, not '${value ?? ""}'.`);
  return n;
}

function text(value: unknown, name: string): string {
  if (value === undefined || value === null || String(value).trim() === "") throw new ReplCommandError(`<${name}> is required.`);
  return String(value);
}

/** The lookups behind the commands: plain functions over a broker. */
export const replLookups = {
  /** A sale by its program and transaction id (`sales.get`). */
  async sale(broker: ServiceBroker, programId: unknown, transactionId: unknown): Promise<unknown> {
    const input = { programId: positiveInt(programId, "programId"), transactionId: text(transactionId, "transactionId") };
    await need(broker, "sales");
    return call(broker, "sales.get", input);
  },

  /** A commission with its refund entries and outbox events (`commissions.get`). */
  async commission(broker: ServiceBroker, commissionId: unknown): Promise<unknown> {
    const input = { commissionId: positiveInt(commissionId, "commissionId") };
    await need(broker, "commissions");
    return call(broker, "commissions.get", input);
  },

  /** A partner's balance in a program (default: the program's currency), with its withdrawals (`commissions.balance`). */
  async balance(broker: ServiceBroker, programId: unknown, partnerId: unknown, currency?: unknown): Promise<unknown> {
    const input = {
      programId: positiveInt(programId, "programId"),
      partnerId: positiveInt(partnerId, "partnerId"),
      ...(currency === undefined || currency === true ? {} : { currency: String(currency) }),
    };
    await need(broker, "commissions");
    return call(broker, "commissions.balance", input);
  },

  /** Outbox events not yet acknowledged by notifications, and the commissions instances whose relays deliver them. */
  async outbox(broker: ServiceBroker): Promise<{ pending: number; relays: string[] }> {
    await need(broker, "commissions");
    const { pending } = await call(broker, "commissions.outboxBacklog", {});
    return { pending, relays: nodesOf(broker, "commissions") };
  },

  /**
   * Checks the ledger invariants with `commissions.reconcile` when the
   * commissions service in this mesh has that action; says so otherwise.
   */
  async reconcile(broker: ServiceBroker): Promise<{ available: true; report: unknown } | { available: false; message: string }> {
    await need(broker, "commissions");
    const actions = (broker.registry as unknown as { actions: { isAvailable(name: string): boolean } }).actions;
    if (!actions.isAvailable("commissions.reconcile")) {
      return {
        available: false,
        message: "The commissions service reachable from here has no 'reconcile' action (it is older than the ledger reconciliation). Upgrade it, then run `reconcile` again.",
      };
    }
    return { available: true, report: await call(broker, "commissions.reconcile", {}) };
  },
};

/** The options every list command takes, and those with a date range (passed to the action, which validates them: a bad one is invalid_request). */
const CURSOR_OPTIONS = [
  { option: "-l, --limit <n>", description: "Rows per page, 1 to 100 (default 25)" },
  { option: "--cursor <cursor>", description: "Where the page starts: the nextCursor of the previous page" },
];
const PAGE_OPTIONS = [
  ...CURSOR_OPTIONS,
  { option: "--from <date>", description: "Only rows created at or after this ISO date or date-time" },
  { option: "--to <date>", description: "Only rows created before this ISO date or date-time" },
];

/** The flags given, as the list action's params (moleculer-repl passes them as text or true). */
function listParams(options: Record<string, unknown> | undefined, names: Record<string, string>): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const [flag, param] of Object.entries({ limit: "limit", cursor: "cursor", from: "from", to: "to", ...names })) {
    const value = options?.[flag];
    if (value !== undefined) params[param] = typeof value === "number" ? String(value) : value;
  }
  return params;
}

/** A program's list: one page of `action` (of `service`), with the list flags and these filter flags (flag: param). */
function programList<A extends ActionName>(service: string, action: A, filters: Record<string, string>) {
  return async (broker: ServiceBroker, programId: unknown, options?: Record<string, unknown>) => {
    const params = { programId: positiveInt(programId, "programId"), ...listParams(options, filters) };
    await need(broker, service);
    // The action validates the params (a bad flag is invalid_request).
    return call(broker, action, params as ParamsOf<A>);
  };
}

/** The list commands (issue 15.1): one page of the operator's list action, `{ data, nextCursor }`. */
export const replLists = {
  async programs(broker: ServiceBroker, options?: Record<string, unknown>) {
    await need(broker, "programs");
    return call(broker, "programs.list", listParams(options, { workspace: "workspaceId" }));
  },
  sales: programList("sales", "sales.list", { partner: "partnerId", test: "test", attributed: "attributed" }),
  commissions: programList("commissions", "commissions.list", { partner: "partnerId", status: "status" }),
  withdrawals: programList("commissions", "commissions.listWithdrawals", { partner: "partnerId", status: "status" }),
  customers: programList("attribution", "attribution.listCustomers", { partner: "partnerId", test: "test" }),
  /** A program's partners with their all-time totals and balance (the overview's partners list). */
  partners: programList("programs", "programs.listPartners", { status: "status" }),
};

/** Tables per call of a load (a few hundred days: far below the bus's message size, and the action's limit). */
const RATE_TABLES_PER_CALL = 250;

/** What a rates file holds: the load's source and base (when it says), and its tables. */
interface RatesFile {
  source?: unknown;
  base?: unknown;
  tables: unknown[];
}

/**
 * A rates file from the operator's disk: the ECB's eurofxref XML (its days, base eur, source ecb), or JSON as
 * PUT /api/admin/exchange-rates takes it (source, base and tables, or ecbXml). An XML document is checked here, whole.
 */
function readRatesFile(file: string): RatesFile {
  let content: string;
  try {
    content = fs.readFileSync(path.resolve(file), "utf8").replace(/^\uFEFF/, "");
  } catch (err) {
    throw new ReplCommandError(`Cannot read '${file}': ${(err as Error).message}`);
  }
  const fromXml = (xml: string, source: unknown = "ecb"): RatesFile => {
    try {
      return { source, base: "eur", tables: parseEcbReferenceRates(xml).map((t) => ({ day: t.day, rates: t.perEuro })) };
    } catch (err) {
      throw new ReplCommandError(`'${file}': ${(err as Error).message}`);
    }
  };
  if (content.trimStart().startsWith("<")) return fromXml(content);
  let json: unknown;
  try {
    json = JSON.parse(content);
  } catch {
    throw new ReplCommandError(`'${file}' is neither XML (the ECB's eurofxref format) nor JSON ({ "base": "eur", "tables": [{ "day": "2026-11-27", "rates": { "usd": "1.0823" } }] }).`);
  }
  if (!json || typeof json !== "object" || Array.isArray(json)) throw new ReplCommandError(`'${file}' must hold one JSON object: { "source", "base", "tables" } or { "ecbXml" }.`);
  const body = json as Record<string, unknown>;
  if (typeof body.ecbXml === "string" && body.tables === undefined) return fromXml(body.ecbXml, body.source ?? "ecb");
  if (!Array.isArray(body.tables)) throw new ReplCommandError(`'${file}' has no "tables" list (nor "ecbXml").`);
  // Other fields go to the action, which refuses what it does not take.
  const { tables, ...rest } = body;
  return { ...rest, tables: tables as unknown[] };
}

const dayOf = (table: unknown): string | undefined => (table && typeof table === "object" ? ((table as { day?: unknown }).day as string | undefined) : undefined);

/** The reference exchange-rate tables (the sales service's; docs/currencies.md). */
export const replRates = {
  /** The stored tables, newest first (`sales.listExchangeRates`): --source, --from, --to (days), --limit. */
  async list(broker: ServiceBroker, options?: Record<string, unknown>): Promise<unknown> {
    const params: Record<string, unknown> = {};
    for (const name of ["source", "from", "to", "limit"]) {
      const value = options?.[name];
      if (value !== undefined) params[name] = String(value);
    }
    await need(broker, "sales");
    return call(broker, "sales.listExchangeRates", params as ParamsOf<"sales.listExchangeRates">);
  },

  /**
   * Loads a file of tables (readRatesFile) in parts of RATE_TABLES_PER_CALL days, in day order; each part all or
   * nothing. A part refused after others were saved says how far the load got: loading the file again is safe.
   */
  async load(broker: ServiceBroker, file: unknown): Promise<unknown> {
    const { tables, ...load } = readRatesFile(text(file, "file"));
    const days = tables.map(dayOf);
    const ordered = days.every((d) => typeof d === "string") ? [...tables].sort((a, b) => dayOf(a)!.localeCompare(dayOf(b)!)) : tables;
    const parts: unknown[][] = [];
    for (let i = 0; i < ordered.length; i += RATE_TABLES_PER_CALL) parts.push(ordered.slice(i, i + RATE_TABLES_PER_CALL));
    if (parts.length === 0) parts.push([]);
    await need(broker, "sales");
    let saved = 0;
    let answer: ResultOf<"sales.loadExchangeRates"> | undefined;
    let firstDay: string | undefined;
    for (const [i, part] of parts.entries()) {
      try {
        answer = await call(broker, "sales.loadExchangeRates", { ...load, tables: part } as ParamsOf<"sales.loadExchangeRates">);
      } catch (err) {
        if (i === 0) throw err;
        const e = err as { type?: string; message?: string };
        throw Object.assign(new Error(`${e.message} (the ${saved} tables before ${dayOf(part[0])} were saved: fix the file and load it again, a day is replaced whole)`), { type: e.type });
      }
      saved += answer.saved;
      firstDay ??= answer.firstDay;
    }
    return { file: String(file), saved, source: answer!.source, base: answer!.base, firstDay, lastDay: answer!.lastDay, calls: parts.length };
  },

  /** The reference-rate job's fetch, now, on one sales instance (`sales.refreshExchangeRates`): what it saved, or why nothing. */
  async fetch(broker: ServiceBroker): Promise<unknown> {
    await need(broker, "sales");
    return call(broker, "sales.refreshExchangeRates", {});
  },

  /**
   * Sales recorded with currency_mismatch before conversions (docs/currencies.md): a dry run, or (--apply) converted
   * at their day's rate with their commissions. No time limit: it reads every such sale.
   */
  async mismatches(broker: ServiceBroker, options?: Record<string, unknown>): Promise<unknown> {
    const programId = options?.program === undefined ? undefined : positiveInt(options.program, "program");
    await need(broker, "sales");
    return call(broker, "sales.reevaluateCurrencyMismatches", { programId, apply: options?.apply === true }, { timeout: 0 });
  },
};

/** Node ids running a service, as this node's registry sees them. */
function nodesOf(broker: ServiceBroker, service: string): string[] {
  const list = broker.registry.getServiceList({ onlyAvailable: true, skipInternal: true }) as Array<{ name: string; nodeID: string }>;
  return [...new Set(list.filter((s) => s.name === service).map((s) => s.nodeID))].sort();
}

type Print = (line: string) => void;

/** Prints a command's result as indented JSON, or its error as one `>> ERROR` line with the stable code. */
export async function runReplCommand(run: () => Promise<unknown>, print: Print = (l) => console.log(l)): Promise<void> {
  try {
    print(JSON.stringify(await run(), null, 2));
  } catch (err) {
    const e = err as { type?: string; code?: number; message?: string };
    const code = err instanceof ReplCommandError ? "usage" : (e?.type ?? e?.code ?? "error");
    print(`>> ERROR (${code}): ${e?.message ?? String(err)}`);
  }
}

type Args = Record<string, unknown> & { options?: Record<string, unknown> };

/** The custom commands, in moleculer-repl's format. */
export function replCommands(print?: Print): NonNullable<ReplOptions["customCommands"]> {
  const command = (def: {
    command: string;
    description: string;
    options?: Array<{ option: string; description: string }>;
    run: (broker: ServiceBroker, args: Args) => Promise<unknown>;
  }) => ({
    command: def.command,
    description: def.description,
    options: def.options,
    action: (broker: ServiceBroker, args: unknown) => runReplCommand(() => def.run(broker, args as Args), print),
  });
  return [
    command({
      command: "sale <programId> <transactionId>",
      description: "A sale by program id and transaction id (e.g. `sale 1 order-1001`)",
      run: (broker, a) => replLookups.sale(broker, a.programId, a.transactionId),
    }),
    command({
      command: "commission <commissionId>",
      description: "A commission with its refunds and outbox events (e.g. `commission 7`)",
      run: (broker, a) => replLookups.commission(broker, a.commissionId),
    }),
    command({
      command: "balance <programId> <partnerId>",
      description: "A partner's balance and withdrawals in a program (e.g. `balance 1 3 --currency usd`)",
      options: [{ option: "-c, --currency <currency>", description: "Balance currency (default: the program's)" }],
      run: (broker, a) => replLookups.balance(broker, a.programId, a.partnerId, a.options?.currency),
    }),
    command({
      command: "outbox",
      description: "Commission events waiting to be delivered to notifications, and the relays delivering them",
      run: (broker) => replLookups.outbox(broker),
    }),
    command({
      command: "reconcile",
      description: "Checks the ledger invariants (commissions.reconcile), when the commissions service has it",
      run: (broker) => replLookups.reconcile(broker),
    }),
    command({
      command: "list-programs",
      description: "Programs, newest first, one page (e.g. `list-programs --workspace 1 --limit 10`)",
      options: [{ option: "-w, --workspace <id>", description: "Only this workspace's programs" }, ...PAGE_OPTIONS],
      run: (broker, a) => replLists.programs(broker, a.options),
    }),
    command({
      command: "list-sales <programId>",
      description: "A program's sales, newest first, one page (e.g. `list-sales 1 --partner 3 --test false`)",
      options: [
        { option: "-p, --partner <id>", description: "Only this partner's sales" },
        { option: "--test <true|false>", description: "Only test (true) or live (false) sales" },
        { option: "--attributed <true|false>", description: "Only attributed (true) or unattributed (false) sales" },
        ...PAGE_OPTIONS,
      ],
      run: (broker, a) => replLists.sales(broker, a.programId, a.options),
    }),
    command({
      command: "list-commissions <programId>",
      description: "A program's commissions with their refunds, newest first, one page (e.g. `list-commissions 1 --status refunded`)",
      options: [
        { option: "-p, --partner <id>", description: "Only this partner's commissions" },
        { option: "-s, --status <status>", description: "pending, approved, paid, refunded or reversed" },
        ...PAGE_OPTIONS,
      ],
      run: (broker, a) => replLists.commissions(broker, a.programId, a.options),
    }),
    command({
      command: "list-withdrawals <programId>",
      description: "A program's withdrawals, newest first, one page (e.g. `list-withdrawals 1 --status open`)",
      options: [
        { option: "-p, --partner <id>", description: "Only this partner's withdrawals" },
        { option: "-s, --status <status>", description: "open, paid or cancelled" },
        ...PAGE_OPTIONS,
      ],
      run: (broker, a) => replLists.withdrawals(broker, a.programId, a.options),
    }),
    command({
      command: "list-customers <programId>",
      description: "A program's customers (leads), newest first, one page (e.g. `list-customers 1 --partner 3`)",
      options: [
        { option: "-p, --partner <id>", description: "Only this partner's customers" },
        { option: "--test <true|false>", description: "Only test (true) or live (false) leads" },
        ...PAGE_OPTIONS,
      ],
      run: (broker, a) => replLists.customers(broker, a.programId, a.options),
    }),
    command({
      command: "list-partners <programId>",
      description: "A program's partners with their totals and balance, newest first, one page (e.g. `list-partners 1 --status pending`)",
      options: [{ option: "-s, --status <status>", description: "approved, pending or declined" }, ...CURSOR_OPTIONS],
      run: (broker, a) => replLists.partners(broker, a.programId, a.options),
    }),
    command({
      command: "rates",
      description: "Reference exchange-rate tables, newest first (e.g. `rates --from 2026-11-01 --source ecb`)",
      options: [
        { option: "--from <day>", description: "Only tables of this day (YYYY-MM-DD) or later" },
        { option: "--to <day>", description: "Only tables of this day (YYYY-MM-DD) or earlier" },
        { option: "-s, --source <source>", description: "ecb or manual" },
        { option: "-l, --limit <n>", description: "At most this many tables, 1 to 500 (default 30)" },
      ],
      run: (broker, a) => replRates.list(broker, a.options),
    }),
    command({
      command: "rates-load <file>",
      description: "Loads reference-rate tables from a file on this machine: the ECB's XML (eurofxref-hist.xml), or JSON as PUT /api/admin/exchange-rates takes it",
      run: (broker, a) => replRates.load(broker, a.file),
    }),
    command({
      command: "rates-fetch",
      description: "Runs the reference-rate job now (fetches EXCHANGE_RATE_FEED_URL on one sales instance): what it saved, or why nothing",
      run: (broker) => replRates.fetch(broker),
    }),
    command({
      command: "currency-mismatches",
      description: "Sales recorded without commission for their currency before conversions: a dry run, or --apply to convert them at their day's rate and create their commissions",
      options: [
        { option: "-p, --program <id>", description: "Only this program's sales" },
        { option: "--apply", description: "Convert them (without it: a dry run that changes nothing)" },
      ],
      run: (broker, a) => replRates.mismatches(broker, a.options),
    }),
  ] as unknown as NonNullable<ReplOptions["customCommands"]>;
}

/** REPL options for a broker: our prompt and commands. */
export function replOptions(print?: Print): ReplOptions {
  return { delimiter: "affiliate $", customCommands: replCommands(print) };
}
