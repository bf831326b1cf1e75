// Dev tool (not shipped, not tested): garbage collection and allocation per agent-shaped request of
// one build's `clawrl gateway`. Usage, from any directory, the build built (`npm run build`):
//   node scripts/gateway-cpu/gc-per-request.mjs /path/to/worktree [--stream] [--concurrency=32] [--requests=3000]
// The gateway runs with `--trace-gc-nvp`; after 600 warm-up requests, the scavenges and full
// collections of the measured requests are summed: main-thread pause, bytes promoted and
// allocated per request. See docs/benchmarks.md.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
const args = process.argv.slice(2);
const root = args.find((a) => !a.startsWith('--')) ?? '.';
const stream = args.includes('--stream');
const concurrency = Number(args.find((a) => a.startsWith('--concurrency='))?.slice(14) ?? 32);
const requests = Number(args.find((a) => a.startsWith('--requests='))?.slice(11) ?? 3000);
const { spawnReadyProcess } = await import(path.resolve(root, 'dist/lab/bench/spawn-ready-process.js'));
const { runLoad } = await import(path.resolve(root, 'dist/lab/bench/load-generator.js'));
const upstream = await spawnReadyProcess(path.resolve(root, 'dist/lab/bench/run-bench-peer.js'), ['upstream']);
const data = mkdtempSync(path.join(tmpdir(), 'gc-per-request-'));
const gateway = spawn(process.execPath, ['--max-semi-space-size=64', '--trace-gc-nvp', path.resolve(root, 'dist/cli/main.js'), 'gateway', '--store', 'sqlite', '--bus', 'memory', '--engine', 'vllm', '--upstream', upstream.url, '--model', 'bench-model', '--port', '0', '--data', data, '--concurrency-per-key', '4096', '--session-idle-timeout', '3600'], { stdio: ['ignore', 'pipe', 'ignore'] });
let output = '';
gateway.stdout.on('data', (part) => { output += part.toString('utf8'); });
while (!/ready (http:\/\/\S+)/.test(output)) await new Promise((resolve) => setTimeout(resolve, 50));
const url = /ready (http:\/\/\S+)/.exec(output)[1];
await runLoad({ baseUrl: url, shape: 'agent', stream: true, concurrency: 4, requests: 600, runName: 'warm' });
const from = output.length;
const result = await runLoad({ baseUrl: url, shape: 'agent', stream, concurrency, requests, runName: 'measured' });
const totals = { scavenges: 0, scavengePauseMs: 0, promotedBytes: 0, allocatedBytes: 0, fullCollections: 0, fullPauseMs: 0, markMs: 0 };
for (const line of output.slice(from).split('\n')) {
  const fields = Object.fromEntries([...line.matchAll(/(\w+)=([\w.-]+)/g)].map((match) => [match[1], match[2]]));
  if (fields.gc === 's') {
    totals.scavenges += 1;
    totals.scavengePauseMs += Number(fields.pause);
    totals.promotedBytes += Number(fields.promoted);
    totals.allocatedBytes += Number(fields.allocated);
  } else if (fields.gc !== undefined) {
    totals.fullCollections += 1;
    totals.fullPauseMs += Number(fields.pause);
    totals.markMs += Number(fields.mark ?? 0);
  }
}
const per = (value) => (value / result.requests).toFixed(3);
console.log(`${stream ? 'stream' : 'non-stream'} c=${concurrency}, ${result.requests} requests: ${totals.scavenges} scavenges, pause ${per(totals.scavengePauseMs)} ms/request, promoted ${per(totals.promotedBytes / 1024)} KB/request, allocated ${per(totals.allocatedBytes / 1024)} KB/request; ${totals.fullCollections} full collections, pause ${per(totals.fullPauseMs)} ms/request, marking ${per(totals.markMs)} ms/request`);
gateway.kill('SIGTERM');
await upstream.stop();
await new Promise((resolve) => gateway.once('exit', resolve));
rmSync(data, { recursive: true, force: true });
