/** The reference-rate tables on PostgreSQL and PGlite (the contract: rate-tables.ts). */
import { migrate, type SqlDatabase } from "../../shared/storage/sql";
import { daysBefore, inDayOrder, type NewRateTable, type TableSource, type RateTable, type RateTableFilter, type RateTableStore } from "./rate-tables";

/** Their own migration owner, so the sales tables' list is never touched for them. */
const MIGRATIONS = [
  // One table per source and business day; the primary key serves the lookup (latest day on or before a sale's, per
  // source), the second index the admin list of every source, newest first.
  `CREATE TABLE exchange_rate_tables (
     source TEXT NOT NULL,
     day DATE NOT NULL,
     base TEXT NOT NULL,
     rates JSONB NOT NULL,
     loaded_at TIMESTAMPTZ NOT NULL DEFAULT now(),
     PRIMARY KEY (source, day));
   CREATE INDEX exchange_rate_tables_newest ON exchange_rate_tables (day DESC, source);`,
];

interface RateTableRow {
  source: TableSource;
  /** Selected as text: the driver would read a DATE as a local-time Date. */
  day: string;
  base: string;
  rates: Record<string, string>;
  loaded_at: Date;
}

// ORDER BY names the table's column: the bare name would be this text alias, which no index orders.
const COLUMNS = "source, to_char(day, 'YYYY-MM-DD') AS day, base, rates, loaded_at";

const toTable = (r: RateTableRow): RateTable => ({ source: r.source, day: r.day, base: r.base, rates: r.rates, loadedAt: r.loaded_at });

export class SqlRateTableStore implements RateTableStore {
  private constructor(private readonly db: SqlDatabase) {}

  static async create(db: SqlDatabase): Promise<SqlRateTableStore> {
    await migrate(db, "exchange_rates", MIGRATIONS);
    return new SqlRateTableStore(db);
  }

  async saveTables(source: TableSource, base: string, tables: readonly NewRateTable[]): Promise<number> {
    if (tables.length === 0) return 0;
    const rows = inDayOrder(tables).map((t) => ({ day: t.day, rates: t.rates }));
    // One statement (atomic), its rows in day order so two instances saving the same days lock them in the same order.
    const saved = await this.db.query<{ day: string }>(
      `INSERT INTO exchange_rate_tables (source, day, base, rates, loaded_at)
       SELECT $1, t.day, $2, t.rates, now() FROM jsonb_to_recordset($3::jsonb) AS t(day date, rates jsonb) ORDER BY t.day
       ON CONFLICT (source, day) DO UPDATE SET base = EXCLUDED.base, rates = EXCLUDED.rates, loaded_at = EXCLUDED.loaded_at
       RETURNING day`,
      [source, base, JSON.stringify(rows)],
    );
    return saved.length;
  }

  async findTable(source: TableSource, day: string, maxAgeDays: number): Promise<RateTable | null> {
    const [row] = await this.db.query<RateTableRow>(
      `SELECT ${COLUMNS} FROM exchange_rate_tables WHERE source = $1 AND day <= $2::date AND day >= $3::date ORDER BY exchange_rate_tables.day DESC LIMIT 1`,
      [source, day, daysBefore(day, maxAgeDays)],
    );
    return row ? toTable(row) : null;
  }

  async listTables(filter: RateTableFilter): Promise<RateTable[]> {
    const where: string[] = [];
    const values: unknown[] = [];
    const add = (condition: string, value: unknown) => {
      values.push(value);
      where.push(condition.replace("?", `$${values.length}`));
    };
    if (filter.source) add("source = ?", filter.source);
    if (filter.from) add("day >= ?::date", filter.from);
    if (filter.to) add("day <= ?::date", filter.to);
    values.push(filter.limit);
    const rows = await this.db.query<RateTableRow>(
      `SELECT ${COLUMNS} FROM exchange_rate_tables${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY exchange_rate_tables.day DESC, source LIMIT $${values.length}`,
      values,
    );
    return rows.map(toTable);
  }
}
