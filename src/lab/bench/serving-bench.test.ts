import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runServingBench } from './serving-bench.js';

describe('runServingBench', () => {
  it('measures throughput, an agent session\'s two turns, a stream beside a long prompt, and throughput while a step runs, through the real server', async () => {
    const result = await runServingBench({
      concurrencies: [1, 2],
      streamTokens: 6,
      agentSessions: 1,
      cliScript: path.join(import.meta.dirname, '..', '..', '..', 'dist', 'cli', 'main.js'),
    });
    expect(result.throughput.map((figure) => figure.concurrency)).toEqual([1, 2]);
    for (const figure of result.throughput) {
      expect(figure.completionTokens).toBeGreaterThan(0);
      expect(figure.tokensPerSecond).toBeGreaterThan(0);
    }
    expect(result.concurrencyScaling).toBeGreaterThan(0);
    expect(result.agentSession.firstTurnTtftMs[0]).toBeGreaterThan(0);
    expect(result.agentSession.secondTurnTtftMs[0]).toBeGreaterThan(0);
    expect(result.whileLongPromptArrives.longPromptTtftMs).toBeGreaterThan(0);
    expect(result.whileTraining?.throughput.map((figure) => figure.stepRunningAtStart)).toEqual([true, true]);
    expect(result.whileTraining?.whileLongPromptArrives.stepRunningAtStart).toBe(true);
    expect(result.whileTraining?.whileLongPromptArrives.timePerOutputTokenMs.p50).toBeGreaterThan(0);
  }, 120_000);
});
