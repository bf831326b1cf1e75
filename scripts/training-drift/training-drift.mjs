// A quick measure of how fast the built-in model learns a simulated user's preference, and how soon
// its language decays, under the trainer's own loss and optimizer but without a server, judge or
// hints: each step samples 4 first replies (temperature 1), scores each +1 when the user's rules
// and the usability check both pass and −1 otherwise (a perfect judge), takes leave-one-out
// advantages (the trainer's `rewardBaselines`, `--reward-baseline batch`), one forward-backward per reply with the
// token-level loss, and one AdamW step with serve's settings. Every `--probe-every` steps it samples
// the first replies of 24 held-out messages and prints the usable-and-in-style rate, the in-style rate
// and the unusable share with reasons. A run of 10 steps takes 5–10 minutes on 2 cores, against
// 10–30 minutes for one run of `clawrl eval personalize`, and it repeats exactly (seeded).
// Figures: docs/results.md. Run after `npm run build`:
//
//   node scripts/training-drift/training-drift.mjs --user teacher --learning-rate 1e-3 --steps 8
//
// --advantages plain|positive|negative keeps the raw ±1, only the positive or only the negative
// leave-one-out advantages; --epsilon sets AdamW's ε; --freeze-embeddings zeroes the (tied)
// embedding's gradient; --half-life halves the rate every that many steps; --anchor α adds the
// trainer's anchor to the untrained model's --anchor-top-k likeliest tokens (`--anchor-coefficient`);
// --method combine adds OPD with the user's own hint on every rejected reply, over the student's
// --support-k likeliest tokens (the experiment's `--opd-support-k`), weighted by --opd-weight;
// --opd-token adds the sampled token's own clipped gap to the teacher on top of the support set.
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const { values } = parseArgs({
  options: {
    user: { type: 'string', default: 'teacher' },
    'learning-rate': { type: 'string', default: '1e-3' },
    epsilon: { type: 'string', default: '1e-8' },
    'half-life': { type: 'string', default: '0' },
    advantages: { type: 'string', default: 'leave-one-out' },
    'freeze-embeddings': { type: 'boolean', default: false },
    steps: { type: 'string', default: '8' },
    'probe-every': { type: 'string', default: '2' },
    seed: { type: 'string', default: '1' },
    'show-replies': { type: 'boolean', default: false },
    anchor: { type: 'string', default: '0' },
    'anchor-top': { type: 'string', default: '8' },
    method: { type: 'string', default: 'rl' },
    'support-k': { type: 'string', default: '4' },
    'opd-weight': { type: 'string', default: '1' },
    'opd-token': { type: 'boolean', default: false },
  },
});
const learningRate = Number(values['learning-rate']);
const halfLife = Number(values['half-life']);
const steps = Number(values.steps);
const probeEvery = Number(values['probe-every']);
const samplesPerStep = 4;
const anchor = Number(values.anchor);
const anchorTop = Number(values['anchor-top']);
const method = values.method;
if (method !== 'rl' && method !== 'combine') throw new Error('--method must be rl or combine');
const supportK = Number(values['support-k']);
const opdWeight = Number(values['opd-weight']);

const { initializeTensorBackend } = await import(`${root}dist/tensor/initialize-tensor-backend.js`);
const { loadTransformerFromFolder } = await import(`${root}dist/model/transformer.js`);
const { loadChatRenderer } = await import(`${root}dist/model/create-chat-renderer.js`);
const { firstMessages } = await import(`${root}dist/lab/corpus/corpus-generator.js`);
const { builtinUsers, satisfiesPreference } = await import(`${root}dist/builtin/user-preference.js`);
const { ruleHolds } = await import(`${root}dist/judge/text-rule.js`);
const { replyIncoherence } = await import(`${root}dist/builtin/reply-coherence.js`);
const { anchorKlOf, anchorOfTopLogprobs, createPolicyGradientLoss } = await import(`${root}dist/model/policy-gradient-loss.js`);
const { rewardBaselines } = await import(`${root}dist/core/rl/reward-baseline.js`);
const { decayedLearningRate } = await import(`${root}dist/core/rl/learning-rate-decay.js`);
const { buildSupportSet, clipValue, distillationGapsOf } = await import(`${root}dist/core/rl/build-samples.js`);
const { appendHint } = await import(`${root}dist/core/hint.js`);

