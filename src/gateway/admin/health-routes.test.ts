import { describe, expect, it } from 'vitest';
import type { EngineHealth } from '../../spec/inference-engine.js';
import { healthCacheMs } from './health-routes.js';
import { createTestGateway, type TestGateway } from '../testing/create-test-gateway.js';
import { createScriptedInferenceEngine } from '../testing/scripted-inference-engine.js';

/** A gateway whose engine answers health checks from `answer`, counting them, on a clock the test moves. */
function gatewayWithHealth(answer: () => Promise<EngineHealth>): { gateway: TestGateway; checks: () => number; advance: (ms: number) => void } {
  const engine = createScriptedInferenceEngine({});
  let checks = 0;
  engine.checkHealth = () => {
    checks += 1;
    return answer();
  };
  const gateway = createTestGateway({ engine });
  let time = 1_700_000_000_000;
  gateway.context.now = () => time;
  return { gateway, checks: () => checks, advance: (ms) => (time += ms) };
}

async function get(gateway: TestGateway, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await gateway.app.request(path);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('GET /healthz and /readyz', () => {
  it('say ok for an engine without a health check, with the store and training state in /readyz', async () => {
    const gateway = createTestGateway();
    expect(await get(gateway, '/healthz')).toEqual({ status: 200, body: { status: 'ok', model: gateway.engine.modelId } });
    const ready = await get(gateway, '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({
      status: 'ready',
      model: gateway.engine.modelId,
      engine: { status: 'ok', engine: gateway.engine.engineId },
      store: { status: 'ok' },
      training: { status: 'off' },
    });
  });

  it('answer 503 with the reason when the engine does not answer, and in /readyz name the part', async () => {
    const { gateway } = gatewayWithHealth(async () => ({ ok: false, reason: 'the vllm upstream at http://gpu:8000 did not answer: connect ECONNREFUSED' }));
    expect(await get(gateway, '/healthz')).toEqual({
      status: 503,
      body: { status: 'unavailable', model: gateway.engine.modelId, reason: 'the vllm upstream at http://gpu:8000 did not answer: connect ECONNREFUSED' },
    });
    const ready = await get(gateway, '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ status: 'unavailable', engine: { status: 'unavailable', reason: expect.stringContaining('ECONNREFUSED') }, store: { status: 'ok' } });
  });

  it('take a health check that throws as unavailable', async () => {
    const { gateway } = gatewayWithHealth(async () => {
      throw new Error('socket hang up');
    });
    expect(await get(gateway, '/healthz')).toMatchObject({ status: 503, body: { status: 'unavailable', reason: 'socket hang up' } });
  });

  it('ask the engine at most once per cache period, however many probes come, and again after it', async () => {
    let healthy = false;
    const { gateway, checks, advance } = gatewayWithHealth(async () => (healthy ? { ok: true } : { ok: false, reason: 'down' }));
    const probes = await Promise.all([get(gateway, '/healthz'), get(gateway, '/readyz'), get(gateway, '/healthz')]);
    expect(probes.map((probe) => probe.status)).toEqual([503, 503, 503]);
    healthy = true;
    advance(healthCacheMs - 1);
    expect((await get(gateway, '/healthz')).status).toBe(503);
    expect(checks()).toBe(1);
    advance(1);
    expect(await get(gateway, '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(checks()).toBe(2);
  });

  it('report a store that fails as unavailable in /readyz', async () => {
    const gateway = createTestGateway();
    await gateway.store.close();
    const ready = await get(gateway, '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ status: 'unavailable', engine: { status: 'ok' }, store: { status: 'unavailable', reason: expect.stringContaining('closed') } });
  });
});
