import { describe, expect, it } from 'vitest';
import { ClawrlError } from '../spec/clawrl-error.js';
import type { PolicyVersionRecord } from '../spec/records.js';
import { newPolicyVersion } from '../stores/testing/record-fixtures.js';
import { checkPinnedVersion, fullConsent, parseKeyConsent, requestControlsOf } from './request-controls.js';
import { createTestGateway, readEvents } from './testing/create-test-gateway.js';

const model = 'scripted-model';
const headersOf = (headers: Record<string, string>) => (name: string) => headers[name];
const versionRecord = (version: number, extra: Record<string, unknown> = {}): PolicyVersionRecord =>
  ({ version, parent: null, kind: 'base', step: null, samples: 0, metrics: null, createdAt: 0, active: false, bytes: 0, ...extra }) as PolicyVersionRecord;

describe('requestControlsOf', () => {
  it('reads the pin and the switches, the headers winning over the key defaults either way', () => {
    expect(requestControlsOf(headersOf({}), fullConsent)).toEqual({ pinnedVersion: null, train: true, record: true });
    expect(requestControlsOf(headersOf({ 'x-clawrl-policy-version': ' 12 ', 'x-clawrl-train': 'OFF', 'x-clawrl-record': 'off' }), fullConsent)).toEqual({
      pinnedVersion: 12,
      train: false,
      record: false,
    });
    expect(requestControlsOf(headersOf({ 'x-clawrl-train': 'on' }), { train: false, record: false })).toEqual({ pinnedVersion: null, train: true, record: false });
    expect(requestControlsOf(headersOf({}), { train: false, record: true })).toMatchObject({ train: false, record: true });
  });

  it('refuses a pin that is no version number and a switch that is neither on nor off, naming the header', () => {
    for (const value of ['latest', '-1', '1.5', '', '0x2', '99999999999999999']) {
      expect(() => requestControlsOf(headersOf({ 'x-clawrl-policy-version': value }), fullConsent)).toThrow(
        expect.objectContaining({ code: 'invalid_request', param: 'X-Clawrl-Policy-Version' }),
      );
    }
    expect(() => requestControlsOf(headersOf({ 'x-clawrl-train': 'maybe' }), fullConsent)).toThrow(expect.objectContaining({ code: 'invalid_request', param: 'X-Clawrl-Train' }));
    expect(() => requestControlsOf(headersOf({ 'x-clawrl-record': 'nope' }), fullConsent)).toThrow(expect.objectContaining({ param: 'X-Clawrl-Record' }));
  });
});

describe('checkPinnedVersion', () => {
  it('accepts recorded versions and the base, refuses unknown and retired ones by number', () => {
    const versions = [versionRecord(0), versionRecord(1), versionRecord(2, { state: 'retired' }), versionRecord(3, { state: 'active' })];
    expect(() => checkPinnedVersion(1, versions)).not.toThrow();
    expect(() => checkPinnedVersion(3, versions)).not.toThrow();
    expect(() => checkPinnedVersion(0, [])).not.toThrow();
    expect(() => checkPinnedVersion(7, versions)).toThrow(/Policy version 7 is unknown/);
    expect(() => checkPinnedVersion(2, versions)).toThrow(/Policy version 2 is retired/);
    expect(() => checkPinnedVersion(4, [versionRecord(4, { state: 'candidate' })])).toThrow(/Policy version 4 is a candidate/);
    expect(() => checkPinnedVersion(5, [versionRecord(5, { state: 'rejected' })])).toThrow(/Policy version 5 is rejected/);
    expect(() => checkPinnedVersion(6, [versionRecord(6, { state: 'rolled-back' })])).not.toThrow();
  });
});

describe('parseKeyConsent', () => {
  it('gathers each tenant\'s defaults and refuses anything else', () => {
    const parsed = parseKeyConsent(['ci=train-off', 'private=record-off', 'private=train-off']);
    expect(Object.fromEntries(parsed)).toEqual({ ci: { train: false, record: true }, private: { train: false, record: false } });
    expect(() => parseKeyConsent(['ci=off'])).toThrow(ClawrlError);
    expect(() => parseKeyConsent(['=train-off'])).toThrow(/--key-consent/);
  });
});

