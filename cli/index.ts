/**
 * Operator CLI over the admin HTTP API. Prints JSON on stdout; errors go to
 * stderr with a non-zero exit code (2: a usage error such as a missing flag or
 * a bad value, 1: the request failed, 3: `reconcile` found a violation).
 *
 *   npm run -s cli -- --help                 # every command
 *   npm run -s cli -- create-program --help  # one command's flags
 *   npm run -s cli -- bootstrap
 *   npm run -s cli -- create-program --name Acme --percent 20 --hold-days 30
 *
 * From a build (`npm run build`), the same commands are `node dist/cli/index.js <command>`.
 * ADMIN_URL (default http://localhost:3000) and ADMIN_TOKEN (default: the
 * token file in the data folder) say where and how to connect.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import { Command, CommanderError, Option } from "commander";
import { adminTokenFile } from "../shared/admin-token";
import { parseBoolean, parseId, parseInteger, percentToBasisPoints } from "./parse";
import { SCOPE_PRESET_NAMES } from "../shared/domain/api-key-scopes";

/** A command's flags as commander parsed them (values checked by each option's parser, or strings). */
type Opts = Record<string, unknown>;

/** A JSON answer's fields: an object's own, none for anything else. */
const fieldsOf = (value: unknown): Record<string, unknown> => (typeof value === "object" && value !== null && !Array.isArray(value) ? { ...value } : {});

/** `--<flag> <id>`: a positive whole number, strictly parsed. */
const idOption = (flag: string, what: string) => new Option(`--${flag} <id>`, `${what} id`).argParser(parseId);
const requiredId = (flag: string, what: string) => new Option(`--${flag} <id>`, `${what} id (required)`).argParser(parseId).makeOptionMandatory();
/** A flag that is true alone, or `--flag true|false`. */
const boolOption = (flag: string, what: string) => new Option(`--${flag} [true|false]`, what).argParser(parseBoolean);
/** Repeatable flag: each occurrence adds a value. */
const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

/**
 * Every command: its name, what it does, its flags, and what it sends. The action returns what is printed as JSON.
 * Flag names are the CLI's public interface (scripts call them): keep them.
 */
