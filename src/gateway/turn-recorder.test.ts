import { describe, expect, it } from 'vitest';
import { createTestGateway } from './testing/create-test-gateway.js';
import { createTurnRecorder } from './turn-recorder.js';

const principal = { kind: 'tenant', tenant: 'alice', user: 'alice' } as const;
const request = { messages: [{ role: 'user' as const, content: 'count me' }], tools: [], toolChoice: 'auto' as const };
const countOf = (model: string) => ({ route: 'messages', model, request, principal, clientSignal: new AbortController().signal });

describe('TurnRecorder.countTokens', () => {
  it('counts with the engine under the same model check and key slot as a turn, and records nothing', async () => {
    const gateway = createTestGateway({ limits: { concurrencyPerKey: 1 } });
    const recorder = createTurnRecorder(gateway.context);
    await expect(recorder.countTokens(countOf('no-such-model'))).rejects.toMatchObject({ code: 'not_found', param: 'model' });
    // The scripted engine's prompt ids are one per character of `role:content`.
    expect(await recorder.countTokens(countOf('scripted-model'))).toBe('user:count me'.length);
    // The count freed its slot; a turn in flight holds the key's only one.
    const turn = await recorder.begin({
      route: 'messages',
      model: 'scripted-model',
      request: { ...request, sampling: { maxTokens: 8, temperature: 1, topP: 1, stop: [], n: 1, topLogprobs: 0 } },
      stream: false,
      header: () => undefined,
      principal,
      pathSessionId: undefined,
      clientSignal: new AbortController().signal,
    });
    await expect(recorder.countTokens(countOf('scripted-model'))).rejects.toMatchObject({ code: 'rate_limited' });
    await turn.complete();
    expect(await recorder.countTokens(countOf('scripted-model'))).toBe('user:count me'.length);
    expect(await gateway.store.counts()).toMatchObject({ turns: { main: 1 } });
  });
});