describe('X-Clawrl-Policy-Version on every protocol', () => {
  const chat = { model, messages: [{ role: 'user', content: 'hi' }] };
  const responses = { model, input: 'hi' };
  const messages = { model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };

  /** Version 0 retired (version 1 replaced it), 1 active, 2 rolled back by a person, 3 a candidate before the gate. */
  async function pinnedGateway() {
    const gateway = createTestGateway();
    await gateway.store.recordPolicyVersion(newPolicyVersion(0), { activate: true });
    await gateway.store.recordPolicyVersion(newPolicyVersion(1), { activate: true });
    await gateway.store.recordPolicyVersion(newPolicyVersion(2), { activate: false });
    await gateway.store.setPolicyVersionState(2, 'rolled-back', { reason: 'rolled back by a person', at: 1 });
    await gateway.store.recordPolicyVersion(newPolicyVersion(3), { activate: false });
    return gateway;
  }

  it('serves the pinned version, says so, and records it', async () => {
    const gateway = await pinnedGateway();
    for (const [body, path] of [[chat, '/v1/chat/completions'], [responses, '/v1/responses'], [messages, '/v1/messages']] as const) {
      const response = await gateway.chat(body, { 'x-clawrl-policy-version': '2' }, path);
      expect(response.status).toBe(200);
      expect(response.headers.get('x-clawrl-policy-version')).toBe('2');
      expect(gateway.engine.generateCalls.at(-1)?.policyVersion).toBe(2);
      expect(await gateway.store.getTurn(response.headers.get('x-clawrl-turn-id') ?? '')).toMatchObject({ policyVersion: 2 });
    }
    const unpinned = await gateway.chat(chat);
    expect(unpinned.headers.get('x-clawrl-policy-version')).toBe('0');
    expect(gateway.engine.generateCalls.at(-1)?.policyVersion).toBeUndefined();
  });

  it('refuses a pin of a retired version, naming it', async () => {
    const gateway = await pinnedGateway();
    expect((await gateway.store.listPolicyVersions()).find((version) => version.version === 0)?.state).toBe('retired');
    const response = await gateway.chat(chat, { 'x-clawrl-policy-version': '0' });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain('Policy version 0 is retired');
    expect(gateway.engine.generateCalls).toHaveLength(0);
  });

  it('refuses a pin of a candidate the gate has not passed, so no client routes around the gate', async () => {
    const gateway = await pinnedGateway();
    const response = await gateway.chat(chat, { 'x-clawrl-policy-version': '3' });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain('Policy version 3 is a candidate');
    expect(gateway.engine.generateCalls).toHaveLength(0);
  });

  it('answers 400 in each protocol\'s own shape, naming the version, for an unknown or malformed pin, and generates nothing', async () => {
    const gateway = await pinnedGateway();
    for (const path of ['/v1/chat/completions', '/v1/responses']) {
      const response = await gateway.chat(path === '/v1/responses' ? responses : chat, { 'x-clawrl-policy-version': '7' }, path);
      expect(response.status).toBe(400);
      const body = (await response.json()) as { error: { message: string; type: string; param: string } };
      expect(body.error).toMatchObject({ type: 'invalid_request_error', param: 'X-Clawrl-Policy-Version' });
      expect(body.error.message).toContain('Policy version 7');
    }
    const anthropic = await gateway.chat(messages, { 'x-clawrl-policy-version': '7' }, '/v1/messages');
    expect(anthropic.status).toBe(400);
    const anthropicBody = (await anthropic.json()) as { type: string; error: { type: string; message: string } };
    expect(anthropicBody).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(anthropicBody.error.message).toContain('Policy version 7');
    const malformed = await gateway.chat(chat, { 'x-clawrl-policy-version': 'latest' });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { error: { message: string } }).error.message).toContain("'latest'");
    expect(gateway.engine.generateCalls).toHaveLength(0);
    expect((await gateway.store.counts()).turns.main).toBe(0);
  });

  it('answers 400 naming the version when the engine does not hold a recorded version', async () => {
    const gateway = await pinnedGateway();
    gateway.engine.failNext = new ClawrlError('not_found', 'policy version 2 is not loaded on this engine');
    const response = await gateway.chat(chat, { 'x-clawrl-policy-version': '2' });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/Policy version 2 is not loaded on the scripted engine/);
  });
});

