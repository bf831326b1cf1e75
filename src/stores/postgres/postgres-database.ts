/**
 * The connection pool of the Postgres record store, with the two ways the store talks to it: one
 * statement on any pooled connection, or a transaction on one connection. Every failure leaves as
 * a `ClawrlError` with code `store_error`.
 */
import pg from 'pg';
import type { QueryResultRow } from 'pg';
import { ClawrlError } from '../../spec/clawrl-error.js';

/** What both a pool and a connection inside a transaction offer. */
export interface Queryable {
  query<Row extends QueryResultRow>(text: string, values?: unknown[]): Promise<{ rows: Row[]; rowCount: number | null }>;
}

export interface PostgresDatabaseOptions {
  connectionString: string;
  schema: string;
  poolSize: number;
}

const int8Oid = 20;
// Deadlock and serialization failures: Postgres rolled the transaction back, so running it again
// is safe and is what the server asks clients to do.
const retryableCodes = new Set(['40P01', '40001']);
const transactionAttempts = 3;

function postgresCodeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

/** Lost or refused connections and server shutdowns pass; constraint violations do not. */
function isConnectionFailure(error: unknown): boolean {
  const code = postgresCodeOf(error) ?? '';
  if (code.startsWith('08') || ['57P01', '57P03', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT'].includes(code)) return true;
  // pg reports a connection that dropped mid-query without a code.
  return error instanceof Error && /Connection terminated/i.test(error.message);
}

/**
 * Connects once and hangs up, within `timeoutMs`. The pool has no timeout of its own for
 * connecting (pg's applies to waiting for a free connection too, which under load is no failure),
 * so a server that accepts the connection and never answers would hold the first query forever.
 */
export async function checkPostgresAnswers(connectionString: string, timeoutMs: number): Promise<void> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: timeoutMs, application_name: 'clawrl' });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(/timeout/i.test(message) ? `no answer within ${timeoutMs / 1000} s` : message, { cause: error });
  }
  await client.end().catch(() => undefined);
}

export class PostgresDatabase {
  readonly #pool: pg.Pool;
  #closed = false;

  constructor(options: PostgresDatabaseOptions) {
    this.#pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.poolSize,
      application_name: 'clawrl',
      // Unqualified table names resolve to the store's schema on every connection of the pool;
      // floats print with every digit they need even on servers older than 12, so they read back exactly.
      options: `-c search_path=${options.schema} -c extra_float_digits=3`,
      types: {
        // bigint columns (times in epoch milliseconds, ids, counts) stay far below 2^53, so they
        // read back as numbers rather than pg's default strings.
        getTypeParser: ((oid: number, format?: string) =>
          oid === int8Oid && format !== 'binary'
            ? (value: string) => Number(value)
            : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
      },
    });
    // An idle connection that breaks (server restart, failover, network) is dropped by the pool and
    // reported here; without a listener Node would crash the process. The next query opens a fresh
    // connection, or fails with store_error if the server is still away.
    this.#pool.on('error', () => undefined);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** One statement on any pooled connection (its own implicit transaction). */
  async query<Row extends QueryResultRow>(text: string, values: unknown[] = []): Promise<{ rows: Row[]; rowCount: number | null }> {
    return this.#pool.query<Row>(text, values);
  }

  async rows<Row extends QueryResultRow>(text: string, values: unknown[] = []): Promise<Row[]> {
    return (await this.#pool.query<Row>(text, values)).rows;
  }

  /** Runs `work` in one READ COMMITTED transaction, retried when Postgres reports a deadlock. */
  async transaction<T>(work: (client: Queryable) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      const client = await this.#pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch((rollbackError: unknown) => {
          // A connection that cannot even roll back must not go back into the pool.
          broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
        });
        const code = postgresCodeOf(error);
        if (code === undefined || !retryableCodes.has(code) || attempt >= transactionAttempts) throw error;
      } finally {
        client.release(broken);
      }
    }
  }

  /** Runs `work` as store operation `operation`, wrapping every failure in a `store_error`. */
  async run<T>(operation: string, work: () => Promise<T>): Promise<T> {
    if (this.#closed) throw new ClawrlError('store_error', `${operation}: the record store is closed`);
    try {
      return await work();
    } catch (error) {
      if (ClawrlError.isInstance(error)) throw error;
      const message = error instanceof Error ? error.message : String(error);
      throw new ClawrlError('store_error', `${operation} failed: ${message}`, {
        cause: error,
        retryable: isConnectionFailure(error),
      });
    }
  }

  /** Idempotent; waits for checked-out connections to be released. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#pool.end();
  }
}