function buildProgram(): Command {
  const program = new Command("cli")
    .usage("<command> [flags]")
    .description(
      "Operator CLI over the admin HTTP API (ADMIN_URL, default http://localhost:3000; ADMIN_TOKEN, default the token file in DATA_DIR).\n" +
        "Run it as `npm run -s cli -- <command>`, or `node dist/cli/index.js <command>` from a build. Output is JSON on stdout.",
    )
    .showHelpAfterError("(add --help for usage)")
    .addHelpCommand("help [command]", "show the help of a command")
    .exitOverride();

  const command = (name: string, description: string) => program.command(name).description(description).exitOverride();
  let result: unknown;
  /** Commander's action: run, keep the result for printing. */
  const run = (fn: (o: Opts) => Promise<unknown>) => async (o: Opts) => {
    result = await fn(o);
  };
  program.hook("postAction", () => {
    console.log(JSON.stringify(result, null, 2));
  });

  command("bootstrap", "create a workspace, its owner, a program, an API key and a first partner: everything to try the API")
    .option("--name <program name>", "the program's name", "My first program")
    .option("--email <email>", "the dashboard user's email (default: a generated one)")
    .action(
      run(async (o) => {
        const workspace = fieldsOf(await admin("POST", "/workspaces", { name: "My workspace" }));
        const email = o.email ?? `owner-${randomBytes(3).toString("hex")}@example.com`;
        const password = randomBytes(12).toString("base64url");
        const user = fieldsOf(await admin("POST", "/users", { email, name: "Workspace owner", password }));
        await admin("POST", `/workspaces/${workspace.id}/members`, { userId: user.id, role: "owner" });
        const created = fieldsOf(
          await admin("POST", "/programs", {
            workspaceId: workspace.id,
            name: o.name,
            commissionRule: { type: "percentage", basisPoints: 2000 },
            holdDays: 30,
            paymentTrackingMode: "s2s",
          }),
        );
        const key = fieldsOf(await admin("POST", `/programs/${created.id}/api-keys`));
        const { partner, enrollment } = fieldsOf(await admin("POST", `/programs/${created.id}/partners`, { name: "First Partner", email: "partner@example.com" }));
        return {
          programId: created.id,
          apiKey: key.apiKey,
          partnerId: fieldsOf(partner).id,
          referralCode: fieldsOf(enrollment).referralCode,
          dashboard: { url: `${adminUrl()}/dashboard?program=${created.id}`, email, password, workspaceId: workspace.id },
        };
      }),
    );

  command("create-workspace", "create a workspace")
    .requiredOption("--name <name>", "the workspace's name (required)")
    .action(run((o) => admin("POST", "/workspaces", { name: o.name })));

  command("create-user", "create a dashboard user")
    .requiredOption("--email <email>", "login email (required)")
    .requiredOption("--name <name>", "display name (required)")
    .requiredOption("--password <password>", "at least 12 characters (required)")
    .action(run((o) => admin("POST", "/users", { email: o.email, name: o.name, password: o.password })));

  command("grant-role", "give a user a role in a workspace")
    .addOption(requiredId("workspace", "workspace"))
    .addOption(requiredId("user", "user"))
    .addOption(new Option("--role <role>", "the role (required)").choices(["owner", "admin", "developer", "viewer", "billing"]).makeOptionMandatory())
    .action(run((o) => admin("POST", `/workspaces/${o.workspace}/members`, { userId: o.user, role: o.role })));

  command("set-processor", "set a program's payment-processor connection")
    .addOption(requiredId("program", "program"))
    .option("--status <status>", "connection status, e.g. connected")
    .option("--account-id <acct_id>", "the processor's account id")
    .addOption(boolOption("charges-enabled", "the account can take charges"))
    .addOption(boolOption("payouts-enabled", "the account can receive payouts"))
    .addOption(boolOption("details-submitted", "the account's details are submitted"))
    // The service sets the connection date the first time it is connected (now, or this date); later updates keep it.
    .option("--connected-at <ISO date>", "when it was connected (first connection only)")
    .action(
      run((o) =>
        admin("PUT", `/programs/${o.program}/processor`, {
          connectionStatus: o.status,
          accountId: o.accountId,
          chargesEnabled: o.chargesEnabled,
          payoutsEnabled: o.payoutsEnabled,
          detailsSubmitted: o.detailsSubmitted,
          connectedAt: o.connectedAt,
        }),
      ),
    );

  command("create-program", "create a program with a percentage (default 20 %) or flat commission")
    .requiredOption("--name <name>", "the program's name (required)")
    .addOption(idOption("workspace", "workspace"))
    .option("--currency <code>", "ISO 4217 currency code, e.g. usd")
    .addOption(new Option("--percent <0-100>", "percentage commission, at most two decimals (default 20)").argParser(percentToBasisPoints).conflicts("flatCents"))
    .addOption(new Option("--flat-cents <n>", "flat commission per sale, in minor units").argParser(parseInteger))
    .addOption(new Option("--hold-days <n>", "days before a commission can be approved (server default 30)").argParser(parseInteger))
    .addOption(new Option("--payment-tracking-mode <mode>", "how payments are reported").choices(["processor_connect", "s2s"]))
    .option("--allowed-origin <url>", "an origin allowed to call the browser endpoints (repeatable)", collect)
    .addOption(boolOption("self-referral-guard", "refuse to attribute a partner's own leads and sales (server default true; --self-referral-guard false turns it off)"))
    .action(
      run((o) =>
        admin("POST", "/programs", {
          workspaceId: o.workspace,
          name: o.name,
          currency: o.currency,
          commissionRule: o.flatCents !== undefined ? { type: "flat", amountCents: o.flatCents } : { type: "percentage", basisPoints: o.percent ?? 2000 },
          holdDays: o.holdDays,
          paymentTrackingMode: o.paymentTrackingMode,
          allowedOrigins: o.allowedOrigin,
          selfReferralGuard: o.selfReferralGuard,
        }),
      ),
    );

  command("get-program", "show a program")
    .addOption(requiredId("program", "program"))
    .action(run((o) => admin("GET", `/programs/${o.program}`)));
  command("create-api-key", "create an API key for a program (the secret is shown once)")
    .addOption(requiredId("program", "program"))
    .option("--name <name>", "what the key is for")
    .addOption(new Option("--preset <preset>", "what it may do: tracking (the default), read_only or full_access").choices(SCOPE_PRESET_NAMES).conflicts("scopes"))
    .option("--scopes <list>", "its scopes instead of a preset, comma-separated: tracking, partners:write, commissions:read, embed:write (the embedded referrals page), ...")
    .action(
      run((o) =>
        admin("POST", `/programs/${o.program}/api-keys`, {
          name: o.name,
          preset: o.preset,
          scopes: typeof o.scopes === "string" ? o.scopes.split(",").map((s) => s.trim()) : undefined,
        }),
      ),
    );
  command("retire-api-key", "retire an API key")
    .addOption(requiredId("key-id", "API key"))
    .action(run((o) => admin("POST", `/api-keys/${o.keyId}/retire`)));

  command("create-partner", "enroll a partner in a program")
    .addOption(requiredId("program", "program"))
    .requiredOption("--name <name>", "the partner's name (required)")
    .option("--email <email>", "the partner's email")
    .option("--customer-key <key>", "the partner's own customer key, if they are also a customer (self-referral guard)")
    .option("--referral-code <code>", "the partner's referral code (default: generated)")
    .addOption(new Option("--status <status>", "approved (default) or pending: an application to approve later").choices(["approved", "pending"]))
    .action(run((o) => admin("POST", `/programs/${o.program}/partners`, { name: o.name, email: o.email, customerKey: o.customerKey, referralCode: o.referralCode, status: o.status })));

  // The program overview's operator equivalents (docs/merchants.md).
  command("list-partners", "a program's partners, newest first, with their all-time totals and balances")
    .addOption(requiredId("program", "program"))
    .addOption(new Option("--status <status>", "only these").choices(["approved", "pending", "declined"]))
    .addOption(new Option("--limit <n>", "at most this many (1 to 100, server default 25)").argParser(parseInteger))
    .option("--cursor <cursor>", "the nextCursor of the previous page")
    .action(run((o) => admin("GET", `/programs/${o.program}/partners${queryString({ status: o.status, limit: o.limit, cursor: o.cursor })}`)));
  command("approve-partner", "approve a pending or declined partner: their links are tracked from now on")
    .addOption(requiredId("program", "program"))
    .addOption(requiredId("partner", "partner"))
    .action(run((o) => admin("POST", `/programs/${o.program}/partners/${o.partner}/status`, { status: "approved" })));
  command("decline-partner", "decline a pending or approved partner: their links stop being tracked")
    .addOption(requiredId("program", "program"))
    .addOption(requiredId("partner", "partner"))
    .action(run((o) => admin("POST", `/programs/${o.program}/partners/${o.partner}/status`, { status: "declined" })));
  command("overview", "a program's figures per UTC day, per partner and in total")
    .addOption(requiredId("program", "program"))
    .option("--from <YYYY-MM-DD>", "first day (default: 29 days before --to)")
    .option("--to <YYYY-MM-DD>", "last day (default: today)")
    .addOption(boolOption("test", "test data only"))
    .action(run((o) => admin("GET", `/programs/${o.program}/overview${queryString({ from: o.from, to: o.to, test: o.test })}`)));

  // Rewards (docs/rewards.md): partner groups, their rewards, moves and the preview.
  command("rewards", "a program's partner groups with their rewards and members")
    .addOption(requiredId("program", "program"))
    .action(run((o) => admin("GET", `/programs/${o.program}/rewards`)));
  command("create-group", "create a partner group with its own rewards, hold days and minimum payout")
    .addOption(requiredId("program", "program"))
    .requiredOption("--name <name>", "the group's name (required)")
    .addOption(new Option("--hold-days <n>", "days a commission is held (default: the default group's)").argParser(parseInteger))
    .addOption(new Option("--min-payout-cents <n>", "the smallest balance paid out, in minor units (default 0)").argParser(parseInteger))
    .action(run((o) => admin("POST", `/programs/${o.program}/groups`, { name: o.name, holdDays: o.holdDays, minPayoutCents: o.minPayoutCents })));
  const rewardTerms = (o: Opts) => ({
    event: o.event,
    kind: o.flatCents !== undefined ? "flat" : "percentage",
    value: o.flatCents ?? o.percent,
    recurring: o.months !== undefined ? { duration: "months", months: o.months } : o.recurring && { duration: o.recurring },
    productIds: o.product,
    priceIds: o.price,
  });
  const rewardOptions = (c: Command) =>
    c
      .addOption(new Option("--event <event>", "what it pays for (default sale)").choices(["sale", "lead"]))
      .addOption(new Option("--percent <0-100>", "a percentage of each sale line (up to two decimals)").argParser(percentToBasisPoints).conflicts("flatCents"))
      .addOption(new Option("--flat-cents <n>", "a flat amount per sale line or lead, in minor units").argParser(parseInteger))
      .addOption(new Option("--recurring <duration>", "which payments of a subscription earn (default lifetime)").choices(["first", "lifetime"]).conflicts("months"))
      .addOption(new Option("--months <n>", "renewals earn for N months from the first payment").argParser(parseInteger))
      .option("--product <id>", "only lines of this product (repeatable)", collect)
      .option("--price <id>", "only lines of this price (repeatable)", collect);
  rewardOptions(command("create-reward", "create a reward of a group (version 1)").addOption(requiredId("program", "program")).addOption(requiredId("group", "partner group"))).action(
    run((o) => admin("POST", `/programs/${o.program}/rewards`, { groupId: o.group, ...rewardTerms(o) })),
  );
  rewardOptions(
    command("edit-reward", "replace a reward's terms: a new version (commissions keep theirs)").addOption(requiredId("program", "program")).addOption(requiredId("reward", "reward")),
  ).action(run((o) => admin("PUT", `/programs/${o.program}/rewards/${o.reward}`, rewardTerms(o))));
  command("archive-reward", "archive a reward: it pays nothing from now on")
    .addOption(requiredId("program", "program"))
    .addOption(requiredId("reward", "reward"))
    .action(run((o) => admin("POST", `/programs/${o.program}/rewards/${o.reward}/archive`)));
  command("move-partner", "move a partner to a group: their future commissions follow its rewards")
    .addOption(requiredId("program", "program"))
    .addOption(requiredId("partner", "partner"))
    .addOption(requiredId("group", "partner group"))
    .action(run((o) => admin("PUT", `/programs/${o.program}/group-members`, { assignments: [{ partnerId: o.partner, groupId: o.group }] })));
  command("preview-reward", "what a sale would earn now, by a partner's (or the default group's) rewards")
    .addOption(requiredId("program", "program"))
    .addOption(new Option("--amount-cents <n>", "the sale's amount in minor units (required)").argParser(parseInteger).makeOptionMandatory())
    .addOption(idOption("partner", "partner"))
    .option("--product <id>", "the product sold")
    .option("--price <id>", "the price sold")
    .action(run((o) => admin("POST", `/programs/${o.program}/rewards/preview`, { amountCents: o.amountCents, partnerId: o.partner, productId: o.product, priceId: o.price })));
  command("void-commission", "take a commission back in full (a fake signup, a fraudulent order); the partner is told the reason")
    .addOption(requiredId("program", "program"))
    .addOption(requiredId("commission", "commission"))
    .option("--reason <text>", "why (shown to the partner)")
    .action(run((o) => admin("POST", `/programs/${o.program}/commissions/${o.commission}/void`, { reason: o.reason })));
  command("manual-commission", "pay a partner a bonus, or claw money back (the balance may go below zero)")
    .addOption(requiredId("program", "program"))
    .addOption(requiredId("partner", "partner"))
    .addOption(new Option("--type <type>", "bonus or clawback").choices(["bonus", "clawback"]).makeOptionMandatory())
    .addOption(new Option("--amount-cents <n>", "how much, in minor units of the program's currency").argParser(parseInteger).makeOptionMandatory())
    .requiredOption("--description <text>", "what it is for (the partner sees it)")
    .action(run((o) => admin("POST", `/programs/${o.program}/commissions`, { partnerId: o.partner, type: o.type, amountCents: o.amountCents, description: o.description })));

  command("enroll-partner", "enroll an existing partner in another program (one partner portal sign-in for all their programs)")
    .addOption(requiredId("program", "program"))
    .addOption(requiredId("partner", "partner"))
    .option("--referral-code <code>", "the partner's referral code in this program (default: generated)")
    .addOption(new Option("--status <status>", "the enrollment's status").choices(["approved", "pending"]))
    .action(run((o) => admin("POST", `/programs/${o.program}/enrollments`, { partnerId: o.partner, referralCode: o.referralCode, status: o.status })));

  command("partner-link", "create a one-time partner portal sign-in link (an invite); printed here, and mailed with --send")
    .addOption(requiredId("partner", "partner"))
    .addOption(new Option("--expires-in-minutes <n>", "how long the link works, once (default 1440: one day; at most 10080)").argParser(parseInteger))
    .addOption(boolOption("send", "also mail it to the partner's email"))
    .action(run((o) => admin("POST", `/partners/${o.partner}/sign-in-links`, { expiresInMinutes: o.expiresInMinutes, send: o.send })));

  command("approve-due", "credit the commissions whose hold has passed")
    .addOption(idOption("program", "only this program's"))
    .action(run((o) => admin("POST", "/commissions/approve-due", { programId: o.program })));

  command("create-withdrawal", "open a withdrawal of a partner's balance; retried with the same key on timeouts and 5xx, never opens two")
    .addOption(requiredId("program", "program"))
    .addOption(requiredId("partner", "partner"))
    .addOption(new Option("--amount-cents <n>", "amount in minor units (default: the whole available balance)").argParser(parseInteger))
    .option("--idempotency-key <key>", "reuse to finish or look up an earlier attempt (default: generated)")
    .action(
      run((o) => {
        // One key per withdrawal: the retries below, and the operator re-running the command with it, reuse it.
        const idempotencyKey = typeof o.idempotencyKey === "string" ? o.idempotencyKey : `wd-${randomBytes(12).toString("hex")}`;
        return adminIdempotent("POST", `/programs/${o.program}/partners/${o.partner}/withdrawals`, { amountCents: o.amountCents, idempotencyKey }, `--idempotency-key ${idempotencyKey}`);
      }),
    );

  command("pay-withdrawal", "mark a withdrawal paid")
    .addOption(requiredId("withdrawal", "withdrawal"))
    .action(run((o) => admin("POST", `/withdrawals/${o.withdrawal}/pay`)));
  command("payout-run", "preview a program's payout run; with --yes, start it (one run per period: running it again pays nobody twice)")
    .addOption(requiredId("program", "program"))
    .option("--period <key>", "the run's period, e.g. 2026-11 (default: today, UTC)")
    .addOption(boolOption("yes", "start the run previewed (otherwise only the preview is printed)"))
    .action(
      run(async (o) => {
        const query = queryString({ periodKey: o.period });
        const preview = fieldsOf(await admin("GET", `/programs/${o.program}/payout-runs/preview${query}`));
        if (o.yes !== true) return preview;
        // The preview's total: if balances moved since, the server refuses (409) and nothing is paid.
        return admin("POST", `/programs/${o.program}/payout-runs`, { periodKey: preview.periodKey, expectedTotalCents: preview.totalCents, trigger: "cli" });
      }),
    );
  command("payout-runs", "a program's payout runs, newest first, with their totals")
    .addOption(requiredId("program", "program"))
    .action(run((o) => admin("GET", `/programs/${o.program}/payout-runs`)));
  command("payout-run-detail", "one payout run with its payouts and the partners it skipped")
    .addOption(requiredId("program", "program"))
    .addOption(requiredId("run", "payout run"))
    .action(run((o) => admin("GET", `/programs/${o.program}/payout-runs/${o.run}`)));
  command("balance", "a partner's balance in a program")
    .addOption(requiredId("program", "program"))
    .addOption(requiredId("partner", "partner"))
    .action(run((o) => admin("GET", `/programs/${o.program}/partners/${o.partner}/balance`)));
  command("commission", "a commission with its refunds and outbox events")
    .addOption(requiredId("id", "commission"))
    .action(run((o) => admin("GET", `/commissions/${o.id}`)));
  command("sale", "a sale by its transaction id")
    .addOption(requiredId("program", "program"))
    .requiredOption("--transaction-id <id>", "the merchant's transaction id (required)")
    .action(run((o) => admin("GET", `/programs/${o.program}/sales/${encodeURIComponent(String(o.transactionId))}`)));
  command("outbox", "commission events not yet delivered").action(run(() => admin("GET", "/outbox")));

  command("processor-events", "processor webhook events, newest first, with the reason of each")
    .addOption(new Option("--status <status>", "only these").choices(["processed", "ignored", "rejected", "failed", "processing"]))
    .addOption(new Option("--limit <n>", "at most this many (server default 50)").argParser(parseInteger))
    .action(run((o) => admin("GET", `/processor/events${queryString({ status: o.status, limit: o.limit })}`)));
  command("processor-event", "one processor webhook event")
    .requiredOption("--id <evt_id>", "the processor's event id (required)")
    .action(run((o) => admin("GET", `/processor/events/${encodeURIComponent(String(o.id))}`)));

  command("reconcile", "check the ledger invariants; exit code 3 when any is violated").action(
    run(async () => {
      const report = fieldsOf(await admin("GET", "/reconcile"));
      if (report.ok) return report;
      console.log(JSON.stringify(report, null, 2));
      const violations = Array.isArray(report.violations) ? report.violations.map(fieldsOf) : [];
      const rules = [...new Set(violations.map((v) => String(v.rule)))].join(", ");
      throw new CliError(`${violations.length + Number(report.violationsNotShown ?? 0)} ledger invariant violation(s): ${rules}.`, 3);
    }),
  );

  command("notifications", "partner notices and advertiser warnings")
    .addOption(idOption("program", "program"))
    .addOption(idOption("partner", "partner"))
    .addOption(idOption("workspace", "workspace"))
    .addOption(new Option("--kind <kind>", "only this kind").choices(["partner_notice", "advertiser_warning"]))
    .addOption(boolOption("unread", "only unread ones"))
    .action(run((o) => admin("GET", `/notifications?${query({ programId: o.program, partnerId: o.partner, workspaceId: o.workspace, kind: o.kind, unread: o.unread })}`)));

  // Lists (issue 15.1): one page of JSON ({ data, nextCursor }); the next page's command goes to stderr.
  const listCommand = (name: string, description: string) =>
    command(name, description)
      .addOption(new Option("--limit <n>", "rows per page, 1 to 100 (server default 25)").argParser(parseInteger))
      .option("--cursor <cursor>", "where the page starts: the nextCursor of the previous page")
      .option("--from <ISO date>", "only rows created at or after this date or date-time")
      .option("--to <ISO date>", "only rows created before this date or date-time");
  /** Prints where the next page is (stderr, so stdout stays the page's JSON). */
  const page = (name: string) => async (path: string, params: Record<string, unknown>, o: Opts) => {
    const body = await admin("GET", `${path}${queryString({ ...params, from: o.from, to: o.to, limit: o.limit, cursor: o.cursor })}`);
    const { nextCursor } = fieldsOf(body);
    console.error(typeof nextCursor === "string" ? `next page: ${name} ... --cursor ${nextCursor}` : "last page");
    return body;
  };
  listCommand("list-programs", "programs, newest first (every program, or one workspace's)")
    .addOption(idOption("workspace", "workspace"))
    .action(run((o) => page("list-programs")("/programs", { workspaceId: o.workspace }, o)));
  listCommand("list-sales", "a program's sales, newest first")
    .addOption(requiredId("program", "program"))
    .addOption(idOption("partner", "partner"))
    .addOption(boolOption("test", "only test sales (--test false: only live ones)"))
    .addOption(boolOption("attributed", "only attributed sales (--attributed false: only unattributed ones)"))
    .action(run((o) => page("list-sales")("/sales", { programId: o.program, partnerId: o.partner, test: o.test, attributed: o.attributed }, o)));
  listCommand("list-commissions", "a program's commissions with their refunds, newest first")
    .addOption(requiredId("program", "program"))
    .addOption(idOption("partner", "partner"))
    .addOption(new Option("--status <status>", "only these").choices(["pending", "approved", "paid", "refunded", "reversed"]))
    .action(run((o) => page("list-commissions")("/commissions", { programId: o.program, partnerId: o.partner, status: o.status }, o)));
  listCommand("list-withdrawals", "a program's withdrawals, newest first")
    .addOption(requiredId("program", "program"))
    .addOption(idOption("partner", "partner"))
    .addOption(new Option("--status <status>", "only these").choices(["open", "paid", "cancelled"]))
    .action(run((o) => page("list-withdrawals")("/withdrawals", { programId: o.program, partnerId: o.partner, status: o.status }, o)));
  listCommand("list-customers", "a program's customers (leads), newest first")
    .addOption(requiredId("program", "program"))
    .addOption(idOption("partner", "partner"))
    .addOption(boolOption("test", "only test leads (--test false: only live ones)"))
    .action(run((o) => page("list-customers")("/customers", { programId: o.program, partnerId: o.partner, test: o.test }, o)));

  command("create-webhook", "add an outbound webhook endpoint to a workspace (the secret is shown once)")
    .addOption(requiredId("workspace", "workspace"))
    .requiredOption("--url <url>", "where events are POSTed (required)")
    .option("--events <types>", "comma-separated event types, e.g. commission.created,commission.refunded,commission.reversed")
    .option("--description <text>", "a note for the team")
    .action(
      run((o) =>
        admin("POST", `/workspaces/${o.workspace}/webhook-endpoints`, {
          url: o.url,
          eventTypes: (o.events as string | undefined)
            ?.split(",")
            .map((e) => e.trim())
            .filter(Boolean),
          description: o.description,
        }),
      ),
    );
  command("webhooks", "a workspace's webhook endpoints")
    .addOption(requiredId("workspace", "workspace"))
    .action(run((o) => admin("GET", `/workspaces/${o.workspace}/webhook-endpoints`)));
  command("disable-webhook", "stop deliveries to an endpoint")
    .addOption(requiredId("endpoint", "webhook endpoint"))
    .option("--reason <text>", "why")
    .action(run((o) => admin("POST", `/webhook-endpoints/${o.endpoint}/disable`, { reason: o.reason })));
  command("enable-webhook", "resume deliveries to an endpoint (also after it was disabled for failing)")
    .addOption(requiredId("endpoint", "webhook endpoint"))
    .action(run((o) => admin("POST", `/webhook-endpoints/${o.endpoint}/enable`)));
  listCommand("webhook-deliveries", "an endpoint's delivery log, newest first, with each attempt's status code or error")
    .addOption(requiredId("endpoint", "webhook endpoint"))
    .addOption(new Option("--status <status>", "only these").choices(["pending", "succeeded", "failed"]))
    .action(run((o) => page("webhook-deliveries")(`/webhook-endpoints/${o.endpoint}/deliveries`, { status: o.status }, o)));

  return program;
}

