import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNatsEventBus } from './create-nats-event-bus.js';
import { eraseNatsEvents } from './erase-nats-events.js';
import { connectToTestNats, testNatsUrl, uniqueTestName, type NatsTestConnection } from './testing/nats-test-server.js';

let admin: NatsTestConnection;

beforeAll(async () => {
  admin = await connectToTestNats();
});

afterAll(async () => {
  await admin?.connection.close();
});

/** Every stored message's bytes, read back by sequence. */
async function storedTexts(streamName: string): Promise<string[]> {
  const info = await admin.manager.streams.info(streamName);
  const texts: string[] = [];
  for (let sequence = info.state.first_seq; sequence <= info.state.last_seq; sequence += 1) {
    const message = await admin.manager.streams.getMessage(streamName, { seq: sequence }).catch(() => null);
    if (message !== null) texts.push(new TextDecoder().decode(message.data));
  }
  return texts;
}

describe('eraseNatsEvents', () => {
  it('erases the events naming an erased session, turn or sample and keeps the rest', async () => {
    const streamName = uniqueTestName('clawrl_test');
    const bus = await createNatsEventBus({ servers: testNatsUrl, streamName, subjectPrefix: streamName });
    try {
      await bus.publish('turn-recorded', { turnId: 'turn-gone', sessionId: 'session-gone-marker' });
      await bus.publish('turn-recorded', { turnId: 'turn-kept', sessionId: 'session-kept' });
      await bus.publish('turn-scored', { turnId: 'turn-gone', score: 1 });
      await bus.publish('sample-available', { sampleId: 'sample-gone', policyVersion: 0 });
      await bus.publish('policy-published', { version: 1 });
      const erased = await eraseNatsEvents({ servers: testNatsUrl, streamName }, { sessionIds: ['session-gone-marker'], turnIds: ['turn-gone'], sampleIds: ['sample-gone'] });
      expect(erased).toBe(3);
      const texts = await storedTexts(streamName);
      expect(texts).toHaveLength(2);
      expect(texts.join('\n')).not.toContain('gone');
      expect(await eraseNatsEvents({ servers: testNatsUrl, streamName }, { sessionIds: ['nobody'], turnIds: [], sampleIds: [] })).toBe(0);
    } finally {
      await bus.close();
      await admin.manager.streams.delete(streamName).catch(() => false);
    }
  });
});
