/**
 * Probes the address a server will listen on before it opens anything, so that a busy port fails
 * start-up in one line instead of after the store, the engine and the trainer's checkpoint were
 * opened (a second `serve` beside a running one must touch none of the first one's files). A
 * probe, not a held socket: connections to a socket nobody serves yet would hang. Another process
 * may still take the port between this probe and the real listen; that listen then fails with the
 * same line, only later.
 */
import { createServer } from 'node:net';
import { describeListenError } from './describe-listen-error.js';

export async function checkPortFree(host: string, port: number): Promise<void> {
  // Port 0 asks the system for a free port, which is free by definition.
  if (port === 0) return;
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (error) => reject(describeListenError(error, host, port)));
    probe.listen({ host, port, exclusive: true }, () => resolve());
  });
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}