class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** A query string of the flags that were given. */
const query = (params: Record<string, unknown>) =>
  new URLSearchParams(
    Object.entries(params)
      .filter(([, v]) => v !== undefined && v !== "")
      .map(([k, v]): [string, string] => [k, String(v)]),
  );
const queryString = (params: Record<string, unknown>) => {
  const q = query(params);
  return q.size ? `?${q}` : "";
};

function adminToken(): string {
  if (process.env.ADMIN_TOKEN) return process.env.ADMIN_TOKEN;
  const file = adminTokenFile();
  if (!fs.existsSync(file)) throw new CliError(`No ADMIN_TOKEN set and no token file at ${file}. Start the system once (npm start) or set ADMIN_TOKEN.`);
  return fs.readFileSync(file, "utf8").trim();
}

const adminUrl = () => (process.env.ADMIN_URL ?? "http://localhost:3000").replace(/\/$/, "");

/** A failure that may have happened after the server acted (no answer, a timeout, a 5xx): worth a retry only if idempotent. */
class UncertainOutcomeError extends CliError {}

/** The JSON the admin API answered (null for an empty body); a CliError for a refusal, an UncertainOutcomeError when unsure. */
async function admin(method: string, path: string, body?: Record<string, unknown>, timeoutMs?: number): Promise<unknown> {
  const base = adminUrl();
  const res = await fetch(`${base}/api/admin${path}`, {
    method,
    headers: { Authorization: `Bearer ${adminToken()}`, ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    signal: timeoutMs ? AbortSignal.timeout(timeoutMs) : undefined,
  }).catch((err) => {
    const why = err.name === "TimeoutError" ? `no answer within ${timeoutMs} ms` : (err.cause?.code ?? err.message);
    throw new UncertainOutcomeError(`Cannot reach ${base}: ${why}. Is the system running (npm start)?`);
  });
  const json: unknown = await res.json().catch(() => null);
  const failure = `${method} ${path} -> ${res.status}: ${JSON.stringify(fieldsOf(json).error ?? json)}`;
  if (res.status >= 500 || res.status === 429) throw new UncertainOutcomeError(failure);
  if (!res.ok) throw new CliError(failure);
  return json;
}

const CLI_ATTEMPTS = Number(process.env.CLI_ATTEMPTS ?? 4);
const CLI_TIMEOUT_MS = Number(process.env.CLI_TIMEOUT_MS ?? 30_000);

/**
 * For a request made idempotent by a key in its body: sent again, with the
 * same key, after a timeout, a lost connection or a 5xx (the first attempt may
 * have been applied; the key makes the retry return it rather than repeat it).
 * If every attempt fails, says how to finish it later with the same key.
 */
async function adminIdempotent(method: string, path: string, body: Record<string, unknown>, sameKeyFlag: string): Promise<unknown> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await admin(method, path, body, CLI_TIMEOUT_MS);
    } catch (err) {
      if (!(err instanceof UncertainOutcomeError)) throw err;
      if (attempt >= CLI_ATTEMPTS) {
        throw new CliError(`${err.message}\nIt may or may not have been applied: run the same command again with ${sameKeyFlag} to find out or finish it (it is never applied twice).`);
      }
      console.error(`${err.message} Retrying with the same idempotency key (attempt ${attempt + 1} of ${CLI_ATTEMPTS})...`);
      await new Promise((r) => setTimeout(r, Math.min(1000 * 2 ** (attempt - 1), 8000)));
    }
  }
}

/**
 * Runs one command line; resolves with the exit code. Usage errors (unknown command or flag, missing flag, bad value)
 * are reported by commander on stderr and exit 2; `--help` prints on stdout and exits 0.
 */
export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv.length ? argv : ["--help"], { from: "user" });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    console.error(err instanceof CliError ? err.message : err);
    return err instanceof CliError ? err.exitCode : 1;
  }
}

if (require.main === module) main(process.argv.slice(2)).then((code) => process.exit(code));