describe('consent', () => {
  const user = (content: string) => ({ role: 'user', content });

  it('X-Clawrl-Train: off records the turn, says why, and never queues it for judging, even once linked or rated', async () => {
    const gateway = createTestGateway();
    const headers = { 'x-session-id': 'quiet', 'x-clawrl-train': 'off' };
    const first = await gateway.chat({ model, messages: [user('hi')] }, headers);
    expect(first.headers.get('x-clawrl-train')).toBe('off');
    const firstId = first.headers.get('x-clawrl-turn-id') ?? '';
    const reply = ((await first.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content ?? '';
    await (await gateway.chat({ model, messages: [user('hi'), { role: 'assistant', content: reply }, user('thanks')], stream: true }, headers)).text();
    expect(await gateway.store.getTurn(firstId)).toMatchObject({ trainable: false, untrainableReason: 'train-off', nextState: [user('thanks')] });
    await gateway.store.recordFeedback({ turnId: firstId, score: 1, text: null, hint: null, tenant: null, user: null, createdAt: 1 });
    expect(await gateway.store.claimTurnsForJudging({ limit: 10, leaseMs: 1_000, now: 1, workerId: 'w' })).toEqual([]);
    expect((await gateway.store.counts()).turns).toMatchObject({ main: 2, trainable: 0 });
  });

  it('X-Clawrl-Record: off serves without a turn, a session or a link, and counts only in the metrics', async () => {
    const gateway = createTestGateway();
    const first = await gateway.chat({ model, messages: [user('hi')] }, { 'x-session-id': 'kept' });
    const reply = ((await first.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content ?? '';
    const off = { 'x-session-id': 'kept', 'x-clawrl-record': 'off' };
    const unrecorded = await gateway.chat({ model, messages: [user('hi'), { role: 'assistant', content: reply }, user('secret')] }, off);
    expect(unrecorded.status).toBe(200);
    expect(unrecorded.headers.get('x-clawrl-record')).toBe('off');
    expect(unrecorded.headers.get('x-clawrl-session-id')).toBeNull();
    const streamed = await gateway.chat({ model, messages: [user('secret too')], stream: true }, { 'x-session-id': 'never', 'x-clawrl-record': 'off', 'x-session-done': '1' });
    expect((await readEvents(streamed)).done).toBe(true);
    const responses = await gateway.chat({ model, input: 'secret three' }, { 'x-clawrl-record': 'off' }, '/v1/responses');
    expect(responses.status).toBe(200);
    for (const response of [unrecorded, streamed, responses]) expect(await gateway.store.getTurn(response.headers.get('x-clawrl-turn-id') ?? '')).toBeNull();
    expect(await gateway.store.getSession('never')).toBeNull();
    expect(await gateway.store.getTurn(first.headers.get('x-clawrl-turn-id') ?? '')).toMatchObject({ nextState: null });
    expect(await gateway.store.counts()).toMatchObject({ sessions: { open: 1, closed: 0 }, turns: { main: 1 } });
    const metrics = await (await gateway.app.request('/metrics')).text();
    expect(metrics).toMatch(/clawrl_turns_unrecorded_total\{[^}]*type="main"[^}]*\} 3/);
    expect(metrics).toMatch(/clawrl_turns_recorded_total\{[^}]*type="main"[^}]*\} 1/);
  });

  it('takes an API key\'s defaults, which a request header overrides', async () => {
    const gateway = createTestGateway({
      apiKeys: [{ tenant: 'ci', user: 'ci', key: 'ci-key-123' }, { tenant: 'vault', user: 'vault', key: 'vault-key-123' }, { tenant: 'open', user: 'open', key: 'open-key-123' }],
      consentDefaults: parseKeyConsent(['ci=train-off', 'vault=record-off']),
    });
    const send = async (key: string, headers: Record<string, string> = {}) =>
      (await gateway.chat({ model, messages: [user(`from ${key}`)] }, { authorization: `Bearer ${key}`, ...headers })).headers.get('x-clawrl-turn-id') ?? '';
    expect(await gateway.store.getTurn(await send('ci-key-123'))).toMatchObject({ trainable: false, untrainableReason: 'train-off' });
    expect(await gateway.store.getTurn(await send('ci-key-123', { 'x-clawrl-train': 'on' }))).toMatchObject({ trainable: true, untrainableReason: null });
    expect(await gateway.store.getTurn(await send('vault-key-123'))).toBeNull();
    expect(await gateway.store.getTurn(await send('vault-key-123', { 'x-clawrl-record': 'on' }))).toMatchObject({ tenant: 'vault', user: 'vault', trainable: true });
    expect(await gateway.store.getTurn(await send('open-key-123'))).toMatchObject({ trainable: true });
  });
});