await initializeTensorBackend({ backend: 'wasm' });
const modelDirectory = `${root}models/builtin-tiny`;
const renderer = await loadChatRenderer(modelDirectory);
const transformer = await loadTransformerFromFolder(modelDirectory, { trainParams: 'full' });
// The anchor's reference: the shipped weights, never trained.
const reference = anchor > 0 ? await loadTransformerFromFolder(modelDirectory, { trainParams: 'lora' }) : null;
const user = builtinUsers[values.user];
if (user === undefined) throw new Error(`--user must be one of ${Object.keys(builtinUsers).join(', ')}`);
const trainingMessages = firstMessages({ task: user.task, seed: `drift-${values.seed}`, count: steps * samplesPerStep });
const probeMessages = firstMessages({ task: user.task, seed: 'drift-probe', count: 24 });
const optimizer = transformer.createOptimizer({ learningRate, beta1: 0.9, beta2: 0.98, weightDecay: 0.1, maxGradientNorm: 1, epsilon: Number(values.epsilon) });
const lossOptions = { clipLow: 0.2, clipHigh: 0.28, importanceSamplingCap: 2, klCoefficient: 0, anchorCoefficient: anchor };

/** A `score`'s top lists in the shape `buildSupportSet` reads. */
const asTokens = (top) => top.map((position) => position.map((token) => ({ id: token.tokenId, logprob: token.logprob })));

async function reply(message, seed) {
  const promptTokenIds = renderer.renderPrompt([{ role: 'user', content: message }], []);
  const { sequences } = await transformer.sample({ promptTokenIds, n: 1, maxTokens: 300, temperature: 1, seed, stopTokenIds: [...renderer.stopTokenIds] });
  const [sequence] = sequences;
  const text = renderer.decode(sequence.tokenIds.filter((id) => !renderer.stopTokenIds.includes(id)));
  const unusable = replyIncoherence({ text, finishReason: sequence.finishReason }, message);
  return { message, promptTokenIds, tokenIds: sequence.tokenIds, logprobs: sequence.logprobs, text, unusable, inStyle: satisfiesPreference(user.preference, text) };
}

async function probe(step) {
  const reasons = {};
  let usableInStyle = 0;
  let inStyle = 0;
  // Per rule of the preference (by index), how many probe replies break it.
  const broken = user.preference.rules.map(() => 0);
  for (const [index, message] of probeMessages.entries()) {
    const result = await reply(message, 1000 + index);
    user.preference.rules.forEach((rule, ruleIndex) => {
      if (!ruleHolds(rule, result.text)) broken[ruleIndex] += 1;
    });
    if (values['show-replies'] && index < 4) console.log(JSON.stringify({ step, unusable: result.unusable, text: result.text.slice(0, 300) }));
    if (result.unusable !== null) reasons[result.unusable] = (reasons[result.unusable] ?? 0) + 1;
    if (result.inStyle) inStyle += 1;
    if (result.inStyle && result.unusable === null) usableInStyle += 1;
  }
  const share = (count) => Number((count / probeMessages.length).toFixed(2));
  const unusable = Object.values(reasons).reduce((sum, count) => sum + count, 0);
  console.log(JSON.stringify({ step, usableInStyle: share(usableInStyle), inStyle: share(inStyle), unusable: share(unusable), reasons, broken }));
}

/** Per reply, its token advantages: the trainer's own baseline (`plain`: none), then the sign filter if asked. */
function advantagesOf(batch, rewards) {
  const baselines = rewardBaselines(batch.map((_, index) => ({ method: 'rl', score: rewards[index] })), { kind: values.advantages === 'plain' ? 'none' : 'batch', groupNormalizeStd: false });
  const keep = { positive: (value) => Math.max(0, value), negative: (value) => Math.min(0, value) }[values.advantages] ?? ((value) => value);
  return batch.map((result, index) => result.tokenIds.map(() => keep(rewards[index] - (baselines[index]?.baseline ?? 0))));
}

