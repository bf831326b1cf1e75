// Dev tool (not shipped, not tested): what the SQLite store writes for agent-sized turns. Usage:
//   strace -f -e trace=pwrite64 -o /tmp/writes.txt node scripts/gateway-cpu/store-writes.mjs <built worktree>
// then count the pwrite64 lines and sum their byte counts. See docs/benchmarks.md.
// Records 8-turn sessions with 500-token responses and links each turn, through the real SQLite store.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
const root = process.argv[2];
const { createSqliteRecordStore } = await import(path.join(root, 'dist/stores/sqlite/create-sqlite-record-store.js'));
const dir = mkdtempSync(path.join(tmpdir(), 'sw-'));
const store = createSqliteRecordStore({ path: path.join(dir, 'r.db') });
const system = Array.from({ length: 3000 }, (_, i) => 100 + (i % 900));
const t0 = process.hrtime.bigint();
for (let s = 0; s < 40; s++) {
  const sid = `s${s}`;
  await store.upsertSession({ id: sid, tenant: null, user: null, at: s });
  let prompt = [...system, s];
  let previous = null;
  const messages = [{ role: 'system', content: 'You are an agent.' }];
  for (let k = 0; k < 8; k++) {
    const response = Array.from({ length: 500 }, (_, i) => 1000 + ((s * 8 + k) * 500 + i) % 30000);
    messages.push({ role: 'user', content: `session ${s} turn ${k} ${'tool output line. '.repeat(40)}` });
    const turn = { id: `${sid}-${k}`, sessionId: sid, type: 'main', status: 'completed', trainable: true, tenant: null, user: null, model: 'm', policyVersion: 0,
      messages: [...messages], tools: [], sampling: { temperature: 1, topP: 1, stop: [], n: 1, topLogprobs: 0 },
      promptTokenIds: prompt, responseTokenIds: response, logprobs: response.map(() => -0.5), response: { role: 'assistant', content: 'x'.repeat(2000) },
      finishReason: 'stop', timings: { startedAt: 1, firstTokenAt: 2, endedAt: 3 }, error: null, replyKey: `${sid}-${k}-reply` };
    await store.recordTurn(turn);
    if (previous) await store.linkNextState(previous, [{ role: 'user', content: `tool result ${'x'.repeat(800)}` }], 10 + k);
    previous = turn.id;
    messages.push({ role: 'assistant', content: 'x'.repeat(2000) });
    prompt = [...prompt, ...response, ...Array.from({ length: 300 }, (_, i) => 5000 + i)];
  }
}
await store.close();
rmSync(dir, { recursive: true, force: true });
console.log('ms', Number(process.hrtime.bigint() - t0) / 1e6);
