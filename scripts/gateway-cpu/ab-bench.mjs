// Dev tool (not shipped, not tested): HTTP-thread CPU per agent-shaped request of two builds' `clawrl gateway`,
// measured in alternating blocks. Usage, from any directory, each build built (`npm run build`):
//   node scripts/gateway-cpu/ab-bench.mjs old=/path/to/old-worktree new=/path/to/new-worktree [--blocks=16] [--only=stream] [--shape=small] [--scale=4]
// --scale=N sends N times as many requests per block. --shape=small sends the bench's small requests (one short user message, a new session each), four times as many per block.
// The first build's bench harness (load generator, bench upstream) serves both. See docs/benchmarks.md.
import { readFileSync, readdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
const args = process.argv.slice(2);
const builds = Object.fromEntries(args.filter((a) => a.includes('=') && !a.startsWith('--')).map((a) => a.split('=')));
const blocks = Number(args.find((a) => a.startsWith('--blocks='))?.slice(9) ?? 12);
const shape = args.find((a) => a.startsWith('--shape='))?.slice(8) ?? 'agent';
const only = args.find((a) => a.startsWith('--only='))?.slice(7);
const scale = Number(args.find((a) => a.startsWith('--scale='))?.slice(8) ?? 1);
const harnessRoot = Object.values(builds)[0];
const { spawnReadyProcess } = await import(path.join(harnessRoot, 'dist/lab/bench/spawn-ready-process.js'));
const { runLoad } = await import(path.join(harnessRoot, 'dist/lab/bench/load-generator.js'));
const upstream = await spawnReadyProcess(path.join(harnessRoot, 'dist/lab/bench/run-bench-peer.js'), ['upstream']);
const threadNs = (pid) => Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[0]);
// Every thread's schedstat (V8's garbage-collection helpers included), in nanoseconds; threads that ended between reads are not counted.
const procNs = (pid) => readdirSync(`/proc/${pid}/task`).reduce((sum, task) => { try { return sum + Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]); } catch { return sum; } }, 0);
const gws = {};
for (const [label, root] of Object.entries(builds)) {
  const data = mkdtempSync(path.join(tmpdir(), 'gwab-'));
  const gw = await spawnReadyProcess(path.join(root, 'dist/cli/main.js'), ['gateway', '--store', 'sqlite', '--bus', 'memory', '--engine', 'vllm', '--upstream', upstream.url, '--model', 'bench-model', '--port', '0', '--data', data, '--concurrency-per-key', '4096', '--session-idle-timeout', '3600']);
  gws[label] = { gw, data, pid: gw.child.pid };
  await runLoad({ baseUrl: gw.url, shape: 'agent', stream: true, concurrency: 4, requests: 600, runName: `warm-${label}` });
}
const scenarios = [
  { name: 'stream c=1', stream: true, concurrency: 1, requests: scale * (shape === 'small' ? 256 : 64) },
  { name: 'stream c=32', stream: true, concurrency: 32, requests: scale * (shape === 'small' ? 768 : 192) },
  { name: 'json c=1', stream: false, concurrency: 1, requests: scale * (shape === 'small' ? 256 : 64) },
  { name: 'json c=32', stream: false, concurrency: 32, requests: scale * (shape === 'small' ? 768 : 192) },
].filter((s) => !only || s.name.startsWith(only));
const labels = Object.keys(builds);
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
let run = 0;
for (const s of scenarios) {
  const per = Object.fromEntries(labels.map((l) => [l, { thread: [], proc: [], rps: [] }]));
  for (let k = 0; k < blocks; k++) {
    for (const label of k % 2 ? [...labels].reverse() : labels) {
      const { gw, pid } = gws[label];
      run += 1;
      const t0 = threadNs(pid), p0 = procNs(pid);
      const r = await runLoad({ baseUrl: gw.url, shape, stream: s.stream, concurrency: s.concurrency, requests: s.requests, runName: `b${run}` });
      per[label].thread.push((threadNs(pid) - t0) / r.requests / 1e6);
      per[label].proc.push((procNs(pid) - p0) / r.requests / 1e6);
      per[label].rps.push(r.requests / r.durationMs * 1000);
    }
  }
  const line = labels.map((l) => `${l}: thread med ${median(per[l].thread).toFixed(3)} min ${Math.min(...per[l].thread).toFixed(3)} | proc med ${median(per[l].proc).toFixed(3)} | rps med ${median(per[l].rps).toFixed(0)}`).join('  ||  ');
  console.log(`${s.name.padEnd(12)} ${line}`);
}
for (const { gw, data } of Object.values(gws)) { await gw.stop(); rmSync(data, { recursive: true, force: true }); }
await upstream.stop();