await probe(0);
for (let step = 1; step <= steps; step += 1) {
  const batch = [];
  for (let index = 0; index < samplesPerStep; index += 1) batch.push(await reply(trainingMessages[(step - 1) * samplesPerStep + index], step * 100 + index));
  const rewards = batch.map((result) => (result.unusable === null && result.inStyle ? 1 : -1));
  const advantages = advantagesOf(batch, rewards);
  // combine: a rejected reply also gets OPD over the student's top k, its teacher the current policy
  // with the user's own hint appended (what a perfect judge would hint), as the judge builds it.
  const supports = [];
  for (const [index, result] of batch.entries()) {
    if (method !== 'combine' || rewards[index] > 0) {
      supports.push(null);
      continue;
    }
    const hinted = renderer.renderPrompt(appendHint([{ role: 'user', content: result.message }], user.hint), []);
    const teacher = await transformer.score({ promptTokenIds: hinted, continuationTokenIds: result.tokenIds, topLogprobs: 20 });
    const student = await transformer.score({ promptTokenIds: result.promptTokenIds, continuationTokenIds: result.tokenIds, topLogprobs: 20 });
    // As `core/rl/advantages.ts` forms them: w_opd·w_v·clip(Δ_v, ±1) on each support token with a gap.
    const support = buildSupportSet(asTokens(student.top), asTokens(teacher.top), supportK);
    supports.push(support.map((position) => {
      const kept = position.filter((token) => token.gap !== null);
      return { tokenIds: kept.map((token) => token.id), advantages: kept.map((token) => opdWeight * token.weight * clipValue(token.gap, 1)) };
    }));
    // --opd-token: the sampled token's own gap as well, clip(teacher − rollout, ±1), at full weight.
    if (values['opd-token']) {
      const gaps = distillationGapsOf(teacher.logprobs, result.logprobs).map((gap) => clipValue(gap, 1));
      advantages[index] = advantages[index].map((advantage, position) => advantage + opdWeight * gaps[position]);
    }
  }
  const sequences = batch.map((result, index) => ({
    rolloutLogprobs: result.logprobs,
    advantages: advantages[index],
    lossMask: result.tokenIds.map(() => 1),
    ...(supports[index] === null ? {} : { support: supports[index].map((target) => ({ advantages: target.advantages })) }),
  }));
  const batchLossTokens = sequences.reduce((sum, sequence) => sum + sequence.lossMask.length, 0);
  let anchorKl = 0;
  let anchorTokens = 0;
  for (const [index, result] of batch.entries()) {
    // The anchor as the trainer worker builds it: the untrained model's top tokens and their probabilities.
    const anchored = reference === null
      ? null
      : anchorOfTopLogprobs((await reference.score({ promptTokenIds: result.promptTokenIds, continuationTokenIds: result.tokenIds, topLogprobs: anchorTop })).top);
    const output = await transformer.forwardBackward({
      sequences: [{
        tokenIds: [...result.promptTokenIds, ...result.tokenIds],
        targetStart: result.promptTokenIds.length,
        ...(supports[index] === null ? {} : { supportTokenIds: supports[index].map((target) => target.tokenIds) }),
        ...(anchored === null ? {} : { anchor: anchored.anchor }),
      }],
      loss: createPolicyGradientLoss([{ ...sequences[index], ...(anchored === null ? {} : { anchorNegativeEntropy: anchored.negativeEntropy }) }], lossOptions, batchLossTokens),
      temperature: 1,
    });
    if (anchored !== null) {
      for (const value of anchorKlOf(anchored.negativeEntropy, output.anchorLogprobs[0])) anchorKl += value;
      anchorTokens += anchored.negativeEntropy.length;
    }
  }
  if (values['freeze-embeddings']) {
    const gradients = await transformer.gradients();
    const embedding = gradients.get('model.embed_tokens.weight');
    gradients.set('model.embed_tokens.weight', { shape: embedding.shape, data: new Float32Array(embedding.data.length) });
    transformer.setGradients(gradients);
  }
  const stepped = optimizer.step(decayedLearningRate(learningRate, step, { halfLifeSteps: halfLife > 0 ? halfLife : undefined }));
  console.log(JSON.stringify({ step, rewards, gradientNorm: Number(stepped.gradientNorm.toFixed(3)), ...(anchorTokens > 0 ? { anchorKl: Number((anchorKl / anchorTokens).toFixed(4)) } : {}) }));
  if (step % probeEvery === 0) await probe(step);
}
