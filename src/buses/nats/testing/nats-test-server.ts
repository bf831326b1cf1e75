/**
 * The NATS server the NATS tests run against: `TEST_NATS_URL`, else the local one that
 * `scripts/check-services.sh` starts. Unreachable means failed, never skipped: CI starts NATS, so a
 * missing server is a broken environment, not an optional feature.
 */
import { randomBytes } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import type { JetStreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';

export const testNatsUrl = process.env['TEST_NATS_URL'] ?? 'nats://127.0.0.1:4222';

export interface NatsTestConnection {
  connection: NatsConnection;
  manager: JetStreamManager;
}

export async function connectToTestNats(): Promise<NatsTestConnection> {
  let connection: NatsConnection;
  try {
    connection = await connect({ servers: testNatsUrl, name: 'clawrl-tests' });
  } catch (error) {
    throw new Error(
      `NATS is not reachable at ${testNatsUrl} (${error instanceof Error ? error.message : String(error)}). ` +
        'The NATS tests need a JetStream-enabled nats-server: run `bash scripts/check-services.sh`, or set TEST_NATS_URL.',
    );
  }
  try {
    return { connection, manager: await jetstreamManager(connection) };
  } catch (error) {
    await connection.close();
    throw new Error(`NATS at ${testNatsUrl} has no JetStream (start nats-server with -js): ${String(error)}`);
  }
}

/** A name no other test run uses, legal as a stream, bucket and subject token. */
export function uniqueTestName(prefix: string): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}
