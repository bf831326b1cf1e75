import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRedactor } from '../core/redaction/create-redactor.js';
import { defaultRedactionSpec } from '../core/redaction/redaction-spec.js';
import type { ChatMessage } from '../spec/chat.js';
import { createInlineConversationRedactor } from './conversation-redactor.js';
import { startRedactionWorker } from './start-redaction-worker.js';

// The built worker (`npm run build`), as the server runs it.
const workerUrl = new URL(path.join('..', '..', 'dist', 'gateway', 'redaction-worker.js'), import.meta.url);
const secret = 'sk-proj-' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6';
const turn = {
  messages: [{ role: 'system', content: 'You are helpful.' }, { role: 'user', content: `my key is ${secret}, mail me at ana@example.com` }] satisfies ChatMessage[],
  response: { role: 'assistant', content: `Stored ${secret}.` } satisfies ChatMessage,
  error: null,
};

describe('startRedactionWorker', () => {
  it('redacts on its thread exactly as the inline redactor does, turn, next state and text', async () => {
    const worker = startRedactionWorker(defaultRedactionSpec, { workerUrl });
    const inline = createInlineConversationRedactor(createRedactor(defaultRedactionSpec));
    try {
      const [remote, local] = await Promise.all([worker.redactTurn(turn), inline.redactTurn(turn)]);
      expect(remote).toEqual(local);
      expect(JSON.stringify(remote)).not.toContain(secret);
      expect(remote.prompt.tally.count).toBe(2);
      expect(remote.responseTally.count).toBe(1);
      expect(await worker.redactMessages(turn.messages)).toEqual(await inline.redactMessages(turn.messages));
      expect(await worker.redactText(`key ${secret}`)).toBe(await inline.redactText(`key ${secret}`));
    } finally {
      await worker.close();
    }
    await expect(worker.redactText('after close')).rejects.toMatchObject({ code: 'internal_error' });
  });

  it('loses nothing when its thread fails: the requests it held are redacted here, and the next starts a new thread', async () => {
    const failures: string[] = [];
    const broken = startRedactionWorker(defaultRedactionSpec, { workerUrl: new URL('data:text/javascript,process.exit(3)'), onWorkerFailed: (error) => failures.push(error.message) });
    const redacted = await broken.redactTurn(turn);
    expect(JSON.stringify(redacted)).not.toContain(secret);
    expect(failures.length).toBeGreaterThan(0);
    expect(await broken.redactText(`again ${secret}`)).not.toContain(secret);
    await broken.close();
  });
});
