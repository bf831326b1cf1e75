import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBenchCommand } from '../../cli/commands/bench-command.js';

// The bench spawns its peers and the gateway from the build, beside its own module.
const built = path.join(import.meta.dirname, '..', '..', '..', 'dist', 'lab', 'bench', 'gateway-bench.js');

describe('runGatewayBench', () => {
  it('measures every target in as many alternating rounds as asked, against the instant and the paced upstream, without errors', async () => {
    const { defaultGatewayBenchOptions, runGatewayBench } = (await import(built)) as typeof import('./gateway-bench.js');
    const result = await runGatewayBench({
      ...defaultGatewayBenchOptions,
      judgeLoad: 'none',
      shapes: ['small'],
      streams: [false],
      concurrencies: [2],
      requestsAt: () => 6,
      warmUpRequests: 0,
      rounds: 3,
      realisticPacing: { timeToFirstTokenMs: 5, timePerOutputTokenMs: 1, replyTokens: 3 },
      realisticScenarios: [{ shape: 'small', stream: true, concurrency: 1, requests: 2 }],
      // As `--cli-script` passes another build's entry; here this build's, named explicitly.
      cliScript: path.join(import.meta.dirname, '..', '..', '..', 'dist', 'cli', 'main.js'),
    });
    const [scenario] = result.scenarios;
    for (const target of [scenario?.direct, scenario?.passThrough, scenario?.gateway]) {
      expect(target).toMatchObject({ requests: 9, errors: 0 });
    }
    const [paced] = result.realisticUpstream?.scenarios ?? [];
    for (const target of [paced?.direct, paced?.passThrough, paced?.gateway]) {
      expect(target).toMatchObject({ requests: 3, errors: 0 });
      // Each stream's first token came after the upstream's time to first token, and its three tokens were timed.
      expect(target?.timeToFirstTokenMs?.p50).toBeGreaterThanOrEqual(5);
      expect(target?.tokensPerSecondPerStream).toBeGreaterThan(0);
    }
  });

  it('refuses a round count that is not a positive integer, and a --cli-script that does not exist, before starting anything', async () => {
    for (const rounds of ['0', '-1', '1.5', 'many']) {
      await expect(runBenchCommand('gateway', { json: true, quick: true, rounds })).rejects.toMatchObject({ code: 'configuration_error', param: 'rounds' });
    }
    await expect(runBenchCommand('gateway', { json: true, quick: true, cliScript: '/nonexistent/dist/cli/main.js' })).rejects.toMatchObject({
      code: 'configuration_error',
      param: 'cliScript',
    });
  });
});
