import { describe, expect, it } from 'vitest';
import { formatGatewayBench, upstreamPacingOf } from '../../cli/commands/bench-command.js';
import { defaultRealisticPacing, summarizeRealistic, type GatewayBenchResult, type ScenarioResult, type TargetFigures } from './gateway-bench.js';

function target(overrides: Partial<TargetFigures>): TargetFigures {
  return { requests: 10, p50Ms: 1, p99Ms: 2, requestsPerSecond: 100, errors: 0, cpuMsPerRequest: 1, timeToFirstTokenMs: null, tokensPerSecondPerStream: null, ...overrides };
}

function scenario(concurrency: number, gateway: Partial<TargetFigures>, passThrough: Partial<TargetFigures> = {}): ScenarioResult {
  return {
    shape: 'agent',
    stream: true,
    concurrency,
    direct: target({ timeToFirstTokenMs: { p50: 50, p99: 55 }, tokensPerSecondPerStream: 40 }),
    passThrough: target({ timeToFirstTokenMs: { p50: 51, p99: 57 }, tokensPerSecondPerStream: 39.9, ...passThrough }),
    gateway: target(gateway),
    addedLatencyMs: { p50: 0, p99: 0 },
    throughputRatioVsPassthrough: 1,
    judgeBacklogAtStart: null,
  };
}

describe('the gateway bench report', () => {
  it('takes added time to first token at concurrency 1, and tokens/s and CPU per turn at the highest concurrency', () => {
    const summary = summarizeRealistic(defaultRealisticPacing, [
      scenario(1, { timeToFirstTokenMs: { p50: 52.5, p99: 60 }, tokensPerSecondPerStream: 39.5, cpuMsPerRequest: 30 }),
      scenario(32, { timeToFirstTokenMs: { p50: 70, p99: 90 }, tokensPerSecondPerStream: 38, cpuMsPerRequest: 20 }, { cpuMsPerRequest: 8 }),
    ]);
    expect(summary).toMatchObject({
      upstream: defaultRealisticPacing,
      addedTimeToFirstTokenMs: { p50: 2.5, p99: 5 },
      passThroughAddedTimeToFirstTokenMs: { p50: 1, p99: 2 },
      tokensPerSecondPerStream: { direct: 40, passThrough: 39.9, gateway: 38, concurrency: 32 },
      gatewayCpuMsPerAgentTurn: 20,
      passThroughCpuMsPerAgentTurn: 8,
    });
    expect(summary.scenarios).toHaveLength(2);
  });

  it('prints the realistic figures beside the instant ones', () => {
    const result: GatewayBenchResult = {
      judgeLoad: 'none',
      addedLatencyMs: { p50: 0.5, p99: 2 },
      throughputRatioVsPassthrough: 0.6,
      gatewayCpuMsPerAgentTurn: 4.2,
      scenarios: [scenario(32, {})],
      realisticUpstream: summarizeRealistic(defaultRealisticPacing, [scenario(1, { timeToFirstTokenMs: { p50: 51, p99: 56 } })]),
      goal: { addedLatencyP50Ms: 1, throughputRatio: 0.8 },
    };
    const text = formatGatewayBench(result);
    expect(text).toContain('gateway CPU per agent-shaped turn (concurrency ≥ 32, worst case): 4.2 ms');
    expect(text).toContain('first token after 50 ms, then 25 ms a token, 32 tokens a reply');
    expect(text).toContain('gateway p50 1 ms, p99 1 ms');
  });

  it('takes the realistic pacing from the flags, and refuses a value that is not a duration', () => {
    expect(upstreamPacingOf({})).toEqual(defaultRealisticPacing);
    expect(upstreamPacingOf({ upstreamTtftMs: '200', upstreamTpotMs: '12.5', upstreamReplyTokens: '64' })).toEqual({
      timeToFirstTokenMs: 200,
      timePerOutputTokenMs: 12.5,
      replyTokens: 64,
    });
    for (const [flag, value] of [['upstreamTtftMs', '-1'], ['upstreamTpotMs', 'fast'], ['upstreamReplyTokens', '0'], ['upstreamReplyTokens', '2.5']] as const) {
      expect(() => upstreamPacingOf({ [flag]: value })).toThrow(expect.objectContaining({ code: 'configuration_error', param: flag }));
    }
  });
});
