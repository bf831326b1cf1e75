// Dev tool (not shipped, not tested): wall-clock latency at concurrency 1 of two (or more) builds' `clawrl gateway`
// against calling the bench upstream directly, in alternating blocks. Usage, from any directory, each build built:
//   node scripts/gateway-cpu/latency-ab.mjs old=/path/to/old-worktree new=/path/to/new-worktree [--blocks=10] [--requests=100] [--json] [--shape=small]
// Per block and target: the median latency; the report gives, per target, the median over blocks of the block
// medians and of (block median - the same block's direct median), with their min and max over blocks as the noise,
// and each later build's block median minus the first build's in the same block.
// The first build's bench harness (load generator, bench upstream) serves all. See docs/benchmarks.md.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
const args = process.argv.slice(2);
const builds = Object.fromEntries(args.filter((a) => a.includes('=') && !a.startsWith('--')).map((a) => a.split('=')));
const option = (name, fallback) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const blocks = Number(option('blocks', 10));
const requests = Number(option('requests', 100));
const shape = option('shape', 'agent');
const stream = !args.includes('--json');
const harnessRoot = Object.values(builds)[0];
const { spawnReadyProcess } = await import(path.join(harnessRoot, 'dist/lab/bench/spawn-ready-process.js'));
const { runLoad } = await import(path.join(harnessRoot, 'dist/lab/bench/load-generator.js'));
const upstream = await spawnReadyProcess(path.join(harnessRoot, 'dist/lab/bench/run-bench-peer.js'), ['upstream']);
const targets = { direct: { url: upstream.url } };
for (const [label, root] of Object.entries(builds)) {
  const data = mkdtempSync(path.join(tmpdir(), 'gwlat-'));
  const gw = await spawnReadyProcess(path.join(root, 'dist/cli/main.js'), ['gateway', '--store', 'sqlite', '--bus', 'memory', '--engine', 'vllm', '--upstream', upstream.url, '--model', 'bench-model', '--port', '0', '--data', data, '--concurrency-per-key', '4096', '--session-idle-timeout', '3600']);
  targets[label] = { url: gw.url, gw, data };
  await runLoad({ baseUrl: gw.url, shape: 'agent', stream: true, concurrency: 4, requests: 600, runName: `warm-${label}` });
}
await runLoad({ baseUrl: upstream.url, shape, stream, concurrency: 1, requests: 200, runName: 'warm-direct' });
const labels = Object.keys(targets);
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
const perBlock = Object.fromEntries(labels.map((l) => [l, []]));
let run = 0;
for (let k = 0; k < blocks; k++) {
  for (const label of k % 2 ? [...labels].reverse() : labels) {
    run += 1;
    const r = await runLoad({ baseUrl: targets[label].url, shape, stream, concurrency: 1, requests, runName: `lat${run}` });
    if (r.errors > 0) console.error(`${label}: ${r.errors} errors`);
    perBlock[label].push(median(r.latenciesMs));
  }
}
const f = (x) => x.toFixed(3);
for (const label of labels) {
  const meds = perBlock[label];
  const added = meds.map((m, i) => m - perBlock.direct[i]);
  console.log(`${label.padEnd(8)} p50 med ${f(median(meds))} [${f(Math.min(...meds))}..${f(Math.max(...meds))}]  added med ${f(median(added))} [${f(Math.min(...added))}..${f(Math.max(...added))}]`);
}
// Paired by block against the first build: what the others change, and in how many blocks they were faster.
const [first, ...others] = labels.filter((l) => l !== 'direct');
for (const label of others) {
  const diff = perBlock[label].map((m, i) => m - perBlock[first][i]);
  console.log(`${label} - ${first}: med ${f(median(diff))} [${f(Math.min(...diff))}..${f(Math.max(...diff))}], faster in ${diff.filter((d) => d < 0).length}/${diff.length} blocks`);
}
for (const { gw, data } of Object.values(targets)) { if (gw) { await gw.stop(); rmSync(data, { recursive: true, force: true }); } }
await upstream.stop();
