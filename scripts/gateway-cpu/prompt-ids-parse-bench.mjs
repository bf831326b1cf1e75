// Dev tool (not shipped, not tested): CPU time of parsing vLLM's first stream chunk (the prompt's ids) with and
// without the prompt-ids parser, in isolation. 32 interleaved sessions share a ~10k-id system prompt and add
// ~300 ids per turn for 8 turns, as agent sessions do. Usage, after `npm run build`:
//   node scripts/gateway-cpu/prompt-ids-parse-bench.mjs [--rounds=15]
import path from 'node:path';
import { fileURLToPath } from 'node:url';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { parseChatChunk } = await import(path.join(root, 'dist/engines/openai-compatible/chat-completions-api.js'));
const { createPromptIdsParser } = await import(path.join(root, 'dist/engines/openai-compatible/prompt-ids-parser.js'));
const rounds = Number(process.argv.find((a) => a.startsWith('--rounds='))?.slice(9) ?? 15);
const sessions = 32, turns = 8;
const system = Array.from({ length: 10_000 }, (_, i) => (i * 7919 + 13) % 151_000);
const ids = Array.from({ length: sessions }, () => [...system]);
const chunks = [];
for (let turn = 0; turn < turns; turn++) {
  for (let s = 0; s < sessions; s++) {
    for (let k = 0; k < 300; k++) ids[s].push((s * 1009 + turn * 97 + k * 31) % 151_000);
    const body = `{"id":"chatcmpl-${s}-${turn}","object":"chat.completion.chunk","created":1767225600,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"prompt_token_ids":${JSON.stringify(ids[s])}}`;
    // As the SSE reader hands it over: a slice of a larger read buffer.
    chunks.push({ turn, data: `data: ${body}\n\n`.slice(6, -2) });
  }
}
const cpu = () => { const u = process.cpuUsage(); return u.user + u.system; };
function measure(withParser) {
  const perTurn = Array(turns).fill(Infinity);
  let best = Infinity;
  for (let r = 0; r < rounds; r++) {
    const parser = withParser ? createPromptIdsParser() : undefined;
    const spent = Array(turns).fill(0);
    const t0 = cpu();
    for (const { turn, data } of chunks) {
      const t = process.hrtime.bigint();
      parseChatChunk(data, parser);
      spent[turn] += Number(process.hrtime.bigint() - t) / 1000;
    }
    best = Math.min(best, (cpu() - t0) / chunks.length);
    for (let t = 0; t < turns; t++) perTurn[t] = Math.min(perTurn[t], spent[t] / sessions);
  }
  return { best, perTurn };
}
measure(false); measure(true); // warm-up
const plain = measure(false), parsed = measure(true);
console.log(`first-chunk ids ${ids[0].length - 300 * (turns - 1)}..${ids[0].length}, ${chunks.length} chunks per round, min of ${rounds} rounds`);
console.log(`JSON.parse + schema: ${plain.best.toFixed(1)} us per chunk (CPU); per turn (wall) ${plain.perTurn.map((x) => x.toFixed(0)).join(' ')}`);
console.log(`prompt-ids parser:   ${parsed.best.toFixed(1)} us per chunk (CPU); per turn (wall) ${parsed.perTurn.map((x) => x.toFixed(0)).join(' ')}`);
