/**
 * A distributed deployment for end-to-end tests, on this machine's Postgres and NATS: its own
 * Postgres schema and JetStream stream (so versions start at 0 and no other run's events arrive),
 * and `clawrl gateway | judge | trainer` processes started on them, each stopped by `close`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { connectToTestNats, testNatsUrl, uniqueTestName } from '../../src/buses/nats/testing/nats-test-server.js';
import { dropTestSchema, testPostgresUrl, uniqueTestSchema } from '../../src/stores/postgres/testing/test-postgres.js';
import { cliPath } from './start-clawrl-server.js';

export interface ClawrlProcess {
  /** The gateway's URL; empty for the judge and the trainer. */
  url: string;
  stderr(): string;
  stop(): Promise<void>;
  kill(): Promise<void>;
}

export interface DistributedDeployment {
  /** The JetStream stream (and subject prefix) of this deployment's events. */
  busPrefix: string;
  start(command: 'gateway' | 'judge' | 'trainer', argumentsList: string[]): Promise<ClawrlProcess>;
  /** Stops every process still running, drops the schema and deletes the stream. */
  close(): Promise<void>;
}

export function createDistributedDeployment(): DistributedDeployment {
  const schema = uniqueTestSchema();
  const busPrefix = uniqueTestName('clawrl_e2e');
  const url = new URL(testPostgresUrl);
  url.searchParams.set('schema', schema);
  const shared = ['--store', 'postgres', '--store-url', url.toString(), '--bus', 'nats', '--bus-url', testNatsUrl, '--bus-prefix', busPrefix];
  const running = new Set<ClawrlProcess>();

  async function start(command: 'gateway' | 'judge' | 'trainer', argumentsList: string[]): Promise<ClawrlProcess> {
    const child: ChildProcess = spawn(process.execPath, [cliPath, command, ...shared, ...argumentsList], { stdio: ['ignore', 'pipe', 'pipe'] });
    let errors = '';
    let output = '';
    child.stderr?.on('data', (part: Buffer) => {
      errors += part.toString('utf8');
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const ready = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`clawrl ${command} did not start in time:\n${errors}`)), 30_000);
      child.stdout?.on('data', (part: Buffer) => {
        output += part.toString('utf8');
        const match = /clawrl ready (\S+)/.exec(output);
        if (match?.[1] !== undefined) {
          clearTimeout(timer);
          resolve(match[1].startsWith('http') ? match[1] : '');
        }
      });
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`clawrl ${command} exited before it was ready:\n${errors}`));
      });
    });
    const signal = async (name: NodeJS.Signals) => {
      running.delete(started);
      if (child.exitCode === null && child.signalCode === null) child.kill(name);
      await exited;
    };
    const started: ClawrlProcess = { url: ready, stderr: () => errors, stop: () => signal('SIGTERM'), kill: () => signal('SIGKILL') };
    running.add(started);
    return started;
  }

  return {
    busPrefix,
    start,
    async close() {
      await Promise.all([...running].map((started) => started.stop()));
      await dropTestSchema(schema);
      const nats = await connectToTestNats();
      await nats.manager.streams.delete(busPrefix).catch(() => false);
      await nats.connection.close();
    },
  };
}
